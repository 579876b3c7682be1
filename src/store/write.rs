//! Files written so that a crash never leaves a complete-looking one that
//! is not: a temporary name, then sync, rename, and a sync of the folder.
//! Bytes at hand or made piecewise ([`write_atomic`],
//! [`write_atomic_checked`]), a stream ([`AtomicFile`], the compressed
//! files), and the byte ranges of one table that the ranks of a build
//! write ([`write_parts`]). Every rename passes the fault points
//! `before-rename` and `after-rename` ([`crate::fault`]).

use crate::comm::{Comm, Part};
use crate::error::{AtPath, Result};
use crate::format::Checksum;
use crate::store::StoreError;
use std::fs::{self, File};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The checksum of a file, read sequentially.
pub fn checksum_file(path: &Path) -> Result<Checksum> {
    let mut f = File::open(path).at(path)?;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 22];
    loop {
        let k = f.read(&mut buf).at(path)?;
        if k == 0 {
            break;
        }
        h.update(&buf[..k]);
    }
    Ok(Checksum(h.digest()))
}

/// The temporary name a file is written under before it is renamed.
pub fn temp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

/// Writes `bytes` to `path` through a temporary file: write, fsync, rename,
/// fsync the folder. On failure the temporary file is removed and `path` is
/// left as it was.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_inner(path, bytes.len() as u64, None, |start, buf| {
        let start = start as usize;
        buf.copy_from_slice(&bytes[start..start + buf.len()]);
        Ok(())
    })
    .map(|_| ())
}

/// Like [`write_atomic`] for `len` bytes produced piecewise by `fill(start,
/// buf)`, but `path` is replaced only when the bytes
/// written have the checksum `expected` (as [`crate::format::Checksum`]
/// writes it); otherwise the temporary file is removed, `path` is left as
/// it was, and the error is an [`StoreError::Checksum`].
pub fn write_atomic_checked(
    path: &Path,
    len: u64,
    expected: Checksum,
    mut fill: impl FnMut(u64, &mut [u8]),
) -> Result<()> {
    write_atomic_inner(path, len, Some(expected), |start, buf| {
        fill(start, buf);
        Ok(())
    })
    .map(|_| ())
}

fn write_atomic_inner(
    path: &Path,
    len: u64,
    expected: Option<Checksum>,
    mut fill: impl FnMut(u64, &mut [u8]) -> Result<()>,
) -> Result<Checksum> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = File::create(&tmp).at(&tmp)?;
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let mut buf = vec![0u8; (len as usize).min(1 << 24)];
        let mut start = 0u64;
        while start < len {
            let k = (len - start).min(buf.len() as u64) as usize;
            fill(start, &mut buf[..k])?;
            h.update(&buf[..k]);
            f.write_all(&buf[..k]).at(&tmp)?;
            start += k as u64;
        }
        let sum = Checksum(h.digest());
        if let Some(expected) = expected {
            if sum != expected {
                return Err(StoreError::Checksum {
                    path: path.to_path_buf(),
                    what: "the bytes written, against the manifest's checksum; the file was not written",
                    expected,
                    found: sum,
                }.into());
            }
        }
        f.sync_all().at(&tmp)?;
        drop(f);
        rename_into_place(&tmp, path)?;
        Ok(sum)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Makes a rename in `dir` durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    File::open(dir).and_then(|d| d.sync_all()).at(dir)
}

/// Writes the table at `path` (`len` bytes), of which this rank fills the
/// range `part` by `fill(start, buf)`: one rank as [`write_atomic`]
/// does; with several, rank 0 creates the temporary file at its full
/// length, every rank writes and syncs its range, and rank 0 checksums the
/// whole file and renames it into place. Returns the checksum, on every
/// rank.
pub fn write_parts(
    path: &Path,
    len: u64,
    part: Part,
    comm: &dyn Comm,
    mut fill: impl FnMut(u64, &mut [u8]) -> Result<()>,
) -> Result<Checksum> {
    if comm.size() == 1 {
        return write_atomic_inner(path, len, None, fill);
    }
    let tmp = temp_path(path);
    let root = comm.rank() == 0;
    if root {
        let f = File::create(&tmp).at(&tmp)?;
        f.set_len(len).at(&tmp)?;
    }
    comm.barrier()?;
    {
        use std::os::unix::fs::FileExt;
        let f = fs::OpenOptions::new().write(true).open(&tmp).at(&tmp)?;
        let mut buf = vec![0u8; part.len().min(1 << 24) as usize];
        let mut at = part.lo;
        while at < part.hi {
            let k = (part.hi - at).min(buf.len() as u64) as usize;
            fill(at, &mut buf[..k])?;
            f.write_all_at(&buf[..k], at).at(&tmp)?;
            at += k as u64;
        }
        f.sync_all().at(&tmp)?;
    }
    comm.barrier()?;
    let mut sum = [0u64];
    if root {
        sum[0] = checksum_file(&tmp)?.0;
        rename_into_place(&tmp, path)?;
    }
    comm.broadcast(&mut sum)?;
    Ok(Checksum(sum[0]))
}

/// Renames the synced temporary file `tmp` to `path` and syncs the folder,
/// with the fault points around the rename.
fn rename_into_place(tmp: &Path, path: &Path) -> Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    crate::fault::point("before-rename", &name);
    fs::rename(tmp, path).at(path)?;
    sync_dir(path.parent().unwrap_or(Path::new(".")))?;
    crate::fault::point("after-rename", &name);
    Ok(())
}

/// A file written as a stream (a compressed table) through its temporary
/// name: [`create`](Self::create), write (it is `Write + Seek`, buffered),
/// [`sync`](Self::sync) (after which the temporary file at
/// [`temp_path`](Self::temp_path) may be read back and verified), then
/// [`commit`](Self::commit): sync, rename into place, sync of the folder.
/// Dropped without a commit, the temporary file is removed and the file
/// left as it was.
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    out: BufWriter<File>,
    committed: bool,
}

impl AtomicFile {
    /// Starts writing `path`: creates its temporary file.
    pub fn create(path: &Path) -> Result<AtomicFile> {
        let tmp = temp_path(path);
        let file = File::create(&tmp).at(&tmp)?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            out: BufWriter::with_capacity(1 << 20, file),
            committed: false,
        })
    }

    /// The temporary file written.
    pub fn temp_path(&self) -> &Path {
        &self.tmp
    }

    /// Writes out what is buffered and syncs the temporary file.
    pub fn sync(&mut self) -> Result<()> {
        self.out.flush().at(&self.tmp)?;
        self.out.get_ref().sync_all().at(&self.tmp)
    }

    /// Syncs the temporary file and renames it into place (its folder
    /// synced).
    pub fn commit(mut self) -> Result<()> {
        self.sync()?;
        rename_into_place(&self.tmp, &self.path)?;
        self.committed = true;
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.out.write_all(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.out.seek(pos)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

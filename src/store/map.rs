//! Reading a table's bytes: with `pread` ([`FileTable`], the safe way), or
//! mapped into memory ([`Mapped`], an `unsafe` opt-in).
//!
//! # The mapping contract
//!
//! A mapping is only as sound as the file under it: when another process
//! truncates a mapped file, the next read of a page past its new end
//! raises `SIGBUS` and kills the reader, from code that looks safe. So the
//! library maps a file only where the caller has promised that this cannot
//! happen ([`Mapped::open`] is an `unsafe fn`), and reads with `pread`
//! everywhere else: a [`FileTable`] whose file shrinks reports an
//! [`StoreError::Size`] for the entries that are gone.
//!
//! Who maps: [`crate::probe::Database::open_mapped`] (the caller's promise,
//! for probes at memory speed), and the builder and compressor, which map
//! the tables of a folder whose lock they hold (every writer of a folder
//! takes that lock; see [`super::FolderLock`]).

use crate::error::{AtPath, Result, SizeOf};
use crate::store::StoreError;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Opens `path` and checks that it holds `expected` bytes.
fn open_sized(path: &Path, expected: u64, of: SizeOf) -> Result<File> {
    let f = File::open(path).at(path)?;
    let found = f.metadata().at(path)?.len();
    if found != expected {
        return Err(StoreError::Size {
            path: path.to_path_buf(),
            expected,
            found,
            of,
        }
        .into());
    }
    Ok(f)
}

/// A table file read with `pread`: no mapping, so nothing another process
/// does to the file can crash the reader.
#[derive(Debug)]
pub struct FileTable {
    file: File,
    len: u64,
    path: PathBuf,
    /// Where its expected size came from.
    of: SizeOf,
}

impl FileTable {
    /// Opens `path`, which must be exactly `expected` bytes long (`of` says
    /// where that size comes from).
    pub fn open(path: &Path, expected: u64, of: SizeOf) -> Result<FileTable> {
        Ok(FileTable {
            file: open_sized(path, expected, of)?,
            len: expected,
            path: path.to_path_buf(),
            of,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its length when opened.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads `out.len()` bytes at `at`. A file that no longer holds them
    /// (shortened since it was opened) is an [`StoreError::Size`].
    pub fn read_at(&self, at: u64, out: &mut [u8]) -> Result<()> {
        use std::os::unix::fs::FileExt;
        match self.file.read_exact_at(out, at) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(StoreError::Size {
                path: self.path.clone(),
                expected: self.len,
                found: self.file.metadata().map_or(0, |m| m.len()),
                of: self.of,
            }
            .into()),
            Err(e) => Err(e).at(&self.path),
        }
    }

    /// The entry at index `g` (one signed byte per entry).
    #[inline]
    pub fn get(&self, g: u64) -> Result<i8> {
        let mut b = [0u8];
        self.read_at(g, &mut b)?;
        Ok(b[0] as i8)
    }
}

impl crate::codec::Bytes for FileTable {
    fn total_len(&self) -> u64 {
        self.len
    }
    fn read_at(&self, at: u64, out: &mut [u8]) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        self.file.read_exact_at(out, at)
    }
}

/// A table file mapped read-only. See the [mapping contract](self).
pub struct Mapped {
    map: memmap2::Mmap,
}

impl Mapped {
    /// Maps `path`, which must be exactly `expected` bytes long (`of` says
    /// where that size comes from).
    ///
    /// # Safety
    ///
    /// The file must not be truncated (or modified) while the mapping
    /// lives: a read of a page that is no longer in the file raises
    /// `SIGBUS`, which kills the process. Callers either own the file
    /// (hold the folder's lock, which every writer of a folder takes) or
    /// promise that nothing shortens it.
    pub unsafe fn open(path: &Path, expected: u64, of: SizeOf) -> Result<Mapped> {
        let f = open_sized(path, expected, of)?;
        // SAFETY: the caller's promise; the size was checked just above.
        let map = unsafe { memmap2::Mmap::map(&f) }.at(path)?;
        #[cfg(unix)]
        {
            let _ = map.advise(memmap2::Advice::Random);
        }
        Ok(Mapped { map })
    }
}

impl std::fmt::Debug for Mapped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mapped").field("len", &self.len()).finish()
    }
}

impl Mapped {
    /// Drops the mapping's resident pages from the process (they stay in the
    /// page cache and come back on the next access), so they no longer
    /// count as the process's memory.
    pub fn release(&self) {
        self.release_range(0, self.map.len());
    }

    /// [`Mapped::release`] for the bytes `start..start + len` only (a pass
    /// over a large table releases each window once it is done with it,
    /// so the pass never holds more than a window).
    pub fn release_range(&self, start: usize, len: usize) {
        let start = start.min(self.map.len());
        let len = len.min(self.map.len() - start);
        if len == 0 {
            return;
        }
        #[cfg(unix)]
        // SAFETY: the mapping is read-only and shared with the file, so
        // dropping its pages loses nothing: the next access reads the same
        // bytes from the page cache or the file.
        unsafe {
            let _ = self
                .map
                .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, len);
        }
    }
}

impl std::ops::Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

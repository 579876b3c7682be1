//! The one opener of a folder's tables: [`StoredTable`], table `kind` of
//! layer `n` where [`locate`](super::locate) finds it (the raw file, else
//! its compressed copy), with its size checked (a raw table
//! the layer's size, a listed compressed file the manifest's) and, for a
//! compressed copy, its header (rule set, layer, the table it holds),
//! read with `pread` or, as an explicit `unsafe` opt-in ([`Access`]),
//! mapped.

use super::map::{FileTable, Mapped};
use super::{expected_size, locate, open_compressed, Manifest, Stored};
use crate::codec::{CompressedTable, Header};
use crate::error::{Result, SizeOf};
use crate::format::{Checksum, Kind};
use crate::rules::Rules;
use crate::store::StoreError;
use std::path::{Path, PathBuf};

/// How a [`StoredTable`] reads its file: with `pread` ([`Access::READ`],
/// the safe way), or mapped (the caller's promise; see the [mapping
/// contract](super::map)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    raw: bool,
    compressed: bool,
}

impl Access {
    /// Every file read with `pread`.
    pub const READ: Access = Access {
        raw: false,
        compressed: false,
    };

    /// Every file mapped.
    ///
    /// # Safety
    ///
    /// As [`Mapped::open`]: no file opened this way may be truncated while
    /// the table lives (the caller holds the folder's lock, or promised).
    pub unsafe fn mapped() -> Access {
        Access {
            raw: true,
            compressed: true,
        }
    }

    /// Compressed copies mapped, raw tables read with `pread` (the
    /// builder's lower layers: a raw table's pages never count as the
    /// process's memory).
    ///
    /// # Safety
    ///
    /// As [`Access::mapped`].
    pub unsafe fn mapped_compressed() -> Access {
        Access {
            raw: false,
            compressed: true,
        }
    }
}

/// A file's bytes as a [`StoredTable`] reads them: with `pread`, or
/// mapped.
#[derive(Debug)]
pub enum TableFile {
    /// Read with `pread`.
    Read(FileTable),
    /// Mapped.
    Mapped(Mapped),
}

impl TableFile {
    fn open(path: &Path, len: u64, of: SizeOf, map: bool) -> Result<TableFile> {
        Ok(if map {
            // SAFETY: `map` is set only by an `Access` made by its unsafe
            // constructors, whose caller promised that the file is not
            // truncated meanwhile.
            TableFile::Mapped(unsafe { Mapped::open(path, len, of)? })
        } else {
            TableFile::Read(FileTable::open(path, len, of)?)
        })
    }

    fn len(&self) -> u64 {
        match self {
            TableFile::Read(f) => f.len(),
            TableFile::Mapped(m) => m.len() as u64,
        }
    }

    /// Drops a mapping's resident pages ([`Mapped::release`]); nothing
    /// for a file read with `pread`.
    pub fn release(&self) {
        if let TableFile::Mapped(m) = self {
            m.release();
        }
    }
}

impl crate::codec::Bytes for TableFile {
    fn total_len(&self) -> u64 {
        self.len()
    }
    fn read_at(&self, at: u64, out: &mut [u8]) -> std::io::Result<()> {
        match self {
            TableFile::Read(f) => crate::codec::Bytes::read_at(f, at, out),
            TableFile::Mapped(m) => crate::codec::Bytes::read_at(&**m, at, out),
        }
    }
    fn slice(&self) -> Option<&[u8]> {
        match self {
            TableFile::Read(_) => None,
            TableFile::Mapped(m) => Some(m),
        }
    }
}

/// A table of a folder, opened: raw, or its compressed copy decoded block
/// by block. It is the one opener of a folder's tables: where the table
/// is ([`locate`]: the raw file, else its compressed copy),
/// its size (a raw table the layer's, a listed compressed copy the
/// manifest's) and a compressed copy's header (rule set, layer, the table
/// held) are checked when it is opened; read with `pread` or, as an
/// explicit `unsafe` opt-in ([`Access`]), mapped.
#[derive(Debug)]
pub struct StoredTable {
    body: Body,
    path: PathBuf,
}

#[derive(Debug)]
enum Body {
    Raw(TableFile),
    Compressed(Box<CompressedTable<TableFile>>),
}

impl StoredTable {
    /// Opens table `kind` of layer `n` of `dir`, whose manifest is `m`
    /// (`None` for a folder without one), where [`locate`] finds it:
    /// `Ok(None)` where the folder does not hold it. A VU `scores.48`
    /// (no manifest) may hold one extra byte, the initial position, which
    /// is never read. See [`open`](Self::open) for `rules`.
    pub fn find(
        dir: &Path,
        m: Option<&Manifest>,
        n: u32,
        kind: Kind,
        rules: Option<&Rules>,
        access: Access,
    ) -> Result<Option<StoredTable>> {
        let Some(stored) = locate(dir, m, n, kind)? else {
            return Ok(None);
        };
        let (mut len, of) = expected_size(&stored, n)?;
        if m.is_none() && n == 48 && kind == Kind::Score && !stored.is_compressed() {
            let found = std::fs::metadata(stored.path()).map_or(0, |f| f.len());
            if found == len + 1 {
                len = found;
            }
        }
        Self::open_sized(&stored, n, kind, rules, access, len, of).map(Some)
    }

    /// Opens table `kind` of layer `n` where `stored` says it is. Its size
    /// is checked ([`expected_size`]); for a compressed copy, its header
    /// and block index, and with `rules` that it holds this table of this
    /// layer of `rules` (with the raw table's checksum the manifest lists,
    /// if it does); without `rules`, it serves `kind` if it holds it and
    /// the caller reads the [`header`](Self::header). No table is read
    /// whole.
    pub fn open(
        stored: &Stored,
        n: u32,
        kind: Kind,
        rules: Option<&Rules>,
        access: Access,
    ) -> Result<StoredTable> {
        let (len, of) = expected_size(stored, n)?;
        Self::open_sized(stored, n, kind, rules, access, len, of)
    }

    fn open_sized(
        stored: &Stored,
        n: u32,
        kind: Kind,
        rules: Option<&Rules>,
        access: Access,
        len: u64,
        of: SizeOf,
    ) -> Result<StoredTable> {
        let path = stored.path().to_path_buf();
        let body = match stored {
            Stored::Raw(_) => Body::Raw(TableFile::open(&path, len, of, access.raw)?),
            Stored::Compressed { listed, .. } => {
                let file = TableFile::open(&path, len, of, access.compressed)?;
                let t = match rules {
                    Some(r) => open_compressed(file, r, &path, n, kind, listed.as_ref())?,
                    None => {
                        let damaged = |e| StoreError::compressed(&path, e);
                        let mut t = CompressedTable::parse(file).map_err(damaged)?;
                        if t.header().holds(kind) {
                            t.serve(kind).map_err(damaged)?;
                        }
                        t
                    }
                };
                Body::Compressed(Box::new(t))
            }
        };
        Ok(StoredTable { body, path })
    }

    /// The entry at index `g`.
    #[inline]
    pub fn get(&self, g: u64) -> Result<i8> {
        match &self.body {
            Body::Raw(TableFile::Mapped(m)) => Ok(m[g as usize] as i8),
            Body::Raw(TableFile::Read(f)) => f.get(g),
            Body::Compressed(t) if t.header().is_dont_care() => {
                Err(StoreError::DontCare(self.path.clone()).into())
            }
            Body::Compressed(t) => t.get(g).map_err(|e| StoreError::compressed(&self.path, e)),
        }
    }

    /// The entries at `gs` (each in the table; fastest sorted) into `out`
    /// (as long): a compressed table decodes each block they touch once.
    pub fn get_many(&self, gs: &[u64], out: &mut [i8]) -> Result<()> {
        match &self.body {
            Body::Compressed(t) if t.header().is_dont_care() => {
                Err(StoreError::DontCare(self.path.clone()).into())
            }
            Body::Compressed(t) => t
                .get_many(gs, out)
                .map_err(|e| StoreError::compressed(&self.path, e)),
            _ => {
                for (o, &g) in out.iter_mut().zip(gs) {
                    *o = self.get(g)?;
                }
                Ok(())
            }
        }
    }

    /// Whether the file leaves "don't care" entries
    /// ([`crate::codec::v4::dont_care`]): [`get`](Self::get) and the reads
    /// of ranges refuse it ([`StoreError::DontCare`]); the probe reads its
    /// values with [`stored`](Self::stored) and resolves them.
    pub fn is_dont_care(&self) -> bool {
        self.header().is_some_and(|h| h.is_dont_care())
    }

    /// The value stored at index `g`: the entry, or for a don't-care file
    /// the value the probe resolves.
    #[inline]
    pub fn stored(&self, g: u64) -> Result<i8> {
        match &self.body {
            Body::Compressed(t) => t.get(g).map_err(|e| StoreError::compressed(&self.path, e)),
            _ => self.get(g),
        }
    }

    /// Every value stored, decompressed in parallel and checked against
    /// the header's checksum of the values stored.
    pub fn read_stored(&self) -> Result<Vec<u8>> {
        match &self.body {
            Body::Compressed(t) => t
                .decompress_all()
                .map_err(|e| StoreError::compressed(&self.path, e)),
            Body::Raw(_) => self.read_all(),
        }
    }

    /// Entries `start .. start + out.len()` into `out` (compressed blocks
    /// decompressed in parallel).
    pub fn read_at(&self, start: u64, out: &mut [u8]) -> Result<()> {
        match &self.body {
            Body::Raw(TableFile::Read(f)) => f.read_at(start, out),
            Body::Raw(TableFile::Mapped(m)) => {
                let s = start as usize;
                match m.get(s..s + out.len()) {
                    Some(b) => {
                        out.copy_from_slice(b);
                        Ok(())
                    }
                    None => Err(StoreError::Size {
                        path: self.path.clone(),
                        expected: start + out.len() as u64,
                        found: m.len() as u64,
                        of: SizeOf::Layer,
                    }
                    .into()),
                }
            }
            Body::Compressed(t) if t.header().is_dont_care() => {
                Err(StoreError::DontCare(self.path.clone()).into())
            }
            Body::Compressed(t) => t
                .decompress_range(start, out)
                .map_err(|e| StoreError::compressed(&self.path, e)),
        }
    }

    /// Reads the table in order, `step` entries at a time (the last step
    /// may be shorter): `f(start, entries)` for each.
    pub fn read_steps(
        &self,
        step: usize,
        mut f: impl FnMut(u64, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let total = self.len();
        let mut buf = vec![0u8; (total as usize).min(step.max(1))];
        let mut start = 0u64;
        while start < total {
            let k = (total - start).min(buf.len() as u64) as usize;
            self.read_at(start, &mut buf[..k])?;
            f(start, &buf[..k])?;
            start += k as u64;
        }
        Ok(())
    }

    /// The whole table in memory (a compressed copy decompressed).
    pub fn read_all(&self) -> Result<Vec<u8>> {
        match &self.body {
            Body::Compressed(t) if t.header().is_dont_care() => {
                Err(StoreError::DontCare(self.path.clone()).into())
            }
            Body::Compressed(t) => t
                .decompress_all()
                .map_err(|e| StoreError::compressed(&self.path, e)),
            Body::Raw(_) => {
                let mut v = vec![0u8; self.len() as usize];
                self.read_at(0, &mut v)?;
                Ok(v)
            }
        }
    }

    /// The `xxh3-64` of the raw table's bytes, as the manifest writes it
    /// (a compressed copy is decompressed as it is read).
    pub fn checksum(&self) -> Result<Checksum> {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        self.read_steps(crate::codec::STEP, |_, b| {
            h.update(b);
            Ok(())
        })?;
        Ok(Checksum(h.digest()))
    }

    /// Entries in the table (a raw table's bytes).
    pub fn len(&self) -> u64 {
        match &self.body {
            Body::Raw(f) => f.len(),
            Body::Compressed(t) => t.len(),
        }
    }

    /// Bytes of the file (a compressed copy's compressed bytes).
    pub fn file_len(&self) -> u64 {
        match &self.body {
            Body::Raw(f) => f.len(),
            Body::Compressed(t) => crate::codec::Bytes::total_len(t.source()),
        }
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The file read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether it is a compressed copy.
    pub fn is_compressed(&self) -> bool {
        matches!(self.body, Body::Compressed(_))
    }

    /// A compressed copy's header.
    pub fn header(&self) -> Option<&Header> {
        self.compressed().map(|t| t.header())
    }

    /// A compressed copy's blocks (for verifying it block by block).
    pub fn compressed(&self) -> Option<&CompressedTable<TableFile>> {
        match &self.body {
            Body::Compressed(t) => Some(t),
            Body::Raw(_) => None,
        }
    }

    /// A mapped raw table's bytes.
    pub fn mapped(&self) -> Option<&Mapped> {
        match &self.body {
            Body::Raw(TableFile::Mapped(m)) => Some(m),
            _ => None,
        }
    }

    /// A compressed copy's blocks, else the table back.
    pub fn into_compressed(self) -> std::result::Result<CompressedTable<TableFile>, StoredTable> {
        match self.body {
            Body::Compressed(t) => Ok(*t),
            body => Err(StoredTable {
                body,
                path: self.path,
            }),
        }
    }

    /// The mapping of a mapped raw table, else the table back.
    pub fn into_mapped(self) -> std::result::Result<Mapped, StoredTable> {
        match self.body {
            Body::Raw(TableFile::Mapped(m)) => Ok(m),
            body => Err(StoredTable {
                body,
                path: self.path,
            }),
        }
    }
}

//! The tables of one layer: a table's handle (bytes in memory or mapped, a
//! file read with `pread`, or compressed blocks) and how an entry is read
//! from it, the tables handed over in memory ([`LayerTables`]), and
//! [`lookup`] in a table of the file format.

use crate::codec::CompressedTable;
use crate::error::{Error, Result};
use crate::store::{FileTable, Mapped};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The tables of one layer handed to
/// [`Database::from_tables`](super::Database::from_tables), each in the
/// file format (one signed byte per Goedel index).
pub struct LayerTables<T> {
    /// `scores.n`.
    pub score: T,
    /// `lower.n` and `upper.n`, if any.
    pub envelope: Option<(T, T)>,
}

/// A table's bytes, from a mapping or a buffer.
pub(super) type Bytes = Box<dyn AsRef<[u8]> + Send + Sync>;

/// Where a compressed table's blocks are read from.
pub(super) enum Blocks {
    /// With `pread`.
    File(FileTable),
    /// Mapped ([`Database::open_mapped`](super::Database::open_mapped)).
    Mapped(Mapped),
}

impl crate::codec::Bytes for Blocks {
    fn total_len(&self) -> u64 {
        match self {
            Blocks::File(f) => f.len(),
            Blocks::Mapped(m) => m.len() as u64,
        }
    }
    fn read_at(&self, at: u64, out: &mut [u8]) -> std::io::Result<()> {
        match self {
            Blocks::File(f) => crate::codec::Bytes::read_at(f, at, out),
            Blocks::Mapped(m) => crate::codec::Bytes::read_at(&**m, at, out),
        }
    }
    fn slice(&self) -> Option<&[u8]> {
        match self {
            Blocks::File(_) => None,
            Blocks::Mapped(m) => Some(m),
        }
    }
}

/// One table: bytes in memory or mapped, a file read with `pread`, or
/// compressed blocks.
pub(super) enum ProbeTable {
    Raw(Bytes),
    File {
        file: FileTable,
        /// The whole table, once
        /// [`Database::table`](super::Database::table) asked for it.
        whole: OnceLock<Vec<u8>>,
    },
    Compressed {
        table: CompressedTable<Blocks>,
        path: PathBuf,
        /// The whole table, once asked for.
        whole: OnceLock<Vec<u8>>,
    },
}

impl ProbeTable {
    /// The entry at Goedel index `g`, which the caller checked is inside
    /// the layer.
    #[inline(always)]
    pub(super) fn get(&self, g: u64) -> Result<i8> {
        match self {
            ProbeTable::Raw(b) => Ok(lookup(&**b, g)),
            _ => self.get_slow(g),
        }
    }

    /// [`get`](Self::get) on a file or compressed table, kept out of line so
    /// that the in-memory path stays small enough to inline.
    #[inline(never)]
    fn get_slow(&self, g: u64) -> Result<i8> {
        match self {
            ProbeTable::Raw(b) => Ok(lookup(&**b, g)),
            ProbeTable::File { file, .. } => file.get(g),
            ProbeTable::Compressed { table, path, .. } => {
                table.get(g).map_err(|e| Error::compressed(path, e))
            }
        }
    }

    /// The bytes, for a table in memory or mapped.
    #[inline]
    pub(super) fn as_slice(&self) -> Option<&[u8]> {
        match self {
            ProbeTable::Raw(b) => Some((**b).as_ref()),
            _ => None,
        }
    }

    /// Whether it is a compressed table.
    pub(super) fn is_compressed(&self) -> bool {
        matches!(self, ProbeTable::Compressed { .. })
    }

    /// The bytes, reading a file or decompressing a compressed table into
    /// memory once.
    pub(super) fn whole(&self) -> Result<&[u8]> {
        let (whole, bytes) = match self {
            ProbeTable::Raw(b) => return Ok((**b).as_ref()),
            ProbeTable::File { file, whole } => {
                if let Some(w) = whole.get() {
                    return Ok(w);
                }
                let mut v = vec![0u8; file.len() as usize];
                file.read_at(0, &mut v)?;
                (whole, v)
            }
            ProbeTable::Compressed { table, path, whole } => {
                if let Some(w) = whole.get() {
                    return Ok(w);
                }
                let v = table
                    .decompress_all()
                    .map_err(|e| Error::compressed(path.clone(), e))?;
                (whole, v)
            }
        };
        // Another thread may have won the race; either copy is the same.
        let _ = whole.set(bytes);
        Ok(whole.get().expect("just set"))
    }
}

/// The tables of one layer.
pub(super) struct Layer {
    pub(super) score: ProbeTable,
    pub(super) envelope: Option<(ProbeTable, ProbeTable)>,
}

/// The value at Goedel index `g` of a table in the file format.
#[inline]
pub fn lookup<T: AsRef<[u8]> + ?Sized>(table: &T, g: u64) -> i8 {
    table.as_ref()[g as usize] as i8
}

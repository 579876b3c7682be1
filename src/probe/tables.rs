//! The tables of one layer: a table's handle (bytes in memory or mapped,
//! or a [`StoredTable`]) and how an entry is read
//! from it, the tables handed over in memory ([`LayerTables`]), and
//! [`lookup`] in a table of the file format.

use crate::error::{Result, SizeOf};
use crate::store::StoreError;
use crate::store::StoredTable;
use std::borrow::Cow;
use std::sync::OnceLock;

/// The tables of one layer handed to
/// [`Database::from_tables`](super::Database::from_tables), each in the
/// file format (one signed byte per Goedel index).
pub struct LayerTables<T> {
    /// `scores.n`.
    pub score: T,
    /// `lower.n` and `upper.n`, if any.
    pub envelope: Option<(T, T)>,
    /// `dist.n`, if any.
    pub dist: Option<T>,
}

/// A table's bytes, from a mapping or a buffer.
pub(super) type Bytes = Box<dyn AsRef<[u8]> + Send + Sync>;

/// One table: bytes in memory or mapped raw, or a file of the folder
/// read with `pread` or through its compressed blocks.
pub(super) enum ProbeTable {
    Raw(Bytes),
    Stored {
        table: StoredTable,
        /// The whole table, once
        /// [`Database::table`](super::Database::table) asked for it.
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
            ProbeTable::Stored { table, .. } => table.get(g),
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

    /// The entries at `gs` (each in the table; fastest sorted) into `out`
    /// (as long).
    pub(super) fn get_many(&self, gs: &[u64], out: &mut [i8]) -> Result<()> {
        match self {
            ProbeTable::Raw(b) => {
                for (o, &g) in out.iter_mut().zip(gs) {
                    *o = lookup(&**b, g);
                }
                Ok(())
            }
            ProbeTable::Stored { table, .. } => table.get_many(gs, out),
        }
    }

    /// Whether it is a format 4 file that leaves "don't care" entries
    /// (the probe resolves them, [`super::resolve`]).
    #[inline]
    pub(super) fn is_dont_care(&self) -> bool {
        matches!(self, ProbeTable::Stored { table, .. } if table.is_dont_care())
    }

    /// The value stored at Goedel index `g` (for a don't-care file, not
    /// yet resolved).
    #[inline]
    pub(super) fn stored(&self, g: u64) -> Result<i8> {
        match self {
            ProbeTable::Raw(b) => Ok(lookup(&**b, g)),
            ProbeTable::Stored { table, .. } => table.stored(g),
        }
    }

    /// Copies entries `start .. start + out.len()` into `out`: from
    /// memory, with `pread`, or decompressing the blocks that hold them;
    /// nothing of the table is kept.
    pub(super) fn read_range(&self, start: u64, out: &mut [u8]) -> Result<()> {
        match self {
            ProbeTable::Stored { table, whole } => match whole.get() {
                Some(w) => copy_range(w, start, out),
                None => table.read_at(start, out),
            },
            ProbeTable::Raw(b) => copy_range((**b).as_ref(), start, out),
        }
    }

    /// The bytes: borrowed when in memory or mapped (or already read
    /// whole), else read into a buffer of the caller's, nothing kept.
    pub(super) fn read(&self) -> Result<Cow<'_, [u8]>> {
        match self {
            ProbeTable::Raw(b) => Ok(Cow::Borrowed((**b).as_ref())),
            ProbeTable::Stored { table, whole } => match whole.get() {
                Some(w) => Ok(Cow::Borrowed(w)),
                None => table.read_all().map(Cow::Owned),
            },
        }
    }

    /// Whether it is a compressed table.
    pub(super) fn is_compressed(&self) -> bool {
        matches!(self, ProbeTable::Stored { table, .. } if table.is_compressed())
    }

    /// The bytes, reading a file or decompressing a compressed table into
    /// memory once.
    pub(super) fn whole(&self) -> Result<&[u8]> {
        let (table, whole) = match self {
            ProbeTable::Raw(b) => return Ok((**b).as_ref()),
            ProbeTable::Stored { table, whole } => (table, whole),
        };
        if let Some(w) = whole.get() {
            return Ok(w);
        }
        let bytes = table.read_all()?;
        // Another thread may have won the race; either copy is the same.
        let _ = whole.set(bytes);
        Ok(whole.get().expect("just set"))
    }
}

/// `out` from `bytes` at `start`, or the size error of a range past the end.
pub(super) fn copy_range(bytes: &[u8], start: u64, out: &mut [u8]) -> Result<()> {
    let s = start as usize;
    match bytes.get(s..s + out.len()) {
        Some(b) => {
            out.copy_from_slice(b);
            Ok(())
        }
        None => Err(StoreError::Size {
            path: "(memory)".into(),
            expected: start + out.len() as u64,
            found: bytes.len() as u64,
            of: SizeOf::Layer,
        }
        .into()),
    }
}

/// The tables of one layer.
pub(super) struct Layer {
    pub(super) score: ProbeTable,
    pub(super) envelope: Option<(ProbeTable, ProbeTable)>,
    pub(super) dist: Option<ProbeTable>,
}

/// The value at Goedel index `g` of a table in the file format.
#[inline]
pub fn lookup<T: AsRef<[u8]> + ?Sized>(table: &T, g: u64) -> i8 {
    table.as_ref()[g as usize] as i8
}

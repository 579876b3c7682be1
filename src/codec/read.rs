//! Reading compressed tables: the dispatch on the format version (4 read,
//! the retired 1, 2 and 3 refused), [`CompressedTable`], random access by
//! entry (a probe decodes its block up to the entry, see [`super::v4`]),
//! batches of probes, whole ranges decoded and checked in parallel,
//! verification, and the sequential [`Reader`].

use super::header::u32_at;
use super::v4::{self, V4_HEADER_BYTES};
use super::{Bytes, CompressError, Expected, Family, Header, FORMAT_VERSION, MAGIC, STEP};
use crate::format::Kind;
use rayon::prelude::*;
use std::io::{self, Read};

/// The bytes of magic and version: what a file must hold for its version
/// to be known.
const VERSION_END: usize = 12;
/// The bytes of the header: what is read of a file before its version is
/// known.
const LONGEST_HEADER: usize = V4_HEADER_BYTES;

/// Reads and checks the header's fields from its first bytes `b` of a
/// file of `len` bytes: the magic and version here (a retired version is
/// refused), the rest by the version's family.
fn read_fields(b: &[u8], len: u64) -> Result<Header, CompressError> {
    if b.len() < VERSION_END {
        return Err(CompressError::Truncated {
            part: "header",
            needed: V4_HEADER_BYTES as u64,
            found: len,
        });
    }
    if b[0..8] != MAGIC {
        return Err(CompressError::BadMagic);
    }
    match u32_at(b, 8) {
        FORMAT_VERSION => v4::read_header(b, len),
        version @ 1..=3 => Err(CompressError::Retired { version }),
        v => Err(CompressError::UnsupportedVersion(v)),
    }
}

/// Reads and checks the header from the first bytes `b` of a file of
/// `len` bytes, and that `b` and the file hold what comes before the
/// blocks (checked by the family when the reader opens the table).
fn parse_header(b: &[u8], len: u64) -> Result<Header, CompressError> {
    let header = read_fields(b, len)?;
    let data_start = header.data_start();
    if len < data_start || (b.len() as u64) < data_start {
        return Err(CompressError::Truncated {
            part: "block index",
            needed: data_start,
            found: len,
        });
    }
    Ok(header)
}

/// A compressed table over its bytes (a mapping, a buffer, a file read
/// with `pread`; see [`Bytes`]): random access by entry, each probe
/// decoding its block up to the entry (on from where this thread's last
/// probe of the block stopped).
pub struct CompressedTable<B> {
    bytes: B,
    header: Header,
    /// The sparse index, block counts and model of the scores.
    layout: Box<v4::Layout>,
    /// The full form's envelope (`lower` and `upper`).
    envelope: Option<Box<v4::Envelope>>,
}

impl<B> std::fmt::Debug for CompressedTable<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompressedTable")
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

impl<B: Bytes> CompressedTable<B> {
    /// Reads and checks header and block index (see the module's
    /// documentation); the blocks are checked when decompressed.
    pub fn parse(bytes: B) -> Result<Self, CompressError> {
        let len = bytes.total_len();
        let (header, meta) = match bytes.slice() {
            Some(b) => {
                let h = parse_header(b, len)?;
                let meta = b[..h.data_start() as usize].to_vec();
                (h, meta)
            }
            None => {
                let read = |n: u64| -> Result<Vec<u8>, CompressError> {
                    let mut v = vec![0u8; n as usize];
                    bytes
                        .read_at(0, &mut v)
                        .map_err(|e| CompressError::Read(e.kind()))?;
                    Ok(v)
                };
                let head = read(len.min(LONGEST_HEADER as u64))?;
                let start = read_fields(&head, len)?.data_start();
                if len < start {
                    return Err(CompressError::Truncated {
                        part: "block index",
                        needed: start,
                        found: len,
                    });
                }
                let meta = read(start)?;
                (parse_header(&meta, len)?, meta)
            }
        };
        let Family::V4(f) = &header.family;
        let layout = Box::new(v4::Layout::open(&header, f, &meta, len)?);
        let envelope = match f.envelope {
            Some(_) => Some(Box::new(v4::Envelope::open(&header, f, &meta)?)),
            None => None,
        };
        Ok(CompressedTable {
            bytes,
            header,
            layout,
            envelope,
        })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Entries in the table.
    pub fn len(&self) -> u64 {
        self.header.entries
    }

    /// Whether the table holds no entry (never for a parsed table).
    pub fn is_empty(&self) -> bool {
        self.header.entries == 0
    }

    /// Number of blocks.
    pub fn blocks(&self) -> u64 {
        self.header.blocks()
    }

    /// What the table reads its compressed bytes from.
    pub(crate) fn source(&self) -> &B {
        &self.bytes
    }

    /// Checks that the file holds the table described by `want`, and
    /// serves that table from now on (a file of the full form holds all
    /// three tables of its layer; it serves the scores until told
    /// otherwise).
    pub fn check_table(&mut self, want: &Expected) -> Result<(), CompressError> {
        self.serve(want.kind)?;
        let h = &self.header;
        if h.rules != want.rules {
            return Err(CompressError::Mismatch {
                field: "rule set",
                expected: want.rules.name.into(),
                found: h.rules.name.into(),
            });
        }
        if h.kind != want.kind {
            return Err(CompressError::Mismatch {
                field: "table",
                expected: want.kind.stem().into(),
                found: h.kind.stem().into(),
            });
        }
        if h.layer != want.layer {
            return Err(CompressError::Mismatch {
                field: "layer",
                expected: want.layer.to_string(),
                found: h.layer.to_string(),
            });
        }
        if h.raw_checksum() != want.raw_xxh3 {
            return Err(CompressError::Mismatch {
                field: "checksum of the uncompressed table",
                expected: want.raw_xxh3.to_string(),
                found: h.raw_checksum().to_string(),
            });
        }
        Ok(())
    }

    /// Serves table `kind` from now on, if the file holds it (a file of the
    /// full form holds all three tables of its layer and serves the scores
    /// until told otherwise); else [`CompressError::Mismatch`].
    pub fn serve(&mut self, kind: Kind) -> Result<(), CompressError> {
        if !self.header.holds(kind) {
            return Err(CompressError::Mismatch {
                field: "table",
                expected: kind.stem().into(),
                found: self.header.kind.stem().into(),
            });
        }
        self.header.kind = kind;
        Ok(())
    }

    /// The entry at Goedel index `g`: its block's group verified (once for
    /// this opened table) and the block decoded up to it, on from where
    /// this thread's last probe of the block stopped; in a file without
    /// group checks, the block decoded whole and checked (see
    /// [`super::v4`]). A damaged block is an error, never a value.
    pub fn get(&self, g: u64) -> Result<i8, CompressError> {
        if g >= self.header.entries {
            return Err(CompressError::OutOfRange {
                index: g,
                entries: self.header.entries,
            });
        }
        match (&self.envelope, self.header.kind) {
            (Some(e), k @ (Kind::Lower | Kind::Upper)) => e.get(&self.layout, &self.bytes, g, k),
            _ => self.layout.get(&self.bytes, g),
        }
    }

    /// The entries at Goedel indices `gs` into `out` (`out[k]` the entry
    /// at `gs[k]`; only as many as the shorter of the two holds).
    /// Fastest on sorted indices: the probes of a block are decoded
    /// together, several blocks at once (the scores; the envelope's
    /// tables are read through [`get`](Self::get)).
    pub fn get_many(&self, gs: &[u64], out: &mut [i8]) -> Result<(), CompressError> {
        let gs = &gs[..gs.len().min(out.len())];
        let out = &mut out[..gs.len()];
        if let Some(&g) = gs.iter().find(|&&g| g >= self.header.entries) {
            return Err(CompressError::OutOfRange {
                index: g,
                entries: self.header.entries,
            });
        }
        if self.envelope.is_none() || self.header.kind == Kind::Score {
            return self.layout.get_many(&self.bytes, gs, out);
        }
        for (o, &g) in out.iter_mut().zip(gs) {
            *o = self.get(g)?;
        }
        Ok(())
    }

    /// Decompresses entries `start .. start + out.len()` into `out`, every
    /// block it touches decoded whole and checked, in parallel on the rayon
    /// pool.
    pub fn decompress_range(&self, start: u64, out: &mut [u8]) -> Result<(), CompressError> {
        if out.is_empty() {
            return Ok(());
        }
        let end = start.saturating_add(out.len() as u64);
        if end > self.header.entries {
            return Err(CompressError::OutOfRange {
                index: end - 1,
                entries: self.header.entries,
            });
        }
        // Parts of about a million entries, decoded in parallel.
        out.par_chunks_mut(1 << 20)
            .enumerate()
            .try_for_each(|(k, part)| {
                let at = start + (k as u64) * (1 << 20);
                match (&self.envelope, self.header.kind) {
                    (Some(e), kind @ (Kind::Lower | Kind::Upper)) => {
                        e.decode_range(&self.layout, &self.bytes, at, part, kind)
                    }
                    _ => self.layout.decode_range(&self.bytes, at, part),
                }
            })
    }

    /// The whole table, decompressed in parallel and checked against the
    /// header's checksum.
    pub fn decompress_all(&self) -> Result<Vec<u8>, CompressError> {
        let mut out = vec![0u8; self.header.entries as usize];
        self.decompress_range(0, &mut out)?;
        let found = crate::format::Checksum::of(&out);
        if found != self.header.stored_checksum() {
            return Err(CompressError::ChecksumMismatch {
                expected: self.header.stored_checksum(),
                found,
            });
        }
        Ok(out)
    }

    /// Decompresses every block (a step at a time, in parallel) and checks
    /// the header's checksum of the uncompressed table; with `raw`, also
    /// compares every byte with it. `progress` gets the blocks done.
    pub fn verify(
        &self,
        raw: Option<&[u8]>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<(), CompressError> {
        self.verify_steps(raw, progress, &|_, _| {})
    }

    /// [`CompressedTable::verify`], calling `done(start, len)` once the
    /// entries `start..start + len` are checked (in order, a step at a
    /// time), so the caller can release what it mapped for them.
    pub(crate) fn verify_steps(
        &self,
        raw: Option<&[u8]>,
        progress: &(dyn Fn(u64) + Sync),
        done: &dyn Fn(usize, usize),
    ) -> Result<(), CompressError> {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let bs = self.header.block_size as u64;
        let step = (STEP as u64).div_ceil(bs).max(1) * bs;
        let mut buf = vec![0u8; step.min(self.header.entries) as usize];
        let mut start = 0u64;
        while start < self.header.entries {
            let k = (self.header.entries - start).min(step) as usize;
            self.decompress_range(start, &mut buf[..k])?;
            h.update(&buf[..k]);
            if let Some(raw) = raw {
                let theirs = raw.get(start as usize..).unwrap_or(&[]);
                if theirs.get(..k) != Some(&buf[..k]) {
                    let i = (0..k).find(|&i| theirs.get(i) != Some(&buf[i]));
                    return Err(CompressError::DiffersFromRaw {
                        index: start + i.unwrap_or(k) as u64,
                    });
                }
            }
            done(start as usize, k);
            progress((k as u64).div_ceil(bs));
            start += k as u64;
        }
        let found = crate::format::Checksum(h.digest());
        if found != self.header.stored_checksum() {
            return Err(CompressError::ChecksumMismatch {
                expected: self.header.stored_checksum(),
                found,
            });
        }
        Ok(())
    }

    /// A sequential reader of the uncompressed table.
    pub fn into_reader(self) -> Reader<B> {
        Reader {
            table: self,
            buf: Vec::new(),
            at: 0,
            next: 0,
        }
    }
}

/// Reads a compressed table's entries in order ([`io::Read`]), a step of
/// blocks at a time, decompressed in parallel. Corruption is an
/// [`io::ErrorKind::InvalidData`] error wrapping the [`CompressError`].
pub struct Reader<B> {
    table: CompressedTable<B>,
    buf: Vec<u8>,
    at: usize,
    next: u64,
}

impl<B: Bytes> Reader<B> {
    /// The table read.
    pub fn table(&self) -> &CompressedTable<B> {
        &self.table
    }
}

impl<B: Bytes> Read for Reader<B> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at == self.buf.len() {
            let entries = self.table.header.entries;
            if self.next >= entries {
                return Ok(0);
            }
            let k = (entries - self.next).min(STEP as u64) as usize;
            self.buf.resize(k, 0);
            self.table
                .decompress_range(self.next, &mut self.buf)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            self.next += k as u64;
            self.at = 0;
        }
        let k = out.len().min(self.buf.len() - self.at);
        out[..k].copy_from_slice(&self.buf[self.at..self.at + k]);
        self.at += k;
        Ok(k)
    }
}

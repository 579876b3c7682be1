//! Reading compressed tables of any version: [`CompressedTable`], random
//! access by entry through the per-thread cache of decoded blocks, whole
//! ranges decoded in parallel, verification, and the sequential
//! [`Reader`]. What differs by family (where a block lies, how it
//! decodes) is dispatched to the family's module.

use super::cache::{with_cache, Cache, Decoders, Slot, CACHE_BLOCKS, CACHE_BYTES};
use super::header::{self, LONGEST_HEADER};
use super::v3::{self, Layout};
use super::v4;
use super::zstd_blocks::Frames;
use super::{Bytes, CompressError, Expected, Family, Header, STEP};
use crate::format::Kind;
use rayon::prelude::*;
use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};

/// Source of distinct table ids for the per-thread block cache.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// A compressed table over its bytes (a mapping, a buffer, a file read
/// with `pread`; see [`Bytes`]): random access by entry, one block
/// decompressed per miss of the per-thread cache.
pub struct CompressedTable<B> {
    bytes: B,
    header: Header,
    id: u64,
    /// What the format's family needs to find and decode a block.
    family: Blocks,
}

/// What a reader keeps to find and decode the blocks of each family of
/// formats (a new family is one more variant).
enum Blocks {
    /// Versions 1 and 2: the block index and the dictionary.
    Zstd(Frames),
    /// Version 3: the block index and the models.
    V3(Box<Layout>),
    /// Version 4: the sparse index, block counts and model, and the full
    /// form's envelope.
    V4(Box<v4::Layout>, Option<Box<v4::Envelope>>),
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
                let h = header::parse(b, len)?;
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
                let start = header::read_fields(&head, len)?.data_start();
                if len < start {
                    return Err(CompressError::Truncated {
                        part: "block index",
                        needed: start,
                        found: len,
                    });
                }
                let meta = read(start)?;
                (header::parse(&meta, len)?, meta)
            }
        };
        let family = match &header.family {
            Family::Zstd(_) => Blocks::Zstd(Frames::open(&header, meta, len)?),
            Family::V3(_) => Blocks::V3(Box::new(v3::layout(&header, &meta, len)?)),
            Family::V4(f) => {
                let l = v4::Layout::open(&header, f, &meta, len)?;
                let e = match f.envelope {
                    Some(_) => Some(Box::new(v4::Envelope::open(&header, f, &meta)?)),
                    None => None,
                };
                Blocks::V4(Box::new(l), e)
            }
        };
        Ok(CompressedTable {
            bytes,
            header,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            family,
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
    /// serves that table from now on (a version 3 or 4 file of the full form
    /// holds all three tables of its layer; it serves the scores until
    /// told otherwise).
    pub fn check_table(&mut self, want: &Expected) -> Result<(), CompressError> {
        if let Family::V3(_) | Family::V4(_) = self.header.family {
            self.serve(want.kind)?;
        }
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
    /// full form, version 3 or 4, holds all three tables of its layer and
    /// serves the scores until told otherwise); else
    /// [`CompressError::Mismatch`].
    pub fn serve(&mut self, kind: Kind) -> Result<(), CompressError> {
        if !self.header.holds(kind) {
            return Err(CompressError::Mismatch {
                field: "table",
                expected: kind.stem().into(),
                found: self.header.kind.stem().into(),
            });
        }
        if self.header.kind != kind {
            self.header.kind = kind;
            self.id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Calls `f` with the compressed bytes of block `i`: borrowed from a
    /// table in memory, else read into `buf`.
    fn with_frame<T>(
        &self,
        i: u64,
        buf: &mut Vec<u8>,
        f: impl FnOnce(&[u8]) -> Result<T, CompressError>,
    ) -> Result<T, CompressError> {
        let out_of_range = || CompressError::OutOfRange {
            index: i * self.header.block_size as u64,
            entries: self.header.entries,
        };
        let (s, e) = match &self.family {
            Blocks::V3(l) => {
                if i >= self.header.blocks() {
                    return Err(out_of_range());
                }
                let (s, a, b) = l.block(i);
                (s, s + a as u64 + b as u64)
            }
            Blocks::Zstd(f) => f.span(i).ok_or_else(out_of_range)?,
            Blocks::V4(..) => return Err(out_of_range()),
        };
        // Checked when parsed; checked again so that a file changed since
        // cannot index out of bounds.
        let gone = || CompressError::OffsetOutOfRange {
            block: i,
            offset: s,
            reason: "no longer lies inside the file".into(),
        };
        if let Some(b) = self.bytes.slice() {
            let frame = usize::try_from(s)
                .ok()
                .zip(usize::try_from(e).ok())
                .and_then(|(s, e)| b.get(s..e))
                .ok_or_else(gone)?;
            return f(frame);
        }
        if e < s || e > self.bytes.total_len() {
            return Err(gone());
        }
        buf.resize((e - s) as usize, 0);
        self.bytes.read_at(s, buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => gone(),
            k => CompressError::Read(k),
        })?;
        f(buf)
    }

    /// Decompresses block `i` into `out`, which must be the block's length
    /// (versions 1 to 3; a version 4 file's blocks are read by entry).
    pub fn decompress_block(&self, i: u64, out: &mut [u8]) -> Result<(), CompressError> {
        if i >= self.blocks() {
            return Err(CompressError::OutOfRange {
                index: i.saturating_mul(self.header.block_size as u64),
                entries: self.header.entries,
            });
        }
        with_cache(|c| {
            let Cache { dec, frame, .. } = c;
            self.with_frame(i, frame, |z| self.decode(dec, z, i, out))
        })
    }

    /// The entry at Goedel index `g`, through the per-thread block cache.
    pub fn get(&self, g: u64) -> Result<i8, CompressError> {
        if g >= self.header.entries {
            return Err(CompressError::OutOfRange {
                index: g,
                entries: self.header.entries,
            });
        }
        if let Blocks::V4(l, e) = &self.family {
            return match (e, self.header.kind) {
                (Some(e), k @ (Kind::Lower | Kind::Upper)) => e.get(l, &self.bytes, g, k),
                _ => l.get(&self.bytes, g),
            };
        }
        let bs = self.header.block_size as u64;
        let (block, at) = (g / bs, (g % bs) as usize);
        with_cache(|c| {
            c.clock += 1;
            let now = c.clock;
            if let Some(s) = c
                .slots
                .iter_mut()
                .find(|s| s.table == self.id && s.block == block)
            {
                s.used = now;
                return Ok(s.data[at] as i8);
            }
            let len = self.header.block_len(block);
            let cap = (CACHE_BYTES / self.header.block_size as usize).clamp(1, CACHE_BLOCKS);
            let k = if c.slots.len() < cap {
                c.slots.push(Slot {
                    table: u64::MAX,
                    block: 0,
                    used: 0,
                    data: Vec::new(),
                });
                c.slots.len() - 1
            } else {
                (0..c.slots.len())
                    .min_by_key(|&k| c.slots[k].used)
                    .expect("a cache holds a slot")
            };
            let Cache {
                dec, slots, frame, ..
            } = c;
            let s = &mut slots[k];
            s.table = u64::MAX;
            s.data.resize(len, 0);
            self.with_frame(block, frame, |z| self.decode(dec, z, block, &mut s.data))?;
            s.table = self.id;
            s.block = block;
            s.used = now;
            Ok(s.data[at] as i8)
        })
    }

    /// The entries at Goedel indices `gs` into `out` (`out[k]` the entry
    /// at `gs[k]`; only as many as the shorter of the two holds).
    /// Fastest on sorted indices: a format 4 file decodes the probes of a
    /// block together and several blocks at once; other formats read
    /// through [`get`](Self::get)'s cache.
    pub fn get_many(&self, gs: &[u64], out: &mut [i8]) -> Result<(), CompressError> {
        let gs = &gs[..gs.len().min(out.len())];
        let out = &mut out[..gs.len()];
        if let Some(&g) = gs.iter().find(|&&g| g >= self.header.entries) {
            return Err(CompressError::OutOfRange {
                index: g,
                entries: self.header.entries,
            });
        }
        if let (Blocks::V4(l, None), _) | (Blocks::V4(l, _), Kind::Score) =
            (&self.family, self.header.kind)
        {
            return l.get_many(&self.bytes, gs, out);
        }
        for (o, &g) in out.iter_mut().zip(gs) {
            *o = self.get(g)?;
        }
        Ok(())
    }

    /// Decompresses entries `start .. start + out.len()` into `out`, blocks
    /// in parallel on the rayon pool.
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
        if let Blocks::V4(l, e) = &self.family {
            // Parts of about a million entries, decoded in parallel.
            return out
                .par_chunks_mut(1 << 20)
                .enumerate()
                .try_for_each(|(k, part)| {
                    let at = start + (k as u64) * (1 << 20);
                    match (e, self.header.kind) {
                        (Some(e), kind @ (Kind::Lower | Kind::Upper)) => {
                            e.decode_range(l, &self.bytes, at, part, kind)
                        }
                        _ => l.decode_range(&self.bytes, at, part),
                    }
                });
        }
        let bs = self.header.block_size as u64;
        // Split `out` into the parts of each block it covers.
        let mut parts: Vec<(u64, usize, &mut [u8])> = Vec::new();
        let mut rest = out;
        let mut g = start;
        while !rest.is_empty() {
            let block = g / bs;
            let at = (g - block * bs) as usize;
            let take = (self.header.block_len(block) - at).min(rest.len());
            let (part, tail) = rest.split_at_mut(take);
            parts.push((block, at, part));
            rest = tail;
            g += take as u64;
        }
        // Version 3 decodes two whole blocks at a time.
        let pairs = matches!(self.family, Blocks::V3(_)) && self.header.kind == Kind::Score;
        let mut groups: Vec<Vec<(u64, usize, &mut [u8])>> = Vec::new();
        for p in parts {
            let whole = p.1 == 0 && p.2.len() == self.header.block_len(p.0);
            match groups.last_mut() {
                Some(g)
                    if pairs
                        && whole
                        && g.len() == 1
                        && g[0].1 == 0
                        && g[0].2.len() == self.header.block_len(g[0].0) =>
                {
                    g.push(p)
                }
                _ => groups.push(vec![p]),
            }
        }
        groups.into_par_iter().try_for_each(|mut g| {
            with_cache(|c| {
                let Cache {
                    dec,
                    scratch,
                    frame,
                    frame2,
                    ..
                } = c;
                if let (Blocks::V3(l), 2) = (&self.family, g.len()) {
                    let (b, rest) = g.split_at_mut(1);
                    let ((i0, _, o0), (i1, _, o1)) = (&mut b[0], &mut rest[0]);
                    let (s0, s1) = (*i0 * bs, *i1 * bs);
                    return self.with_frame(*i0, frame, |z0| {
                        self.with_frame(*i1, frame2, |z1| {
                            v3::decode_two(
                                l,
                                &mut dec.v3,
                                self.header.kind,
                                [(*i0, z0, s0, &mut **o0), (*i1, z1, s1, &mut **o1)],
                            )
                        })
                    });
                }
                let (block, at, part) = g.pop().expect("a part");
                let len = self.header.block_len(block);
                self.with_frame(block, frame, |z| {
                    if at == 0 && part.len() == len {
                        self.decode(dec, z, block, part)
                    } else {
                        scratch.resize(len, 0);
                        self.decode(dec, z, block, scratch)?;
                        part.copy_from_slice(&scratch[at..at + part.len()]);
                        Ok(())
                    }
                })
            })
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

    /// Decodes block `block` from its bytes `z` into `out` (the block's
    /// length) with this thread's decoders: by the file's family.
    fn decode(
        &self,
        dec: &mut Decoders,
        z: &[u8],
        block: u64,
        out: &mut [u8],
    ) -> Result<(), CompressError> {
        match &self.family {
            Blocks::Zstd(f) => f.decode(&mut dec.zstd, z, block, out),
            Blocks::V3(l) => {
                let start = block * self.header.block_size as u64;
                v3::decode_one(l, &mut dec.v3, self.header.kind, start, z, block, out)
            }
            Blocks::V4(..) => Err(CompressError::OutOfRange {
                index: block,
                entries: self.header.blocks(),
            }),
        }
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

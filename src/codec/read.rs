//! Reading compressed tables: random access by entry through a per-thread
//! cache of decompressed blocks, and sequential reading.

use super::v3::{self, Layout};
use super::{
    header_fields, parse_header, u64_at, CompressError, Expected, Header, HEADER_BYTES, STEP,
};
use crate::format::Kind;
use rayon::prelude::*;
use std::cell::RefCell;
use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use zstd::zstd_safe;

/// The per-thread cache of decompressed blocks holds at most this many...
const CACHE_BLOCKS: usize = 8;
/// ... and at most this many bytes (but always one block).
const CACHE_BYTES: usize = 1 << 20;

/// Source of distinct table ids for the per-thread block cache.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// Where a compressed table's bytes come from: a buffer or a mapping
/// (anything `AsRef<[u8]>`, whose frames are read in place), or a file
/// read with `pread` ([`crate::store::FileTable`], whose frames are read
/// into a per-thread buffer).
pub trait Bytes: Sync {
    /// Bytes in all.
    fn total_len(&self) -> u64;
    /// Reads `out.len()` bytes at `at`.
    fn read_at(&self, at: u64, out: &mut [u8]) -> io::Result<()>;
    /// All the bytes, when they are in memory.
    fn slice(&self) -> Option<&[u8]> {
        None
    }
}

impl<T: AsRef<[u8]> + Sync + ?Sized> Bytes for T {
    fn total_len(&self) -> u64 {
        self.as_ref().len() as u64
    }
    fn read_at(&self, at: u64, out: &mut [u8]) -> io::Result<()> {
        let b = self.as_ref();
        let s = usize::try_from(at).unwrap_or(usize::MAX);
        match s.checked_add(out.len()).and_then(|e| b.get(s..e)) {
            Some(src) => {
                out.copy_from_slice(src);
                Ok(())
            }
            None => Err(io::ErrorKind::UnexpectedEof.into()),
        }
    }
    fn slice(&self) -> Option<&[u8]> {
        Some(self.as_ref())
    }
}

/// A compressed table over its bytes (a mapping, a buffer, a file read
/// with `pread`; see [`Bytes`]): random access by entry, one block
/// decompressed per miss of the per-thread cache.
pub struct CompressedTable<B> {
    bytes: B,
    /// Header, block index and dictionary (bytes `0..data_start`).
    meta: Vec<u8>,
    header: Header,
    id: u64,
    /// The dictionary, prepared for decompression.
    ddict: Option<zstd_safe::DDict<'static>>,
    /// Version 3: block index and models.
    layout: Option<Box<Layout>>,
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
                let head = read(len.min(v3::HEADER_BYTES.max(HEADER_BYTES) as u64))?;
                let start = header_fields(&head, len)?.data_start();
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
        let layout = match header.version {
            3 => Some(Box::new(v3::layout(&header, &meta, len)?)),
            _ => None,
        };
        let ddict = match header.dictionary {
            0 => None,
            _ => {
                let d = &meta[header.index_end() as usize..header.data_start() as usize];
                Some(
                    zstd_safe::DDict::try_create(d).ok_or_else(|| CompressError::HeaderField {
                        field: "dictionary",
                        reason: "zstd cannot load it".into(),
                    })?,
                )
            }
        };
        Ok(CompressedTable {
            bytes,
            meta,
            header,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            ddict,
            layout,
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
    /// serves that table from now on (a version 3 file of the full form
    /// holds all three tables of its layer; it serves the scores until
    /// told otherwise).
    pub fn check_table(&mut self, want: &Expected) -> Result<(), CompressError> {
        if self.header.version == 3 {
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
                expected: want.raw_xxh3.clone(),
                found: h.raw_checksum(),
            });
        }
        Ok(())
    }

    /// Serves table `kind` from now on, if the file holds it (a version 3
    /// file of the full form holds all three tables of its layer and
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
        let (s, e) = match &self.layout {
            Some(l) => {
                if i >= self.header.blocks() {
                    return Err(out_of_range());
                }
                let (s, a, b) = l.block(i);
                (s, s + a as u64 + b as u64)
            }
            None => {
                let at = HEADER_BYTES + 8 * i as usize;
                let m = &self.meta;
                let (Some(s), Some(e)) = (m.get(at..at + 8), m.get(at + 8..at + 16)) else {
                    return Err(out_of_range());
                };
                (u64_at(s, 0), u64_at(e, 0))
            }
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

    /// Decompresses block `i` into `out`, which must be the block's length.
    pub fn decompress_block(&self, i: u64, out: &mut [u8]) -> Result<(), CompressError> {
        if i >= self.blocks() {
            return Err(CompressError::OutOfRange {
                index: i.saturating_mul(self.header.block_size as u64),
                entries: self.header.entries,
            });
        }
        with_cache(|c| {
            let Cache {
                dctx, frame, v3, ..
            } = c;
            self.with_frame(i, frame, |z| self.decode(dctx, v3, z, i, out))
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
                dctx,
                slots,
                frame,
                v3,
                ..
            } = c;
            let s = &mut slots[k];
            s.table = u64::MAX;
            s.data.resize(len, 0);
            self.with_frame(block, frame, |z| {
                self.decode(dctx, v3, z, block, &mut s.data)
            })?;
            s.table = self.id;
            s.block = block;
            s.used = now;
            Ok(s.data[at] as i8)
        })
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
        let pairs = self.layout.is_some() && self.header.kind == Kind::Score;
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
                    dctx,
                    scratch,
                    frame,
                    frame2,
                    v3,
                    ..
                } = c;
                if let (Some(l), 2) = (&self.layout, g.len()) {
                    let (b, rest) = g.split_at_mut(1);
                    let ((i0, _, o0), (i1, _, o1)) = (&mut b[0], &mut rest[0]);
                    return self.with_frame(*i0, frame, |z0| {
                        self.with_frame(*i1, frame2, |z1| {
                            self.decode2(l, v3, [(*i0, z0, &mut **o0), (*i1, z1, &mut **o1)])
                        })
                    });
                }
                let (block, at, part) = g.pop().expect("a part");
                let len = self.header.block_len(block);
                self.with_frame(block, frame, |z| {
                    if at == 0 && part.len() == len {
                        self.decode(dctx, v3, z, block, part)
                    } else {
                        scratch.resize(len, 0);
                        self.decode(dctx, v3, z, block, scratch)?;
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
        let found = crate::format::checksum(&out);
        if found != self.header.raw_checksum() {
            return Err(CompressError::ChecksumMismatch {
                expected: self.header.raw_checksum(),
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
        let found = format!("{:016x}", h.digest());
        if found != self.header.raw_checksum() {
            return Err(CompressError::ChecksumMismatch {
                expected: self.header.raw_checksum(),
                found,
            });
        }
        Ok(())
    }

    /// Decodes block `block` from its bytes `z` into `out` (the block's
    /// length): a zstd frame, or the streams of a version 3 block.
    fn decode(
        &self,
        dctx: &mut Option<zstd_safe::DCtx<'static>>,
        scratch: &mut V3Scratch,
        z: &[u8],
        block: u64,
        out: &mut [u8],
    ) -> Result<(), CompressError> {
        let Some(l) = &self.layout else {
            return decode(dctx, self.ddict.as_ref(), z, block, out);
        };
        let [s0, _] = &mut scratch.0;
        let b = self.v3_block(l, s0, z, block, out);
        v3::decode_blocks(l.shape, &l.models, [b]).map_err(|(_, e)| stream_error(block, e))
    }

    /// Decodes two version 3 blocks at once (their coders' steps overlap)
    /// from their bytes into their outputs.
    fn decode2(
        &self,
        l: &Layout,
        scratch: &mut V3Scratch,
        blocks: [(u64, &[u8], &mut [u8]); 2],
    ) -> Result<(), CompressError> {
        let [s0, s1] = &mut scratch.0;
        let [(i0, z0, o0), (i1, z1, o1)] = blocks;
        let b0 = self.v3_block(l, s0, z0, i0, o0);
        let b1 = self.v3_block(l, s1, z1, i1, o1);
        v3::decode_blocks(l.shape, &l.models, [b0, b1])
            .map_err(|(j, e)| stream_error(if j == 0 { i0 } else { i1 }, e))
    }

    /// What [`v3::decode_blocks`] needs to decode block `block` (bytes `z`)
    /// into `out`, the table served, with scratch space `s`.
    fn v3_block<'a>(
        &self,
        l: &Layout,
        s: &'a mut [Vec<u8>; 3],
        z: &'a [u8],
        block: u64,
        out: &'a mut [u8],
    ) -> v3::Block<'a> {
        let (slen, elen) = l.stream_lens(block);
        let start = block * self.header.block_size as u64;
        let n = out.len();
        for v in s.iter_mut() {
            v.resize(n, 0);
        }
        let [sym, raw, other] = s;
        let (scores, envelope) = (&z[..slen], &z[slen..slen + elen]);
        let (sym, raw, other) = (&mut sym[..], &mut raw[..], &mut other[..]);
        match self.header.kind {
            Kind::Score => v3::Block {
                start,
                scores,
                envelope: None,
                sym,
                raw: out,
                lower: &mut [],
                upper: &mut [],
            },
            Kind::Lower => v3::Block {
                start,
                scores,
                envelope: Some(envelope),
                sym,
                raw,
                lower: out,
                upper: other,
            },
            Kind::Upper => v3::Block {
                start,
                scores,
                envelope: Some(envelope),
                sym,
                raw,
                lower: other,
                upper: out,
            },
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
/// One decompressed block in the per-thread cache.
struct Slot {
    table: u64,
    block: u64,
    used: u64,
    data: Vec<u8>,
}

/// Scratch space of a version 3 decoder: per block decoded at once, the
/// score symbols, the raw scores and the envelope table not served.
#[derive(Default)]
struct V3Scratch([[Vec<u8>; 3]; 2]);

/// A version 3 block that does not decode.
fn stream_error(block: u64, e: super::ans::AnsError) -> CompressError {
    CompressError::Stream {
        block,
        message: e.to_string(),
    }
}

/// Per thread: a zstd context, a few recently used blocks, scratch space.
struct Cache {
    v3: V3Scratch,
    dctx: Option<zstd_safe::DCtx<'static>>,
    slots: Vec<Slot>,
    clock: u64,
    scratch: Vec<u8>,
    /// A block's compressed bytes, for tables read with `pread`.
    frame: Vec<u8>,
    /// Another block's, when two are decoded at once.
    frame2: Vec<u8>,
}

thread_local! {
    static CACHE: RefCell<Cache> = const {
        RefCell::new(Cache {
            v3: V3Scratch([
                [Vec::new(), Vec::new(), Vec::new()],
                [Vec::new(), Vec::new(), Vec::new()],
            ]),
            dctx: None,
            slots: Vec::new(),
            clock: 0,
            scratch: Vec::new(),
            frame: Vec::new(),
            frame2: Vec::new(),
        })
    };
}

/// Runs `f` on this thread's cache (on a fresh one while the thread is
/// being torn down).
fn with_cache<T>(f: impl FnOnce(&mut Cache) -> T) -> T {
    let mut f = Some(f);
    let r = CACHE.try_with(|c| match c.try_borrow_mut() {
        Ok(mut c) => Some((f.take().expect("called once"))(&mut c)),
        Err(_) => None,
    });
    match r {
        Ok(Some(t)) => t,
        _ => {
            let mut c = Cache {
                v3: V3Scratch::default(),
                dctx: None,
                slots: Vec::new(),
                clock: 0,
                scratch: Vec::new(),
                frame: Vec::new(),
                frame2: Vec::new(),
            };
            (f.take().expect("called once"))(&mut c)
        }
    }
}

/// Decompresses one frame (with the table's dictionary, if any) into `out`,
/// which it must fill exactly.
fn decode(
    dctx: &mut Option<zstd_safe::DCtx<'static>>,
    ddict: Option<&zstd_safe::DDict<'static>>,
    frame: &[u8],
    block: u64,
    out: &mut [u8],
) -> Result<(), CompressError> {
    let zerr = |message: String| CompressError::Zstd { block, message };
    if dctx.is_none() {
        *dctx = Some(
            zstd_safe::DCtx::try_create()
                .ok_or_else(|| zerr("cannot create a decompression context".into()))?,
        );
    }
    let d = dctx.as_mut().expect("just made");
    let got = match ddict {
        Some(dd) => d.decompress_using_ddict(out, frame, dd),
        None => d.decompress(out, frame),
    }
    .map_err(|code| zerr(zstd_safe::get_error_name(code).to_string()))?;
    if got != out.len() {
        return Err(CompressError::BlockLength {
            block,
            expected: out.len() as u64,
            found: got as u64,
        });
    }
    Ok(())
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

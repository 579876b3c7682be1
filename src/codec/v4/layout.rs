//! Reading a format 4 file: its sparse index, block counts and model,
//! checked when it is opened ([`Layout::open`]); a probe that verifies
//! its block's group once and decodes the block up to its entry, kept in
//! a per-thread cache; batches and ranges of whole blocks decoded and
//! checked.

use super::coder::PAD;
use super::context::{contexts, value};
use super::decode::{Decoding, Lane, LANES};
use super::encode::{block_check, group_check};
use super::header::{
    data_start, index_end, meta_checksum, meta_end, models_end, V4Fields, V4_HEADER_BYTES,
};
use super::index;
use super::model::Model;
use super::shape::Shape;
use crate::codec::header::u64_at;
use crate::codec::{Bytes, CompressError, Header};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Source of distinct ids of opened tables, for the per-thread cache.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);
/// Blocks a thread keeps decoded (direct-mapped by table and block).
const CACHED_BLOCKS: usize = 1024;

/// The index, counts and model of a format 4 file.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The layer's shape.
    pub shape: Shape,
    /// This table's id in the per-thread cache.
    id: u64,
    entries: u64,
    sparse_bits: u32,
    block_bytes: usize,
    data_start: u64,
    /// Per `2^sparse_bits` entries: the block of the first (high 32 bits)
    /// and its place in it.
    sparse: Vec<u64>,
    /// Entries per block.
    pub(super) counts: Vec<u16>,
    /// The model, as the decoder reads it.
    dec: Decoding,
    /// The group checks, if the file stores them.
    groups: Option<Groups>,
}

/// Block `b` does not decode to what it was written from.
fn damaged(b: usize) -> CompressError {
    CompressError::Stream {
        block: b as u64,
        message: "the block does not end in the state its values call for: it is damaged".into(),
    }
}

fn field(field: &'static str, reason: String) -> CompressError {
    CompressError::HeaderField { field, reason }
}

/// A block a thread has decoded, whole and checked or (its group
/// checked) up to an entry, and can go on decoding.
struct Cached {
    /// The table (`u64::MAX`: none) and the block.
    table: u64,
    block: usize,
    /// The block's symbols decoded so far.
    sym: Vec<u8>,
    /// The block's bytes followed by [`PAD`] zeros.
    pad: Vec<u8>,
    /// Where its decoding stands.
    lane: Option<Lane>,
}

/// A thread's decoded blocks, and scratch for a block's values.
struct Cache {
    blocks: Vec<Cached>,
    vals: Vec<u8>,
}

/// The group checks of a file that stores them: per group of `blocks`
/// score blocks its check, and which groups this opened table has verified.
#[derive(Clone, Debug)]
struct Groups {
    blocks: u64,
    checks: Vec<u32>,
    verified: Arc<[AtomicU64]>,
}

thread_local! {
    static CACHE: RefCell<Cache> = const {
        RefCell::new(Cache { blocks: Vec::new(), vals: Vec::new() })
    };
}

impl Layout {
    /// Reads and checks what a version 4 file holds before its blocks
    /// (`b`, at least its first `data_start` bytes, of a file of `len`
    /// bytes): the checksum of header, index, counts and model, the zero
    /// padding, that the counts add up to the layer within the header's
    /// cap, that the sparse index agrees with them, the model, and that
    /// the file ends with its last block.
    pub fn open(h: &Header, f: &V4Fields, b: &[u8], len: u64) -> Result<Layout, CompressError> {
        let start = data_start(h, f);
        let total = start + f.blocks_bytes();
        if len != total || (b.len() as u64) < start {
            return Err(if len < total {
                CompressError::Truncated {
                    part: "blocks",
                    needed: total,
                    found: len,
                }
            } else {
                CompressError::OffsetOutOfRange {
                    block: f.blocks,
                    offset: total,
                    reason: format!("ends the blocks, but the file has {len} bytes"),
                }
            });
        }
        let meta_end = meta_end(h, f) as usize;
        let stored = u64_at(b, 88);
        let found = meta_checksum(b, &b[V4_HEADER_BYTES..meta_end]);
        if stored != found {
            return Err(CompressError::IndexChecksum {
                expected: stored,
                found,
            });
        }
        if b[meta_end..start as usize].iter().any(|&x| x != 0) {
            return Err(field(
                "reserved",
                "the padding before the blocks is not zero".into(),
            ));
        }
        let ns = f.sparse_entries(h.entries) as usize;
        let (sparse, counts) = index::read(
            b,
            V4_HEADER_BYTES,
            ns,
            f.blocks as usize,
            h.block_size,
            h.entries,
            f.sparse_bits,
            "blocks",
        )?;
        let shape = Shape::new(h.layer);
        let models_end = models_end(h, f) as usize;
        let models = &b[index_end(h, f) as usize..models_end];
        let model = match f.envelope {
            None => Model::read(models, shape),
            // The envelope's model follows (see `envelope_layout`).
            Some(_) => Model::read_from(models, contexts(shape), shape.alphabet).map(|m| m.0),
        }
        .map_err(|reason| field("model", reason))?;
        Ok(Layout {
            shape,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            entries: h.entries,
            sparse_bits: f.sparse_bits,
            block_bytes: f.block_bytes as usize,
            data_start: start,
            sparse,
            counts,
            dec: Decoding::new(shape, &model),
            groups: f.group_checks.then(|| Groups {
                blocks: f.group_blocks(),
                checks: b[models_end..meta_end]
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
                verified: (0..f.groups().div_ceil(64))
                    .map(|_| AtomicU64::new(0))
                    .collect(),
            }),
        })
    }

    /// Blocks.
    pub fn blocks(&self) -> u64 {
        self.counts.len() as u64
    }

    /// The block of entry `g` (which must be in the table), its first
    /// entry and the entry's place in it.
    #[inline]
    pub fn locate(&self, g: u64) -> (usize, u64, usize) {
        index::locate(&self.sparse, &self.counts, self.sparse_bits, g)
    }

    /// The values of entries `gs` (each in the table) into `out` (as
    /// long): the probes of a block in a row answered from one decoding of
    /// it, up to `LANES` (4) blocks decoded at once, each checked as
    /// [`Layout::get`] checks it (its group verified and the block decoded
    /// up to its last entry probed; without group checks, decoded whole
    /// and checked). Fastest on sorted entries.
    pub fn get_many<B: Bytes>(
        &self,
        bytes: &B,
        gs: &[u64],
        out: &mut [i8],
    ) -> Result<(), CompressError> {
        let bb = self.block_bytes;
        let most = self.counts.iter().copied().max().unwrap_or(0) as usize;
        let mut pad = vec![0u8; LANES * (bb + PAD)];
        let mut sym = vec![0u8; LANES * most];
        let mut vals = Vec::with_capacity(most);
        let mut done = 0;
        while done < gs.len() {
            // Up to LANES runs of probes, each of one block: its block,
            // first entry, where it ends in `gs` and the most it decodes.
            let mut runs = [(0usize, 0u64, 0usize, 0usize); LANES];
            let mut n = 0;
            let mut at = done;
            while n < LANES && at < gs.len() {
                let (b, first, off) = self.locate(gs[at]);
                let count = self.counts[b] as usize;
                let mut last = off;
                at += 1;
                while at < gs.len() && gs[at] >= first && gs[at] - first < count as u64 {
                    last = last.max((gs[at] - first) as usize);
                    at += 1;
                }
                // With group checks, the block decoded up to its last
                // entry probed; without, whole (to be checked).
                let upto = match &self.groups {
                    Some(groups) => {
                        self.verify_group(bytes, groups, b)?;
                        last + 1
                    }
                    None => count,
                };
                self.read_block(bytes, b, &mut pad[n * (bb + PAD)..][..bb])?;
                runs[n] = (b, first, at, upto);
                n += 1;
            }
            let mut lanes = Vec::with_capacity(LANES);
            for (j, p) in pad.chunks(bb + PAD).take(n).enumerate() {
                lanes.push(self.start_lane(runs[j].0, p, runs[j].1)?);
            }
            let padded: Vec<&[u8]> = pad.chunks(bb + PAD).take(n).collect();
            let mut syms: Vec<&mut [u8]> = sym
                .chunks_mut(most)
                .zip(&runs[..n])
                .map(|(s, r)| &mut s[..r.3])
                .collect();
            self.dec.blocks(&mut lanes, &padded, &mut syms);
            for (j, r) in runs[..n].iter().enumerate() {
                // Decoded whole (always without group checks): checked.
                if r.3 == self.counts[r.0] as usize {
                    self.checked_values(r.0, &lanes[j], syms[j], &padded[j][..bb], &mut vals)?;
                }
                for k in done..r.2 {
                    let s = syms[j][(gs[k] - r.1) as usize];
                    out[k] = value(self.shape, s) as i8;
                }
                done = r.2;
            }
        }
        Ok(())
    }

    /// Copies block `b` into `into` (of the block's bytes), from a table
    /// in memory or by reading it.
    fn read_block<B: Bytes>(
        &self,
        bytes: &B,
        b: usize,
        into: &mut [u8],
    ) -> Result<(), CompressError> {
        let at = self.data_start + (b * self.block_bytes) as u64;
        self.span(bytes, b, at, into)
    }

    /// Fills `into` with the bytes at `at` (for block `b`, which errors
    /// name), from a table in memory or by reading them.
    fn span<B: Bytes>(
        &self,
        bytes: &B,
        b: usize,
        at: u64,
        into: &mut [u8],
    ) -> Result<(), CompressError> {
        let gone = || CompressError::OffsetOutOfRange {
            block: b as u64,
            offset: at,
            reason: "no longer lies inside the file".into(),
        };
        if let Some(all) = bytes.slice() {
            let s = usize::try_from(at).map_err(|_| gone())?;
            into.copy_from_slice(all.get(s..s + into.len()).ok_or_else(gone)?);
            return Ok(());
        }
        bytes.read_at(at, into).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => gone(),
            k => CompressError::Read(k),
        })
    }

    /// The value of entry `g` (in the table). In a file with group
    /// checks, its block's group is verified when this process first uses
    /// it, and the block is decoded up to the entry (or on from where this
    /// thread's last probe of it stopped); in a file without, the block is
    /// decoded whole and checked. A damaged block is an error, never a
    /// value. A thread keeps its last 1,024 blocks (direct-mapped), so a
    /// later probe of one decodes at most the entries past the last.
    pub fn get<B: Bytes>(&self, bytes: &B, g: u64) -> Result<i8, CompressError> {
        let (b, start, off) = self.locate(g);
        CACHE.with(|c| {
            let mut c = c.borrow_mut();
            let Cache { blocks, vals } = &mut *c;
            if blocks.is_empty() {
                blocks.resize_with(CACHED_BLOCKS, || Cached {
                    table: u64::MAX,
                    block: 0,
                    sym: Vec::new(),
                    pad: Vec::new(),
                    lane: None,
                });
            }
            let k = (b ^ (self.id as usize).wrapping_mul(0x9e37_79b9)) % CACHED_BLOCKS;
            let slot = &mut blocks[k];
            if slot.table != self.id || slot.block != b {
                slot.table = u64::MAX;
                self.start_cached(bytes, b, start, slot, vals)?;
                slot.table = self.id;
                slot.block = b;
            }
            let lane = slot.lane.as_mut().expect("a block in use");
            if off >= lane.i {
                self.dec.run(lane, &slot.pad, &mut slot.sym, off + 1);
                // Decoded to its end: its end state checked too.
                if lane.i == slot.sym.len() && self.groups.is_some() {
                    let (lane, end) = (*lane, &slot.pad[..self.block_bytes]);
                    if let Err(e) = self.checked_values(b, &lane, &slot.sym, end, vals) {
                        slot.table = u64::MAX;
                        return Err(e);
                    }
                }
            }
            Ok(value(self.shape, slot.sym[off]) as i8)
        })
    }

    /// Starts `slot` on block `b` (its first entry `start`): with group
    /// checks, the block's group verified (once for this opened table) and the block
    /// copied; without, the block decoded whole and checked (`vals` the
    /// scratch for its values).
    fn start_cached<B: Bytes>(
        &self,
        bytes: &B,
        b: usize,
        start: u64,
        slot: &mut Cached,
        vals: &mut Vec<u8>,
    ) -> Result<(), CompressError> {
        let bb = self.block_bytes;
        let c = self.counts[b] as usize;
        if let Some(groups) = &self.groups {
            self.verify_group(bytes, groups, b)?;
        }
        slot.pad.clear();
        slot.pad.resize(bb + PAD, 0);
        self.read_block(bytes, b, &mut slot.pad[..bb])?;
        let mut lane = self.start_lane(b, &slot.pad, start)?;
        slot.sym.clear();
        slot.sym.resize(c, 0);
        if self.groups.is_none() {
            self.dec.run(&mut lane, &slot.pad, &mut slot.sym, c);
            self.checked_values(b, &lane, &slot.sym, &slot.pad[..bb], vals)?;
        }
        slot.lane = Some(lane);
        Ok(())
    }

    /// Verifies the group of block `b` against its check, unless this
    /// opened table has done so.
    fn verify_group<B: Bytes>(
        &self,
        bytes: &B,
        groups: &Groups,
        b: usize,
    ) -> Result<(), CompressError> {
        let gi = b as u64 / groups.blocks;
        let (word, bit) = (&groups.verified[(gi / 64) as usize], 1u64 << (gi % 64));
        if word.load(Ordering::Relaxed) & bit != 0 {
            return Ok(());
        }
        let first = gi * groups.blocks;
        let n = groups.blocks.min(self.counts.len() as u64 - first) as usize;
        let at = self.data_start + first * self.block_bytes as u64;
        let len = n * self.block_bytes;
        // A mapped table is hashed where it lies; another is read first.
        let mut buf = Vec::new();
        let group = match bytes.slice().and_then(|all| {
            let s = usize::try_from(at).ok()?;
            all.get(s..s.checked_add(len)?)
        }) {
            Some(g) => g,
            None => {
                buf.resize(len, 0);
                self.span(bytes, b, at, &mut buf)?;
                &buf[..]
            }
        };
        let check = group_check(group);
        if check != groups.checks[gi as usize] {
            return Err(CompressError::Stream {
                block: b as u64,
                message: format!(
                    "its group of blocks ({first}..{}) does not match its check: it is damaged",
                    first + n as u64
                ),
            });
        }
        word.fetch_or(bit, Ordering::Relaxed);
        Ok(())
    }

    /// The values of block `b`'s symbols `sym` (all of them, lane `lane`
    /// having decoded them from `block`, without padding) into `values`,
    /// checked: the block must end in the state they call for.
    fn checked_values(
        &self,
        b: usize,
        lane: &Lane,
        sym: &[u8],
        block: &[u8],
        values: &mut Vec<u8>,
    ) -> Result<(), CompressError> {
        values.clear();
        values.extend(sym.iter().map(|&s| value(self.shape, s)));
        if self.dec.finish(lane, block_check(values), block) {
            Ok(())
        } else {
            Err(damaged(b))
        }
    }

    /// A lane starting on block `b` (its first entry `start`), from its
    /// padded copy.
    fn start_lane(&self, b: usize, padded: &[u8], start: u64) -> Result<Lane, CompressError> {
        self.dec
            .lane(padded, start)
            .ok_or_else(|| CompressError::Stream {
                block: b as u64,
                message: "the block does not start with a coder state".into(),
            })
    }

    /// Decodes entries `start .. start + out.len()` (in the table) into
    /// `out`, every block it touches decoded whole and checked, `LANES` (4)
    /// blocks at a time.
    pub fn decode_range<B: Bytes>(
        &self,
        bytes: &B,
        start: u64,
        out: &mut [u8],
    ) -> Result<(), CompressError> {
        if out.is_empty() {
            return Ok(());
        }
        let end = start + out.len() as u64;
        let (mut b, mut first, _) = self.locate(start);
        let bb = self.block_bytes;
        let most = self.counts.iter().copied().max().unwrap_or(0) as usize;
        let mut pad = vec![0u8; LANES * (bb + PAD)];
        let mut sym = vec![0u8; LANES * most];
        let mut vals = vec![0u8; most];
        while first < end {
            // The next blocks (up to LANES) that the range touches.
            let mut n = 0;
            let mut firsts = [0u64; LANES];
            let mut at = first;
            while n < LANES && at < end && b + n < self.counts.len() {
                firsts[n] = at;
                self.read_block(bytes, b + n, &mut pad[n * (bb + PAD)..][..bb])?;
                at += self.counts[b + n] as u64;
                n += 1;
            }
            let mut lanes = Vec::with_capacity(LANES);
            let mut padded: Vec<&[u8]> = Vec::with_capacity(LANES);
            for (j, p) in pad.chunks(bb + PAD).take(n).enumerate() {
                lanes.push(self.start_lane(b + j, p, firsts[j])?);
                padded.push(p);
            }
            let mut syms: Vec<&mut [u8]> = sym
                .chunks_mut(most)
                .zip(&self.counts[b..b + n])
                .map(|(s, &c)| &mut s[..c as usize])
                .collect();
            self.dec.blocks(&mut lanes, &padded, &mut syms);
            for j in 0..n {
                let c = self.counts[b + j] as usize;
                let f = firsts[j];
                self.checked_values(b + j, &lanes[j], syms[j], &padded[j][..bb], &mut vals)?;
                let lo = f.max(start);
                let hi = (f + c as u64).min(end);
                out[(lo - start) as usize..(hi - start) as usize]
                    .copy_from_slice(&vals[(lo - f) as usize..(hi - f) as usize]);
            }
            first = at;
            b += n;
        }
        Ok(())
    }

    /// Entries in the table.
    pub fn entries(&self) -> u64 {
        self.entries
    }
}

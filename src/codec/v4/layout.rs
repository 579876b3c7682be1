//! Reading a format 4 file: its sparse index, block counts and model,
//! checked when it is opened ([`Layout::open`]); a probe that decodes
//! its block only up to the wanted entry; whole blocks decoded and
//! checked.

use super::coder::Decoder;
use super::context::{contexts, value, Walk};
use super::encode::block_check;
use super::header::{data_start, index_end, meta_checksum, V4Fields, V4_HEADER_BYTES};
use super::index;
use super::model::{Model, SLOTS};
use crate::codec::header::u64_at;
use crate::codec::v3::Shape;
use crate::codec::{Bytes, CompressError, Header};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Source of distinct ids of opened tables, for the per-thread cache.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);
/// Blocks a thread keeps partly decoded.
const SLOTS_PER_THREAD: usize = 4;

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
    /// Context -> class.
    class: Vec<u8>,
    /// Per class, per slot, the symbol.
    syms: Vec<u8>,
    /// Per class, per symbol, frequency and start.
    fc: Vec<u32>,
}

fn field(field: &'static str, reason: String) -> CompressError {
    CompressError::HeaderField { field, reason }
}

/// A block a thread has decoded part of: the symbols so far and where
/// the decoder stands, so that a later probe of the same block goes on
/// from there (a sorted batch decodes each block once).
struct Slot {
    /// The table and the block (`u64::MAX`: none).
    table: u64,
    block: usize,
    /// Symbols decoded.
    done: usize,
    sym: Vec<u8>,
    /// The block's bytes (a copy, whatever the table is read from).
    bytes: Vec<u8>,
    decoder: Option<Decoder>,
    walk: Option<Walk>,
}

/// A thread's slots and which to reuse next.
struct Slots {
    slots: Vec<Slot>,
    next: usize,
}

thread_local! {
    static SCRATCH: RefCell<Slots> = const { RefCell::new(Slots { slots: Vec::new(), next: 0 }) };
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
        let meta_end = (index_end(h, f) + f.model_bytes as u64) as usize;
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
        let models = &b[index_end(h, f) as usize..meta_end];
        let model = match f.envelope {
            None => Model::read(models, shape),
            // The envelope's model follows (see `envelope_layout`).
            Some(_) => Model::read_from(models, contexts(shape), shape.alphabet).map(|m| m.0),
        }
        .map_err(|reason| field("model", reason))?;
        let (syms, fc) = model.decode_tables();
        Ok(Layout {
            shape,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            entries: h.entries,
            sparse_bits: f.sparse_bits,
            block_bytes: f.block_bytes as usize,
            data_start: start,
            sparse,
            counts,
            class: model.class,
            syms,
            fc,
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

    /// Decodes symbols `from..to` of a block from its bytes, going on from
    /// decoder `d` and walk `w`.
    #[inline]
    pub(super) fn decode_more(
        &self,
        block: &[u8],
        d: &mut Decoder,
        w: &mut Walk,
        sym: &mut [u8],
        from: usize,
        to: usize,
    ) {
        for i in from..to {
            let ctx = w.context(self.shape, sym, i);
            let c = *self.class.get(ctx as usize).unwrap_or(&0) as usize;
            sym[i] = d.next(
                &self.syms[c * SLOTS as usize..(c + 1) * SLOTS as usize],
                &self.fc[c * 256..(c + 1) * 256],
                block,
            );
            w.step();
        }
    }

    /// Decodes the first `sym.len()` symbols of a block (whose first entry
    /// is `start`) from its bytes.
    #[inline]
    fn decode_prefix(&self, block: &[u8], start: u64, sym: &mut [u8]) -> Option<Decoder> {
        let mut d = Decoder::new(block)?;
        let mut w = Walk::at(self.shape.n, start);
        self.decode_more(block, &mut d, &mut w, sym, 0, sym.len());
        Some(d)
    }

    /// Calls `f` with the bytes of block `b`: borrowed from a table in
    /// memory, else read into `buf`.
    pub(super) fn with_block<B: Bytes, T>(
        &self,
        bytes: &B,
        b: usize,
        buf: &mut Vec<u8>,
        f: impl FnOnce(&[u8]) -> Result<T, CompressError>,
    ) -> Result<T, CompressError> {
        let at = self.data_start + (b * self.block_bytes) as u64;
        let gone = || CompressError::OffsetOutOfRange {
            block: b as u64,
            offset: at,
            reason: "no longer lies inside the file".into(),
        };
        if let Some(all) = bytes.slice() {
            let s = usize::try_from(at).map_err(|_| gone())?;
            return f(all.get(s..s + self.block_bytes).ok_or_else(gone)?);
        }
        buf.resize(self.block_bytes, 0);
        bytes.read_at(at, buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => gone(),
            k => CompressError::Read(k),
        })?;
        f(buf)
    }

    /// The value of entry `g` (in the table), decoding its block up to it,
    /// or on from where this thread's last probe of the block stopped. The
    /// block is not checked: a damaged block gives a value within `-n..=n`,
    /// or an error.
    pub fn get<B: Bytes>(&self, bytes: &B, g: u64) -> Result<i8, CompressError> {
        let (b, start, off) = self.locate(g);
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            let Slots { slots, next } = &mut *s;
            let k = match slots
                .iter()
                .position(|s| s.table == self.id && s.block == b)
            {
                Some(k) => k,
                None => {
                    if slots.len() < SLOTS_PER_THREAD {
                        slots.push(Slot {
                            table: u64::MAX,
                            block: 0,
                            done: 0,
                            sym: Vec::new(),
                            bytes: Vec::new(),
                            decoder: None,
                            walk: None,
                        });
                    }
                    let k = *next % slots.len();
                    *next = (k + 1) % SLOTS_PER_THREAD;
                    let slot = &mut slots[k];
                    slot.table = u64::MAX;
                    self.with_block(bytes, b, &mut slot.bytes, |_| Ok(()))?;
                    if bytes.slice().is_some() {
                        // Borrowed in place: keep a copy for later probes.
                        let at = (self.data_start + (b * self.block_bytes) as u64) as usize;
                        let all = bytes.slice().expect("in memory");
                        slot.bytes.clear();
                        slot.bytes
                            .extend_from_slice(&all[at..at + self.block_bytes]);
                    }
                    slot.decoder =
                        Some(
                            Decoder::new(&slot.bytes).ok_or_else(|| CompressError::Stream {
                                block: b as u64,
                                message: "the block does not start with a coder state".into(),
                            })?,
                        );
                    slot.walk = Some(Walk::at(self.shape.n, start));
                    slot.table = self.id;
                    slot.block = b;
                    slot.done = 0;
                    k
                }
            };
            let slot = &mut slots[k];
            if off >= slot.done {
                if slot.sym.len() <= off {
                    slot.sym.resize(self.counts[b] as usize, 0);
                }
                let (mut d, mut w) = (
                    slot.decoder.expect("a slot in use"),
                    slot.walk.expect("a slot in use"),
                );
                self.decode_more(
                    &slot.bytes,
                    &mut d,
                    &mut w,
                    &mut slot.sym,
                    slot.done,
                    off + 1,
                );
                slot.decoder = Some(d);
                slot.walk = Some(w);
                slot.done = off + 1;
            }
            Ok(value(self.shape, slot.sym[off]) as i8)
        })
    }

    /// Decodes block `b` (its first entry `start`) whole into `out` (its
    /// entries' raw values, `sym` the same length for the symbols) and
    /// checks it.
    fn decode_block(
        &self,
        b: usize,
        block: &[u8],
        start: u64,
        sym: &mut [u8],
        out: &mut [u8],
    ) -> Result<(), CompressError> {
        let bad = |message: &str| CompressError::Stream {
            block: b as u64,
            message: message.into(),
        };
        let d = self
            .decode_prefix(block, start, sym)
            .ok_or_else(|| bad("the block does not start with a coder state"))?;
        for (o, &s) in out.iter_mut().zip(sym.iter()) {
            *o = value(self.shape, s);
        }
        if !d.finish(block_check(out), block) {
            return Err(bad(
                "the block does not end in the state its values call for",
            ));
        }
        Ok(())
    }

    /// Decodes entries `start .. start + out.len()` (in the table) into
    /// `out`, every block it touches decoded whole and checked.
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
        let mut buf = Vec::new();
        let mut sym = vec![0u8; self.counts.iter().copied().max().unwrap_or(0) as usize];
        let mut vals = sym.clone();
        while first < end {
            let c = self.counts[b] as usize;
            self.with_block(bytes, b, &mut buf, |block| {
                self.decode_block(b, block, first, &mut sym[..c], &mut vals[..c])
            })?;
            let lo = first.max(start);
            let hi = (first + c as u64).min(end);
            out[(lo - start) as usize..(hi - start) as usize]
                .copy_from_slice(&vals[(lo - first) as usize..(hi - first) as usize]);
            first += c as u64;
            b += 1;
        }
        Ok(())
    }

    /// Entries in the table.
    pub fn entries(&self) -> u64 {
        self.entries
    }
}

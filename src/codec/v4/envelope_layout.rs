//! Reading the full form's envelope ([`super::envelope`]): its sparse
//! index, block counts and model, checked when the file is opened
//! ([`Envelope::open`], after the scores' [`Layout::open`] checked the
//! checksum they are under); a probe of `lower` or `upper` that decodes
//! its envelope block whole and the scores under it, each checked, and
//! keeps the block in a per-thread cache; ranges of whole blocks decoded
//! and checked.

use super::coder::{Bucket, Decoder, Tables, PAD};
use super::context::{contexts as score_contexts, Walk};
use super::envelope::{check, context_a, context_b, contexts, model_bound};
use super::header::{counts_bytes, data_start, index_end, V4Fields, V4_HEADER_BYTES};
use super::index;
use super::layout::Layout;
use super::model::Model;
use super::shape::Shape;
use crate::codec::{Bytes, CompressError, Header};
use crate::format::Kind;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Source of distinct ids of opened envelopes, for the per-thread cache.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);
/// Envelope blocks a thread keeps decoded (direct-mapped).
const CACHED_BLOCKS: usize = 256;

/// The envelope's index, counts and model.
#[derive(Clone, Debug)]
pub struct Envelope {
    shape: Shape,
    id: u64,
    sparse_bits: u32,
    block_bytes: usize,
    /// Where the envelope's blocks start (after the scores').
    start: u64,
    sparse: Vec<u64>,
    counts: Vec<u16>,
    /// Context -> class.
    class: Vec<u8>,
    /// log2 of the buckets a class.
    bucket_bits: u32,
    /// Per class, its buckets (see [`super::coder`]).
    buckets: Vec<Bucket>,
}

/// An envelope block a thread has decoded whole and checked: its lower
/// and upper values.
struct Cached {
    /// The envelope and the block (`u64::MAX`: none).
    table: u64,
    block: usize,
    lo: Vec<u8>,
    hi: Vec<u8>,
}

thread_local! {
    static CACHE: RefCell<Vec<Cached>> = const { RefCell::new(Vec::new()) };
}

fn stream(block: usize, message: &str) -> CompressError {
    CompressError::Stream {
        block: block as u64,
        message: format!("envelope block: {message}"),
    }
}

/// Copies `len` bytes at `at` of `src` into `out`.
fn read_into<B: Bytes>(
    src: &B,
    at: u64,
    len: usize,
    block: usize,
    out: &mut Vec<u8>,
) -> Result<(), CompressError> {
    out.resize(len, 0);
    src.read_at(at, out).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => CompressError::OffsetOutOfRange {
            block: block as u64,
            offset: at,
            reason: "no longer lies inside the file".into(),
        },
        k => CompressError::Read(k),
    })
}

impl Envelope {
    /// Reads and checks the envelope's index, counts and model of a full
    /// form file whose scores' [`Layout`] opened (`b`, at least its first
    /// `data_start` bytes).
    pub fn open(h: &Header, f: &V4Fields, b: &[u8]) -> Result<Envelope, CompressError> {
        let e = f.envelope.expect("the full form");
        let shape = Shape::new(h.layer);
        let ns = f.sparse_entries(h.entries) as usize;
        let at = V4_HEADER_BYTES + 8 * ns + counts_bytes(f.blocks, h.block_size) as usize;
        let (sparse, counts) = index::read(
            b,
            at,
            ns,
            e.blocks as usize,
            h.block_size,
            h.entries,
            f.sparse_bits,
            "envelope blocks",
        )?;
        let ie = index_end(h, f) as usize;
        let models = &b[ie..ie + f.model_bytes as usize];
        let bad = |reason: String| CompressError::HeaderField {
            field: "envelope model",
            reason,
        };
        let (_, used) =
            Model::read_from(models, score_contexts(shape), shape.alphabet).map_err(|r| {
                CompressError::HeaderField {
                    field: "model",
                    reason: r,
                }
            })?;
        // Its bytes before compression (4), then a zstd frame of them.
        let rest = &models[used..];
        let raw_len = match rest.get(..4) {
            Some(x) => u32::from_le_bytes([x[0], x[1], x[2], x[3]]) as usize,
            None => return Err(bad("missing".into())),
        };
        if raw_len > model_bound(shape) {
            return Err(bad(format!("{raw_len} bytes, more than a model takes")));
        }
        let raw = zstd::bulk::decompress(&rest[4..], raw_len).map_err(|e| bad(e.to_string()))?;
        let (model, more) = Model::read_from(&raw, contexts(shape), shape.alphabet).map_err(bad)?;
        if raw.len() != raw_len || more != raw_len {
            return Err(bad(format!(
                "{} bytes, of which the model takes {more}",
                raw.len()
            )));
        }
        let t = Tables::new(&model.freqs, shape.alphabet as usize);
        Ok(Envelope {
            shape,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            sparse_bits: f.sparse_bits,
            block_bytes: e.block_bytes as usize,
            start: data_start(h, f) + f.blocks * f.block_bytes as u64,
            sparse,
            counts,
            class: model.class,
            bucket_bits: t.bucket_bits,
            buckets: t.buckets,
        })
    }

    /// Envelope blocks.
    pub fn blocks(&self) -> u64 {
        self.counts.len() as u64
    }

    /// Decodes the envelope of entry `i` of a block (`padded`: its bytes
    /// and [`PAD`] zeros): its `a` and `b` from the block's score symbols
    /// `s` (up to `i`) and the symbols before it.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn decode_entry(
        &self,
        padded: &[u8],
        d: &mut Decoder,
        w: &Walk,
        s: &[u8],
        a: &mut [u8],
        b: &mut [u8],
        i: usize,
    ) {
        let k = 1usize << self.bucket_bits;
        let buckets = |ctx: u32| {
            let c = *self.class.get(ctx as usize).unwrap_or(&0) as usize;
            self.buckets
                .get(c * k..c * k + k)
                .unwrap_or(&self.buckets[..k])
        };
        let (p, len) = (w.position(), padded.len() - PAD);
        let bk = buckets(context_a(self.shape, p, s, a, i));
        a[i] = d.next(bk, self.bucket_bits, padded, len);
        let bk = buckets(context_b(self.shape, p, s[i], a[i], b, i));
        b[i] = d.next(bk, self.bucket_bits, padded, len);
    }

    /// The raw lower and upper values of score symbol `s` and envelope
    /// symbols `a`, `b`; `None` outside `-n..=n` (a damaged block).
    #[inline]
    fn values(&self, s: u8, a: u8, b: u8) -> Option<(i8, i8)> {
        let n = self.shape.n as i32;
        let sv = s as i32 - n;
        let (lo, hi) = (sv - a as i32, sv + b as i32);
        (lo >= -n && hi <= n).then_some((lo as i8, hi as i8))
    }

    /// The value of entry `g` of table `kind` (lower or upper): its
    /// envelope block and the scores under it decoded whole and checked
    /// (a damaged block is an error, never a value), then kept in this
    /// thread's cache of 256 envelope blocks.
    pub fn get<B: Bytes>(
        &self,
        l: &Layout,
        src: &B,
        g: u64,
        kind: Kind,
    ) -> Result<i8, CompressError> {
        let (eb, first, off) = index::locate(&self.sparse, &self.counts, self.sparse_bits, g);
        CACHE.with(|c| {
            let mut c = c.borrow_mut();
            if c.is_empty() {
                c.resize_with(CACHED_BLOCKS, || Cached {
                    table: u64::MAX,
                    block: 0,
                    lo: Vec::new(),
                    hi: Vec::new(),
                });
            }
            let k = (eb ^ (self.id as usize).wrapping_mul(0x9e37_79b9)) % CACHED_BLOCKS;
            let slot = &mut c[k];
            if slot.table != self.id || slot.block != eb {
                slot.table = u64::MAX;
                let n = self.counts[eb] as usize;
                slot.lo.resize(n, 0);
                slot.hi.resize(n, 0);
                self.decode(l, src, first, &mut slot.lo, &mut slot.hi)?;
                slot.table = self.id;
                slot.block = eb;
            }
            let v = if kind == Kind::Lower {
                slot.lo[off]
            } else {
                slot.hi[off]
            };
            Ok(v as i8)
        })
    }

    /// Decodes entries `start .. start + out.len()` (in the table) of
    /// table `kind` (lower or upper) into `out`: the scores of the
    /// envelope blocks it touches, then those blocks, every block decoded
    /// whole and checked.
    pub fn decode_range<B: Bytes>(
        &self,
        l: &Layout,
        src: &B,
        start: u64,
        out: &mut [u8],
        kind: Kind,
    ) -> Result<(), CompressError> {
        let mut other = vec![0u8; out.len()];
        match kind {
            Kind::Lower => self.decode(l, src, start, out, &mut other),
            _ => self.decode(l, src, start, &mut other, out),
        }
    }

    /// Decodes entries `start .. start + lower.len()` (in the table) of
    /// both tables into `lower` and `upper` (as long), every block decoded
    /// whole and checked.
    fn decode<B: Bytes>(
        &self,
        l: &Layout,
        src: &B,
        start: u64,
        lower: &mut [u8],
        upper: &mut [u8],
    ) -> Result<(), CompressError> {
        if lower.is_empty() {
            return Ok(());
        }
        let end = start + lower.len() as u64;
        let locate = |g| index::locate(&self.sparse, &self.counts, self.sparse_bits, g);
        let (mut eb, mut first, _) = locate(start);
        let (last, last_first, _) = locate(end - 1);
        let span = first;
        let mut s = vec![0u8; (last_first + self.counts[last] as u64 - span) as usize];
        l.decode_range(src, span, &mut s)?;
        let n = self.shape.n as i32;
        for x in s.iter_mut() {
            *x = (*x as i8 as i32 + n) as u8;
        }
        let most = self.counts.iter().copied().max().unwrap_or(0) as usize;
        let (mut a, mut b) = (vec![0u8; most], vec![0u8; most]);
        let (mut lo, mut hi) = (vec![0u8; most], vec![0u8; most]);
        let mut bytes = Vec::new();
        while first < end {
            let c = self.counts[eb] as usize;
            let at = self.start + (eb * self.block_bytes) as u64;
            read_into(src, at, self.block_bytes, eb, &mut bytes)?;
            bytes.resize(self.block_bytes + PAD, 0);
            let mut d = Decoder::new(&bytes)
                .ok_or_else(|| stream(eb, "it does not start with a coder state"))?;
            let mut w = Walk::at(self.shape.n, first);
            let sb = &s[(first - span) as usize..];
            for i in 0..c {
                self.decode_entry(&bytes, &mut d, &w, sb, &mut a, &mut b, i);
                let (x, y) = self
                    .values(sb[i], a[i], b[i])
                    .ok_or_else(|| stream(eb, "a bound out of the layer's range"))?;
                (lo[i], hi[i]) = (x as u8, y as u8);
                w.step();
            }
            if !d.finish(check(&lo[..c], &hi[..c]), &bytes[..self.block_bytes]) {
                return Err(stream(
                    eb,
                    "it does not end in the state its values call for",
                ));
            }
            let (from, to) = (first.max(start), (first + c as u64).min(end));
            let (at, into) = (
                (from - start) as usize..(to - start) as usize,
                (from - first) as usize..(to - first) as usize,
            );
            lower[at.clone()].copy_from_slice(&lo[into.clone()]);
            upper[at].copy_from_slice(&hi[into]);
            first += c as u64;
            eb += 1;
        }
        Ok(())
    }
}

//! Decoding format 4's blocks: the tables a file's model gives the
//! decoder, a block decoded symbol by symbol (a probe stops at its entry
//! and may go on later), and several blocks decoded at once in
//! interleaved lanes, so that their chains of dependent loads overlap.
//!
//! A symbol's chain: the previous symbol gives the context (everything
//! else in it is computed beforehand, see [`Walk::early`]), the context
//! its class, the class and the coder's state one bucket, the bucket the
//! symbol and the next state.

use super::coder::{Bucket, Decoder, Tables, PAD};
use super::context::{decoder_order, Walk};
use super::model::Model;
use super::shape::Shape;

/// Blocks decoded at once by [`Decoding::blocks`].
pub const LANES: usize = 4;

/// What the decoder reads a file's model through.
#[derive(Clone, Debug)]
pub struct Decoding {
    shape: Shape,
    /// `values * 3`: the stride of [`Walk::early`].
    values3: u32,
    /// The symbol of an unknown score.
    none: u8,
    /// The class of each context, in [`decoder_order`].
    class: Vec<u8>,
    /// log2 of the buckets a class.
    bucket_bits: u32,
    /// Per class, its buckets.
    buckets: Vec<Bucket>,
}

/// A block being decoded: the coder, the walk, the two symbols before
/// the next and the next entry.
#[derive(Clone, Copy, Debug)]
pub struct Lane {
    d: Decoder,
    w: Walk,
    s1: u8,
    s2: u8,
    /// The next entry.
    pub i: usize,
}

impl Decoding {
    /// The decoder's tables of `model`, for layer `shape.n`.
    pub fn new(shape: Shape, model: &Model) -> Decoding {
        let t = Tables::new(&model.freqs, shape.alphabet as usize);
        Decoding {
            shape,
            values3: (shape.alphabet + 1) * 3,
            none: shape.alphabet as u8,
            class: decoder_order(shape, &model.class),
            bucket_bits: t.bucket_bits,
            buckets: t.buckets,
        }
    }

    /// Starts on a block whose first entry is `start` (`None`: the block
    /// does not start with a coder state).
    #[inline]
    pub fn lane(&self, block: &[u8], start: u64) -> Option<Lane> {
        Some(Lane {
            d: Decoder::new(block)?,
            w: Walk::at(self.shape.n, start),
            s1: self.none,
            s2: self.none,
            i: 0,
        })
    }

    /// Decodes one symbol of lane `l` into `sym[l.i]`; `padded` is the
    /// block followed by [`PAD`] zeros.
    #[inline(always)]
    fn step(&self, l: &mut Lane, padded: &[u8], sym: &mut [u8]) {
        let i = l.i;
        let early = l.w.early(self.values3, self.none, sym, i);
        // The trend: 1 before the second entry.
        let t = if i >= 2 {
            (l.s2 > l.s1) as u32 + (l.s2 >= l.s1) as u32
        } else {
            1
        };
        let ctx = early + l.s1 as u32 * 3 + t;
        let c = *self.class.get(ctx as usize).unwrap_or(&0) as usize;
        let k = 1usize << self.bucket_bits;
        let b = self
            .buckets
            .get(c * k..c * k + k)
            .unwrap_or(&self.buckets[..k]);
        let s = l.d.next(b, self.bucket_bits, padded, padded.len() - PAD);
        sym[i] = s;
        l.s2 = l.s1;
        l.s1 = s;
        l.i = i + 1;
        l.w.step();
    }

    /// Decodes lane `l` on up to entry `to` (excluded) into `sym`.
    #[inline]
    pub fn run(&self, l: &mut Lane, padded: &[u8], sym: &mut [u8], to: usize) {
        while l.i < to {
            self.step(l, padded, sym);
        }
    }

    /// Decodes up to [`LANES`] whole blocks at once: lane `j` decodes
    /// `syms[j].len()` symbols from `padded[j]`.
    #[inline]
    pub fn blocks(&self, lanes: &mut [Lane], padded: &[&[u8]], syms: &mut [&mut [u8]]) {
        let n = lanes.len().min(padded.len()).min(syms.len()).min(LANES);
        let most = syms[..n].iter().map(|s| s.len()).max().unwrap_or(0);
        let least = syms[..n].iter().map(|s| s.len()).min().unwrap_or(0);
        macro_rules! all {
            ($n:literal) => {{
                for _ in 0..least {
                    for j in 0..$n {
                        self.step(&mut lanes[j], padded[j], syms[j]);
                    }
                }
            }};
        }
        match n {
            4 => all!(4),
            3 => all!(3),
            2 => all!(2),
            1 => all!(1),
            _ => {}
        }
        for _ in least..most {
            for j in 0..n {
                if lanes[j].i < syms[j].len() {
                    self.step(&mut lanes[j], padded[j], syms[j]);
                }
            }
        }
    }

    /// Whether lane `l`, having decoded its whole block (`block`, without
    /// padding), ended where and how its values (hash `check`) say.
    pub fn finish(&self, l: &Lane, check: u64, block: &[u8]) -> bool {
        l.d.finish(check, block)
    }
}

//! The contexts of format 4: the finest scores context of `shape`,
//! computed by a walk through a block in Goedel order; and what the
//! layer's shape gives format 4.

use super::shape::{score_context, step, Shape, VARIANTS};
use crate::index::unrank_unchecked;
use crate::rules::Position;

/// Contexts of the scores of a layer of shape `shape`.
#[inline]
pub fn contexts(shape: Shape) -> u32 {
    shape.score_contexts(VARIANTS - 1)
}

/// The raw table value of a symbol.
#[inline]
pub fn value(shape: Shape, s: u8) -> u8 {
    s.wrapping_sub(shape.n as u8)
}

/// A walk through a block in Goedel order: the position of the next
/// entry, so that the context of entry `i` can be computed from the
/// symbols before it.
#[derive(Clone, Copy, Debug)]
pub struct Walk {
    p: Position,
}

impl Walk {
    /// A walk from entry `start` of layer `n` (which must be in the layer).
    #[inline]
    pub fn at(n: u32, start: u64) -> Walk {
        Walk {
            p: unrank_unchecked(n, start),
        }
    }

    /// The context of entry `i` of the block (this walk's position), from
    /// the symbols `out[..i]` before it: format 3's finest.
    #[inline(always)]
    pub fn context(&self, shape: Shape, out: &[u8], i: usize) -> u32 {
        score_context(shape, VARIANTS - 1, &self.p, out, i)
    }

    /// The position of the next entry.
    #[inline(always)]
    pub fn position(&self) -> &Position {
        &self.p
    }

    /// Steps to the next entry.
    #[inline(always)]
    pub fn step(&mut self) {
        step(&mut self.p);
    }
}

/// The decoder's order of the contexts: `((neighbour * 5 + pit 0) *
/// values + previous) * 3 + trend`, so that everything but the previous
/// symbol and the trend is known before the previous symbol is decoded.
/// Returns, in that order, the class of each context from `class` (in
/// format 3's order: `((previous * values + neighbour) * 5 + pit 0) * 3 +
/// trend`).
pub fn decoder_order(shape: Shape, class: &[u8]) -> Vec<u8> {
    let v = shape.alphabet as usize + 1;
    let mut out = vec![0u8; v * v * 15];
    for s1 in 0..v {
        for sv in 0..v {
            for p0 in 0..5 {
                for t in 0..3 {
                    let ours = ((sv * 5 + p0) * v + s1) * 3 + t;
                    let v3 = ((s1 * v + sv) * 5 + p0) * 3 + t;
                    out[ours] = class.get(v3).copied().unwrap_or(0);
                }
            }
        }
    }
    out
}

impl Walk {
    /// The part of the context of entry `i` (this walk's position) known
    /// before entry `i - 1` is decoded, in [`decoder_order`] times 3:
    /// `(neighbour * 5 + pit 0) * values * 3`, `none` standing for an
    /// unknown score.
    #[inline(always)]
    pub fn early(&self, values3: u32, none: u8, out: &[u8], i: usize) -> u32 {
        let p = &self.p.0;
        let k = p[0] as usize + p[1] as usize + 2;
        let known = p[2] > 0 && k <= i;
        // Without a branch: entry 0 when the neighbour is unknown.
        let sv = out[i.wrapping_sub(k) & (known as usize).wrapping_neg()];
        let sv = if known { sv } else { none } as u32;
        (sv * 5 + (p[0]).min(4) as u32) * values3
    }
}

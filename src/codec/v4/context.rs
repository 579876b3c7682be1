//! The contexts of format 4: format 3's finest scores context (see
//! [`crate::codec::v3`]), computed by a walk through a block in Goedel
//! order; and what the layer's shape gives format 4.

use crate::codec::v3::{self, Shape, VARIANTS};
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
        v3::score_context(shape, VARIANTS - 1, &self.p, out, i)
    }

    /// The position of the next entry.
    #[inline(always)]
    pub fn position(&self) -> &Position {
        &self.p
    }

    /// Steps to the next entry.
    #[inline(always)]
    pub fn step(&mut self) {
        v3::step(&mut self.p);
    }
}

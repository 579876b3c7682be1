//! The contexts of format 4: what a score is coded given (the values of
//! the same block before it and the entry's position), and the walk
//! through a block in Goedel order that computes them.

use crate::index::unrank_unchecked;
use crate::rules::Position;

/// Sizes of the contexts and alphabet of layer `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Seeds.
    pub n: u32,
    /// Symbols: `0 ..= 2n` (a score `S` is the symbol `S + n`).
    pub alphabet: u32,
    /// Context values of a neighbour's score: the alphabet and "none".
    values: u32,
}

impl Shape {
    /// The shape of layer `n`.
    pub fn new(n: u32) -> Shape {
        Shape {
            n,
            alphabet: 2 * n + 1,
            values: 2 * n + 2,
        }
    }

    /// Contexts of the scores.
    pub fn contexts(&self) -> u32 {
        self.values * self.values * 15
    }

    /// The symbol of a raw table value; `None` outside `-n..=n`.
    #[inline]
    pub fn symbol(&self, v: u8) -> Option<u8> {
        let s = v as i8 as i32 + self.n as i32;
        (0..self.alphabet as i32).contains(&s).then_some(s as u8)
    }

    /// The raw table value of a symbol.
    #[inline]
    pub fn value(&self, s: u8) -> u8 {
        s.wrapping_sub(self.n as u8)
    }
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
    /// the symbols `out[..i]` before it: the previous score, the score of
    /// the position with one seed moved back from pit 2 to pit 0 (`p0 + p1
    /// + 2` entries earlier, when that is in the block), pit 0's seeds
    /// (0..=4, more as 4) and whether the score before the previous one was
    /// lower, equal or higher.
    #[inline(always)]
    pub fn context(&self, shape: Shape, out: &[u8], i: usize) -> u32 {
        let p = &self.p.0;
        let none = shape.alphabet;
        let s1 = if i > 0 { out[i - 1] as u32 } else { none };
        let k = p[0] as usize + p[1] as usize + 2;
        let sv = if p[2] > 0 && k <= i {
            out[i - k] as u32
        } else {
            none
        };
        let t = if i > 1 {
            (out[i - 2].cmp(&out[i - 1]) as i8 + 1) as u32
        } else {
            1
        };
        ((s1 * shape.values + sv) * 5 + (p[0]).min(4) as u32) * 3 + t
    }

    /// Steps to the next entry (one seed from pit 0 to pit 1 in the common
    /// case).
    #[inline(always)]
    pub fn step(&mut self) {
        let b = &mut self.p.0;
        if b[0] > 0 {
            b[0] -= 1;
            b[1] += 1;
        } else {
            crate::index::advance(&mut self.p);
        }
    }
}

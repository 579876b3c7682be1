//! The shape of a layer's contexts and alphabet, and the pieces of a
//! context that the scores and the envelope share: the step to the next
//! position in Goedel order, the Goedel neighbour "one seed moved back
//! from pit 2 to pit 0", the scores context (the finest of four nested
//! ones, [`VARIANTS`]), a value as a symbol, and the check hash of an
//! envelope block.

use crate::rules::Position;

/// The nested scores contexts (previous score; and the neighbour's; and
/// pit 0's seeds; and the trend): format 4 codes with the finest,
/// `VARIANTS - 1`.
pub const VARIANTS: u8 = 4;

/// Sizes of the contexts and alphabets of layer `n`.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Seeds.
    pub n: u32,
    /// Symbols: `0 ..= 2n`.
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

    /// Contexts of the scores under variant `v` (see [`VARIANTS`]).
    pub fn score_contexts(&self, v: u8) -> u32 {
        let vv = self.values;
        match v {
            0 => vv,
            1 => vv * vv,
            2 => vv * vv * 5,
            _ => vv * vv * 15,
        }
    }
}

/// Steps a position to the next in Goedel order (one seed from pit 0 to
/// pit 1 in the common case).
#[inline(always)]
pub(super) fn step(p: &mut Position) {
    if p.0[0] > 0 {
        p.0[0] -= 1;
        p.0[1] += 1;
    } else {
        crate::index::advance(p);
    }
}

/// How far back the neighbour "one seed moved from pit 2 to pit 0" is, if
/// pit 2 has a seed.
#[inline(always)]
pub(super) fn back(p: &Position) -> Option<usize> {
    (p.0[2] > 0).then_some(p.0[0] as usize + p.0[1] as usize + 2)
}

/// The context of the score of entry `i` of a block under variant
/// `variant`, from the scores symbols `out[..i]` before it and the
/// entry's position `p`.
#[inline(always)]
pub(super) fn score_context(shape: Shape, variant: u8, p: &Position, out: &[u8], i: usize) -> u32 {
    let none = shape.alphabet as u8;
    let s1 = if i > 0 { out[i - 1] } else { none } as u32;
    if variant == 0 {
        return s1;
    }
    let sv = match back(p) {
        Some(k) if k <= i => out[i - k],
        _ => none,
    } as u32;
    let c = s1 * shape.values + sv;
    if variant == 1 {
        return c;
    }
    let c = c * 5 + (p.0[0]).min(4) as u32;
    if variant == 2 {
        return c;
    }
    let t = if i > 1 {
        (out[i - 2].cmp(&out[i - 1]) as i8 + 1) as u32
    } else {
        1
    };
    c * 3 + t
}

/// The check hash of a block's envelope.
pub fn envelope_check(lower: &[u8], upper: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(lower) ^ xxhash_rust::xxh3::xxh3_64(upper).rotate_left(17)
}

/// A value of the table as a symbol (`v + n`); `None` outside `-n..=n`.
#[inline]
pub fn symbol(shape: Shape, v: u8) -> Option<u8> {
    let s = v as i8 as i32 + shape.n as i32;
    (0..shape.alphabet as i32).contains(&s).then_some(s as u8)
}

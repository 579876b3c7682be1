//! The contexts of format 3: the shape of a layer's contexts and
//! alphabets, the walks that compute each entry's context in Goedel order
//! (shared by counting, encoding and decoding), and the models of a file.

use super::ans::{AnsError, Model};
use super::FULL;
use crate::index::unrank_unchecked;
use crate::rules::Position;

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

    /// Contexts of scores-model variant `v`.
    pub fn score_contexts(&self, v: u8) -> u32 {
        let vv = self.values;
        match v {
            0 => vv,
            1 => vv * vv,
            2 => vv * vv * 5,
            _ => vv * vv * 15,
        }
    }

    /// Contexts of `a`.
    pub fn a_contexts(&self) -> u32 {
        self.alphabet * 36
    }

    /// Contexts of `b`.
    pub fn b_contexts(&self) -> u32 {
        self.alphabet * self.alphabet * 6
    }
}

/// Steps a position to the next in Goedel order (one seed from pit 0 to
/// pit 1 in the common case).
#[inline(always)]
pub(in crate::codec) fn step(p: &mut Position) {
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
pub(in crate::codec) fn back(p: &Position) -> Option<usize> {
    (p.0[2] > 0).then_some(p.0[0] as usize + p.0[1] as usize + 2)
}

/// The context of the score of entry `i` of a block under variant
/// `variant`, from the scores symbols `out[..i]` before it and the
/// entry's position `p`.
#[inline(always)]
pub(in crate::codec) fn score_context(
    shape: Shape,
    variant: u8,
    p: &Position,
    out: &[u8],
    i: usize,
) -> u32 {
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

/// The context of `a` (`S - lower`) of entry `i`, from its score symbol
/// `si`, the `a` symbols before it and its position `p`.
#[inline(always)]
pub(super) fn a_context(p: &Position, si: u8, a: &[u8], i: usize) -> u32 {
    let a1 = if i > 0 { a[i - 1].min(4) } else { 5 } as u32;
    let av = match back(p) {
        Some(k) if k <= i => a[i - k].min(4),
        _ => 5,
    } as u32;
    (si as u32 * 6 + a1) * 6 + av
}

/// The context of `b` (`upper - S`) of entry `i`, from its score symbol,
/// its `a` and the `b` symbols before it.
#[inline(always)]
pub(super) fn b_context(shape: Shape, si: u8, ai: u8, b: &[u8], i: usize) -> u32 {
    let al = shape.alphabet;
    let b1 = if i > 0 { b[i - 1].min(4) } else { 5 } as u32;
    (si as u32 * al + (ai as u32).min(al - 1)) * 6 + b1
}

/// Walks the scores of the block of layer `shape.n` starting at entry
/// `start`: for each entry `i` of `out`, computes its context under
/// variant `variant` (the finest when counting) from `out[..i]`, asks
/// `sym(i, ctx)` for its symbol and stores it in `out[i]`.
#[inline(always)]
pub fn walk_scores<E>(
    shape: Shape,
    start: u64,
    variant: u8,
    out: &mut [u8],
    mut sym: impl FnMut(usize, u32) -> Result<u8, E>,
) -> Result<(), E> {
    let mut p = unrank_unchecked(shape.n, start);
    for i in 0..out.len() {
        let ctx = score_context(shape, variant, &p, out, i);
        out[i] = sym(i, ctx)?;
        step(&mut p);
    }
    Ok(())
}

/// The scores-model context of the finest variant, projected to variant
/// `v` (the variants nest: a coarser one drops the last factors).
pub fn project(shape: Shape, fine: u32, v: u8) -> u32 {
    match v {
        0 => fine / (15 * shape.values),
        1 => fine / 15,
        2 => fine / 3,
        _ => fine,
    }
}

/// Walks the envelope of a block given its scores symbols `s`: for each
/// entry, `sym(false, i, ctx)` gives `a` and then `sym(true, i, ctx)` gives
/// `b`, stored in `a` and `b`.
#[inline(always)]
pub fn walk_envelope<E>(
    shape: Shape,
    start: u64,
    s: &[u8],
    a: &mut [u8],
    b: &mut [u8],
    mut sym: impl FnMut(bool, usize, u32) -> Result<u8, E>,
) -> Result<(), E> {
    let mut p = unrank_unchecked(shape.n, start);
    for i in 0..s.len() {
        a[i] = sym(false, i, a_context(&p, s[i], a, i))?;
        b[i] = sym(true, i, b_context(shape, s[i], a[i], b, i))?;
        step(&mut p);
    }
    Ok(())
}

/// The check hash of a block's scores (the state a stream ends in
/// holds 31 bits of it).
pub fn score_check(s: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(s)
}

/// The check hash of a block's envelope.
pub fn envelope_check(lower: &[u8], upper: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(lower) ^ xxhash_rust::xxh3::xxh3_64(upper).rotate_left(17)
}

/// The models of a file.
#[derive(Clone, Debug)]
pub struct Models {
    /// The scores model's variant.
    pub variant: u8,
    /// The scores model.
    pub scores: Model,
    /// The models of `a` and `b`, in the full form.
    pub envelope: Option<(Model, Model)>,
}

impl Models {
    /// The models' bytes.
    pub fn write(&self, out: &mut Vec<u8>) {
        self.scores.write(out);
        if let Some((a, b)) = &self.envelope {
            a.write(out);
            b.write(out);
        }
    }

    /// Reads the models of a file of layer `shape.n` holding `tables`.
    pub fn read(b: &[u8], shape: Shape, variant: u8, tables: u8) -> Result<Models, AnsError> {
        let mut at = 0;
        let scores = Model::read(b, &mut at, shape.score_contexts(variant), shape.alphabet)?;
        let envelope = if tables == FULL {
            let a = Model::read(b, &mut at, shape.a_contexts(), shape.alphabet)?;
            let bm = Model::read(b, &mut at, shape.b_contexts(), shape.alphabet)?;
            Some((a, bm))
        } else {
            None
        };
        if at != b.len() {
            return Err(AnsError::Model(format!(
                "{} bytes after the models",
                b.len() - at
            )));
        }
        Ok(Models {
            variant,
            scores,
            envelope,
        })
    }
}

/// A value of the table as a symbol (`v + n`); `None` outside `-n..=n`.
#[inline]
pub fn symbol(shape: Shape, v: u8) -> Option<u8> {
    let s = v as i8 as i32 + shape.n as i32;
    (0..shape.alphabet as i32).contains(&s).then_some(s as u8)
}

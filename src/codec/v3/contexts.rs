//! The contexts of format 3: the shape of a layer's contexts and
//! alphabets, the walks that compute each entry's context in Goedel order
//! (shared by counting, encoding and decoding), and the models of a file.

use super::ans::{AnsError, Model};
use super::FULL;
pub(in crate::codec) use crate::codec::v4::shape::{back, score_context, step};
pub use crate::codec::v4::shape::{envelope_check, symbol, Shape};
use crate::index::unrank_unchecked;
use crate::rules::Position;

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
        0 => fine / (15 * (shape.alphabet + 1)),
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

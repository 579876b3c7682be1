//! "Don't care" entries: the values a format 4 file stores where the
//! probe resolves the score through the position's exits.
//!
//! A position's score is the best of its moves' worths, so it is at least
//! its best exit (a capture, worth the seeds captured less the child's
//! score in a lower layer, or a move that ends the game). Where the score
//! *equals* the best exit, any stored value `v <= score` gives the score
//! back as `max(v, best exit)`; the encoder stores there whichever such
//! value is likeliest in the entry's context (counted over the layer), so
//! that it costs the fewest bits. Every other entry stores its score
//! (which is then above its best exit, so `max` gives it back too).
//!
//! The file is a format 4 file of the values stored, with the header's
//! "don't care" flag and two checksums: the raw scores' (what the
//! manifest lists, and what the values resolve to) and the stored
//! values' (what decoding the file gives, checked by whole-table
//! decoding). The rule that picks the values is the encoder's alone: the
//! probe does not need it.

use super::coded::V4Settings;
use super::context::Walk;
use super::encode::encode_file;
use super::shape::Shape;
use crate::rules::Rules;
use rayon::prelude::*;
use std::io;

/// A best exit of "none" in the table of best exits handed to [`fill`].
pub const NO_EXIT: i8 = i8::MIN;

/// Entries whose stored values are chosen one after another (contexts
/// see the values chosen before them); runs are filled in parallel.
const RUN: usize = 1 << 20;

/// How the stored value of a don't-care entry is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FillRule {
    /// The previous entry's stored value if allowed, else the score.
    Previous,
    /// The value allowed that is most frequent in the entry's context,
    /// counted `rounds` times (first over the scores, then over the
    /// values the previous round stored).
    Likeliest {
        /// Rounds of counting and choosing, at least 1.
        rounds: u32,
    },
}

/// The counts of every (context, symbol) of the symbols `sym` of layer
/// `shape.n`, contexts computed over whole runs.
fn count(shape: Shape, sym: &[u8]) -> Vec<u32> {
    let a = shape.alphabet as usize;
    let size = super::context::contexts(shape) as usize * a;
    sym.par_chunks(RUN)
        .enumerate()
        .fold(
            || vec![0u32; size],
            |mut c, (r, s)| {
                let mut w = Walk::at(shape.n, (r * RUN) as u64);
                for i in 0..s.len() {
                    let ctx = w.context(shape, s, i) as usize;
                    c[ctx * a + s[i] as usize] += 1;
                    w.step();
                }
                c
            },
        )
        .reduce(
            || vec![0u32; size],
            |mut x, y| {
                x.iter_mut().zip(&y).for_each(|(a, b)| *a += b);
                x
            },
        )
}

/// The stored symbols of layer `shape.n`: `truth` (score symbols) where
/// `cap` is `u8::MAX`, else a symbol `<= cap[i]`.
fn choose(shape: Shape, rule: FillRule, counts: &[u32], truth: &[u8], cap: &[u8]) -> Vec<u8> {
    let a = shape.alphabet as usize;
    let mut out = vec![0u8; truth.len()];
    out.par_chunks_mut(RUN).enumerate().for_each(|(r, o)| {
        let at = r * RUN;
        let mut w = Walk::at(shape.n, at as u64);
        for i in 0..o.len() {
            let k = cap[at + i];
            o[i] = if k == u8::MAX {
                truth[at + i]
            } else {
                match rule {
                    FillRule::Previous if i > 0 => o[i - 1].min(k),
                    FillRule::Previous => k,
                    FillRule::Likeliest { .. } => {
                        let ctx = w.context(shape, o, i) as usize;
                        let row = &counts[ctx * a..ctx * a + k as usize + 1];
                        // The likeliest, the largest of equals.
                        let mut best = k as usize;
                        for s in (0..row.len()).rev() {
                            if row[s] > row[best] {
                                best = s;
                            }
                        }
                        best as u8
                    }
                }
            };
            w.step();
        }
    });
    out
}

/// The values a don't-care file of layer `layer` stores for the raw
/// scores `scores`, given each entry's best exit `exits` ([`NO_EXIT`]
/// where it has none). `None` if the two do not fit: tables of the wrong
/// size, or a best exit above its score (the score is the best of all
/// moves).
pub fn fill(scores: &[u8], exits: &[i8], layer: u32, rule: FillRule) -> Option<Vec<u8>> {
    let shape = Shape::new(layer);
    if scores.len() != exits.len() || scores.len() as u64 != crate::index::layer_size(layer) {
        return None;
    }
    let n = layer as i32;
    let sym = |v: i32| (v + n) as u8;
    let mut truth = vec![0u8; scores.len()];
    let mut cap = vec![0u8; scores.len()];
    let ok = truth
        .par_iter_mut()
        .zip(cap.par_iter_mut())
        .zip(scores.par_iter().zip(exits.par_iter()))
        .all(|((t, k), (&s, &e))| {
            let s = s as i8 as i32;
            if s.abs() > n || (e != NO_EXIT && e as i32 > s) {
                return false;
            }
            *t = sym(s);
            *k = if e as i32 == s { sym(s) } else { u8::MAX };
            true
        });
    if !ok {
        return None;
    }
    let rounds = match rule {
        FillRule::Previous => 1,
        FillRule::Likeliest { rounds } => rounds.max(1),
    };
    let mut stored = truth.clone();
    for _ in 0..rounds {
        let counts = match rule {
            FillRule::Previous => Vec::new(),
            FillRule::Likeliest { .. } => count(shape, &stored),
        };
        stored = choose(shape, rule, &counts, &truth, &cap);
    }
    Some(
        stored
            .into_par_iter()
            .map(|s| (s as i32 - n) as i8 as u8)
            .collect(),
    )
}

/// The rule [`encode_dont_care`] fills with.
pub const FILL: FillRule = FillRule::Likeliest { rounds: 1 };

/// The don't-care format 4 file of the raw scores `scores` of layer
/// `layer` (built under `rules`), given each entry's best exit `exits`,
/// and the values it stores. Tables that do not fit (see [`fill`]) or bad
/// settings are [`io::ErrorKind::InvalidInput`].
pub fn encode_dont_care(
    scores: &[u8],
    exits: &[i8],
    rules: &Rules,
    layer: u32,
    lay: V4Settings,
) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let stored = fill(scores, exits, layer, FILL).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("layer {layer}: the best exits do not fit the scores"),
        )
    })?;
    // Every value stored resolves to its score.
    debug_assert!(stored
        .par_iter()
        .zip(scores.par_iter().zip(exits.par_iter()))
        .all(|(&v, (&s, &e))| (v as i8).max(e) == s as i8));
    let sum = xxhash_rust::xxh3::xxh3_64(scores);
    let file = encode_file(&stored, None, Some(sum), rules, layer, lay)?;
    Ok((file, stored))
}

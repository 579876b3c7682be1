//! The distance to the next capture: best play that reaches its score.
//!
//! A score says what a position is worth, not how to get it: a move that
//! keeps the score may repeat a position while the score it promises needs
//! a capture later, and a game ends at the first repetition. The distance
//! table (`dist.n`, one byte a position, beside `scores.n`) says how far
//! the next capture is when both sides keep the score, so that a player
//! who takes, among the moves that keep the score, the one of least
//! distance always makes progress (the chess tablebases' DTZ, with the
//! capture as the zeroing move).
//!
//! # Definition
//!
//! Let `S` be the score ([`super`]). A legal move of `P` (layer `n`)
//! **keeps the score** when its worth equals `S(P)`: an exit (a capture
//! of `c` seeds into `C`: `c - S(C)`; a move that leaves the opponent
//! without seeds: `n`) or an internal move to `Q` (`-S(Q)`). Then
//! `d(P)`, in plies:
//!
//! * `0` when `P` has no legal move (the game is over);
//! * when `S(P) >= 0` (the mover needs progress, or at 0 neither side
//!   does and both take the fastest way): the least of `1` for a kept
//!   exit and `1 + d(Q)` for a kept internal move to `Q`;
//! * when `S(P) < 0` (the opponent needs progress, the mover delays it):
//!   the greatest of the same over every move that keeps the score;
//! * "no distance" ([`NONE`]) where no such play reaches a capture: the
//!   score is reached by endless play (it is 0 then).
//!
//! This is the least solution of its recurrence: every finite value comes
//! from a chain of kept moves whose distance falls by one a ply down to a
//! capture or the end, so the solution is unique and a table that obeys
//! the recurrence at every position is the table (what the forward check,
//! [`crate::verify::bellman_check`], checks). Along best play (the mover of a position with
//! `S >= 0` takes a kept move of least distance, the mover of one with
//! `S < 0` any kept move) the distance falls by exactly one a ply, so no
//! position repeats before the next capture.
//!
//! Every position with `S != 0` has a distance: the score sweep settles
//! `S(P) = t > 0` either through a kept exit or through a child settled
//! at `-t` before it, and `S(Q) = -t` when every child is settled at `t`
//! or more before it, so the sweep's order is a chain of kept moves down
//! to a capture. A position with `S = 0` has one unless only endless play
//! keeps its score. A pinned position ([`super`]: `lower == upper`)
//! always has one: its mover can keep the score while every endless play
//! counts against it, so a line of kept moves ends in a capture.
//!
//! # Computing it
//!
//! From the finished scores of the layer and its lower layers, as a
//! retrograde breadth-first pass over the kept internal moves
//! ([`solve_distance`]; the in-memory solver runs it in its own state
//! after the score sweep). A first pass over the layer finds every
//! position's kept exit (from the solver's best exits where it kept
//! them, else from the moves and the lower layers) or counts its kept
//! internal moves: positions at distance 0 and 1 are known then. Then, a
//! distance at a time, the positions at distance `k` visit their
//! predecessors (un-moves,
//! [`crate::rules::Position::for_each_predecessor`]): a predecessor whose
//! move keeps its score gets `k + 1` at once when `S >= 0`, and when
//! `S < 0` once its last kept internal move is accounted for. The pass is
//! breadth-first, so its result is the same bytes for any number of
//! threads. Its state is two bytes a position, the distance found (or
//! what the position still waits for: no count when `S >= 0`, the kept
//! internal moves not yet at a distance when `S < 0`) beside the score,
//! so that a predecessor's score and distance are one cache line, and a
//! mask a block of the distances found in it ([`cost`]).
//!
//! # Choices
//!
//! At a score of 0 neither side needs progress under the database's rule
//! (endless play splits the rest evenly), but a line that captures keeps
//! the score under every rule: both sides take the fastest way, so that
//! best play by both captures where it can. A distance longer than
//! [`MAX`] would be refused ([`SolveError::DistanceOverflow`]); the
//! longest of awari's layers 0..=24 is 130 plies (layer 12).

use crate::error::Result;
use crate::index::{layer_size, rank, rank_packed, unrank_unchecked, LayerIter};
use crate::mem::{prefetch, Buffer, Words};
use crate::rules::{GrandSlam, Position, Rules};
use crate::solve::{Observer, SolveError};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// "No distance": only endless play keeps the score.
pub const NONE: u8 = 255;
/// The largest distance a table holds; the values between it and
/// [`NONE`] are never written (the pass uses them while it runs).
pub const MAX: u8 = 248;
/// A byte of the running pass: no distance found yet, and no count of
/// moves to wait for (`S >= 0`); `PENDING - k`: `k` kept internal moves
/// not yet at a distance (`S < 0`).
const PENDING: u8 = NONE;

/// The scores the pass reads: the layer's own and its lower layers'.
pub trait Scores: Sync {
    /// The score at Goedel index `g` of layer `k` (`k < n` for the lower
    /// layers, `n` for the layer itself).
    fn score(&self, k: u32, g: u64) -> Result<i8>;
    /// A hint that `score(k, g)` will be asked for soon.
    fn prefetch(&self, _k: u32, _g: u64) {}
}

/// Scores held as slices, one per layer (index `k`: layer `k`).
impl<T: AsRef<[u8]> + Sync> Scores for [T] {
    #[inline]
    fn score(&self, k: u32, g: u64) -> Result<i8> {
        Ok(self[k as usize].as_ref()[g as usize] as i8)
    }
    #[inline]
    fn prefetch(&self, k: u32, g: u64) {
        prefetch(&self[k as usize].as_ref()[g as usize]);
    }
}

/// The best exit of every position of a layer, as the solver computed it
/// (`enc(e)`, see [`super`]; a position without a legal move has its
/// final score as its one exit): a position with a score of 0 or more
/// has a kept exit when its best exit equals its score, so the pass
/// needs neither its moves' children nor the lower layers for it.
pub trait BestExits: Sync {
    /// The exits of positions `start..start + out.len()`, in index order.
    fn read(&self, start: u64, out: &mut [u8]) -> Result<()>;
}

/// Positions whose lookups the first pass prefetches together.
const BATCH: usize = 32;

/// The pass's state: two bytes a position, the distance (or what it
/// waits for) and the score (as the file holds it), four positions to a
/// 64-bit word, so that a predecessor's score and distance are one cache
/// line. Every access while the pass runs is an atomic access to a word
/// (atomics of different sizes must not race).
struct Pairs<'a>(&'a [AtomicU64]);

impl Pairs<'_> {
    #[inline(always)]
    fn word(&self, g: u64) -> &AtomicU64 {
        &self.0[(g / 4) as usize]
    }
    /// The score of position `g`.
    #[inline(always)]
    fn score(&self, g: u64) -> i8 {
        (self.word(g).load(Relaxed) >> (16 * (g % 4) + 8)) as u8 as i8
    }
    #[inline(always)]
    fn prefetch(&self, g: u64) {
        prefetch(self.word(g) as *const AtomicU64 as *const u8);
    }
}

/// A position of the first pass between its moves and its lookups: the
/// children whose scores decide which of its moves keep its score,
/// prefetched. With a score of 0 or more only its exits matter (a kept
/// exit makes it 1); below 0 only its internal moves (their number).
struct Look {
    g: u64,
    s: i8,
    over: bool,
    exit: bool,
    /// `(layer, index, captured)` of each child to look up.
    children: [(u32, u64, u8); 6],
    len: u8,
}

impl Look {
    /// `p`, at index `g`; `exit`: whether its best exit keeps its score,
    /// when the solver said so.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn new<S: Scores + ?Sized>(
        n: u32,
        rules: &Rules,
        g: u64,
        p: &Position,
        pairs: &Pairs,
        exit: Option<bool>,
        lower: &S,
    ) -> Look {
        let s = pairs.score(g);
        let mut l = Look {
            g,
            s,
            over: true,
            exit: exit.unwrap_or(false),
            children: [(0, 0, 0); 6],
            len: 0,
        };
        // With its best exit known, a position of score 0 or more needs
        // its moves only to tell whether it has one: a mover with seeds
        // always has a legal move, but where feeding an empty opponent
        // may be impossible or every move a forbidden grand slam.
        if exit.is_some()
            && s >= 0
            && p.opponent_seeds() > 0
            && rules.grand_slam != GrandSlam::Never
        {
            l.over = p.mover_seeds() == 0;
            return l;
        }
        for m in p.moves(rules).legal() {
            l.over = false;
            let c = m.captured as u32;
            let lookup = if m.child.mover_seeds() == 0 {
                l.exit |= n as i32 == s as i32;
                None
            } else if c > 0 {
                (s >= 0 && exit.is_none()).then_some(n - c)
            } else {
                (s < 0).then_some(n)
            };
            if let Some(k) = lookup {
                let cg = rank(&m.child);
                if k == n {
                    pairs.prefetch(cg);
                } else {
                    lower.prefetch(k, cg);
                }
                l.children[l.len as usize] = (k, cg, m.captured);
                l.len += 1;
            }
        }
        l
    }

    /// The position's first byte: 0 or 1, else what it waits for.
    #[inline]
    fn first<S: Scores + ?Sized>(&self, n: u32, pairs: &Pairs, lower: &S) -> Result<u8> {
        if self.over {
            return Ok(0);
        }
        let s = self.s as i32;
        let mut exit = self.exit;
        let mut internal = 0u8;
        for &(k, cg, c) in &self.children[..self.len as usize] {
            if k < n {
                exit |= c as i32 - lower.score(k, cg)? as i32 == s;
            } else if -(pairs.score(cg) as i32) == s {
                internal += 1;
            }
        }
        Ok(if s >= 0 {
            if exit {
                1
            } else {
                PENDING
            }
        } else if internal == 0 {
            1
        } else {
            PENDING - internal
        })
    }
}

/// What the pass needs for layer `n`: two bytes a position (its state:
/// the distance being found beside the score) and a mask of 8 bytes a
/// block of 4,096 positions, and its estimate with the baseline (the
/// lower layers' scores it reads are mapped files).
pub fn cost(n: u32) -> super::Cost {
    let size = layer_size(n);
    let working = 2 * size.next_multiple_of(4) + size.div_ceil(BLOCK) * 8;
    super::Cost {
        working,
        estimate: working + super::BASELINE_BYTES,
    }
}

/// Positions of a block: each has a mask of the distances (modulo 64)
/// found in it, so that a step skips the blocks without its distance.
const BLOCK: u64 = 1 << 12;

/// Computes the distance table of layer `n` from the scores of the layer
/// and of the layers below it (`scores`, layer `k` at index `k`); `obs`
/// sees `2 * layer_size(n)` units of work. The table is one byte a
/// position: the distance, or [`NONE`]. It works in two bytes a
/// position ([`cost`]).
pub fn solve_distance<S: Scores + ?Sized>(
    n: u32,
    rules: &Rules,
    scores: &S,
    obs: &dyn Observer,
) -> Result<Buffer> {
    let size = layer_size(n);
    let mut state = Buffer::zeroed(2 * size.next_multiple_of(4) as usize)?;
    state
        .as_mut_slice()
        .par_chunks_mut(2 * BLOCK as usize)
        .enumerate()
        .try_for_each(|(b, c)| {
            for (j, pair) in c.chunks_exact_mut(2).enumerate() {
                let g = b as u64 * BLOCK + j as u64;
                if g < size {
                    pair[1] = scores.score(n, g)? as u8;
                }
            }
            Ok::<(), crate::error::Error>(())
        })?;
    run(n, rules, state.atomic_words(), None, scores, obs)?;
    // The distances to the front, in place: entry `g` from byte `2g`.
    let bytes = state.as_mut_slice();
    for g in 0..size as usize {
        bytes[g] = bytes[2 * g];
    }
    state.truncate(size as usize);
    Ok(state)
}

/// The pass itself, on the state `words` of layer `n` (two bytes a
/// position, [`Pairs`]: the second the score as the file holds it, the
/// first free; four positions a word, the last word padded), reading the
/// lower layers' scores from `lower` and, when the solver kept them, the
/// best exits from `exits`. Afterwards the first byte of each position is
/// its distance, or [`NONE`]; `obs` sees `2 * layer_size(n)` units.
pub(crate) fn run<S: Scores + ?Sized>(
    n: u32,
    rules: &Rules,
    words: &[AtomicU64],
    exits: Option<&dyn BestExits>,
    lower: &S,
    obs: &dyn Observer,
) -> Result<()> {
    let size = layer_size(n);
    let pairs = Pairs(words);
    let blocks = size.div_ceil(BLOCK);
    let masks = Words::zeroed(blocks as usize)?;
    // Positions at distance 1 found by the first pass.
    let ones = AtomicU64::new(0);
    (0..blocks).into_par_iter().try_for_each(|b| {
        let start = b * BLOCK;
        let end = (start + BLOCK).min(size);
        let mut best = Vec::new();
        if let Some(e) = exits {
            best.resize((end - start) as usize, 0);
            e.read(start, &mut best)?;
        }
        let mut batch = Vec::with_capacity(BATCH);
        let mut iter = LayerIter::range(n, start, end).peekable();
        let (mut mask, mut one) = (0u64, 0u64);
        while iter.peek().is_some() {
            batch.clear();
            for (g, p) in iter.by_ref().take(BATCH) {
                let kept = best
                    .get((g - start) as usize)
                    .map(|&e| super::dec(e) == pairs.score(g) as i32);
                batch.push(Look::new(n, rules, g, &p, &pairs, kept, lower));
            }
            for l in &batch {
                let byte = l.first(n, &pairs, lower)?;
                if byte <= MAX {
                    mask |= 1 << byte;
                }
                one += u64::from(byte == 1);
                let shift = 16 * (l.g % 4);
                pairs
                    .word(l.g)
                    .fetch_update(Relaxed, Relaxed, |w| {
                        Some(w & !(0xff << shift) | (byte as u64) << shift)
                    })
                    .ok();
            }
        }
        masks[b as usize].store(mask, Relaxed);
        ones.fetch_add(one, Relaxed);
        obs.advance(end - start);
        Ok::<(), crate::error::Error>(())
    })?;
    let mut found = 0u64;
    for level in 0u32.. {
        // Positions found at `level + 1`.
        let any = AtomicU64::new(if level == 0 { ones.load(Relaxed) } else { 0 });
        let visited = (0..blocks as usize)
            .into_par_iter()
            .with_min_len(4)
            .map(|b| {
                if masks[b].load(Relaxed) & 1 << (level % 64) == 0 {
                    return Ok(0);
                }
                expand(n, rules, &pairs, &masks, b as u64, level, &any)
            })
            .sum::<Result<u64>>()?;
        found += visited;
        obs.advance(visited);
        if any.load(Relaxed) == 0 {
            break;
        }
    }
    obs.advance(size - found);
    // What still waits has no distance.
    words.par_iter().for_each(|w| {
        let mut x = w.load(Relaxed).to_le_bytes();
        for d in x.iter_mut().step_by(2) {
            if *d > MAX {
                *d = NONE;
            }
        }
        w.store(u64::from_le_bytes(x), Relaxed);
    });
    Ok(())
}

/// Visits the predecessors of the positions of block `b` at distance
/// `level`, settling at `level + 1` those whose last awaited kept move
/// this is (counted in `any`); returns the positions visited.
fn expand(
    n: u32,
    rules: &Rules,
    pairs: &Pairs,
    masks: &[AtomicU64],
    b: u64,
    level: u32,
    any: &AtomicU64,
) -> Result<u64> {
    let size = layer_size(n);
    let (start, end) = (b * BLOCK, ((b + 1) * BLOCK).min(size));
    // The level in each position's first byte, the scores' bytes set.
    const SCORES: u64 = 0xff00_ff00_ff00_ff00;
    let target = u64::from_le_bytes([level.min(255) as u8, 0, level.min(255) as u8, 0, 0, 0, 0, 0])
        * 0x1_0000_0001;
    let mut visited = 0;
    // Predecessors `(index, the score that keeps its move)` of a few
    // positions, prefetched together.
    let mut preds: Vec<(u64, i32)> = Vec::with_capacity(2 * PREDS);
    let mut settled = 0u64;
    for w in start / 4..end.div_ceil(4) {
        let x = (pairs.0[w as usize].load(Relaxed) ^ target) | SCORES;
        // A position at the level is a zero byte of `x` (this test may
        // also flag a byte above a zero one: each is checked).
        if (x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080) == 0 {
            continue;
        }
        for j in 0..4 {
            let g = w * 4 + j;
            if (x >> (16 * j)) & 0xff != 0 || g >= end {
                continue;
            }
            visited += 1;
            let want = -(pairs.score(g) as i32);
            unrank_unchecked(n, g).for_each_predecessor_packed(rules, |p| {
                let gp = rank_packed(p);
                pairs.prefetch(gp);
                preds.push((gp, want));
            });
            if preds.len() >= PREDS {
                settled += settle(n, pairs, masks, &preds, level + 1)?;
                preds.clear();
            }
        }
    }
    settled += settle(n, pairs, masks, &preds, level + 1)?;
    any.fetch_add(settled, Relaxed);
    Ok(visited)
}

/// Predecessors [`expand`] prefetches before it settles any.
const PREDS: usize = 64;

/// Settles at `step` the predecessors `preds` (each with the score that
/// keeps its move) whose last awaited kept move this is; how many.
fn settle(
    n: u32,
    pairs: &Pairs,
    masks: &[AtomicU64],
    preds: &[(u64, i32)],
    step: u32,
) -> Result<u64> {
    let mut settled = 0;
    for &(gp, want) in preds {
        let shift = 16 * (gp % 4);
        let mut sp = 0;
        let done = pairs
            .word(gp)
            .fetch_update(Relaxed, Relaxed, |w| {
                let b = (w >> shift) as u8;
                sp = (w >> (shift + 8)) as u8 as i8 as i32;
                let new = match b {
                    _ if b <= MAX || sp != want => return None,
                    _ if sp < 0 && b != PENDING - 1 => b + 1,
                    _ => step.min(MAX as u32 + 1) as u8,
                };
                Some(w & !(0xff << shift) | (new as u64) << shift)
            })
            .is_ok_and(|w| sp >= 0 || (w >> shift) as u8 == PENDING - 1);
        if done {
            if step > MAX as u32 {
                return Err(SolveError::DistanceOverflow { layer: n, max: MAX }.into());
            }
            masks[(gp / BLOCK) as usize].fetch_or(1 << (step % 64), Relaxed);
            settled += 1;
        }
    }
    Ok(settled)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The distance `p` (layer `n`, score `s`) must have by the recurrence,
    /// given its children's distances (`dist(g)`: the distance at index `g`
    /// of layer `n`); [`NONE`] when none.
    fn expected<S: Scores + ?Sized>(
        n: u32,
        rules: &Rules,
        p: &Position,
        s: i8,
        scores: &S,
        dist: impl Fn(u64) -> Result<u8>,
    ) -> Result<u8> {
        let mut best: Option<u32> = None;
        let mut over = true;
        let si = s as i32;
        let maximize = s < 0;
        let mut take = |d: u32| {
            best = Some(match best {
                None => d,
                Some(b) if maximize => b.max(d),
                Some(b) => b.min(d),
            })
        };
        for m in p.moves(rules).legal() {
            over = false;
            if m.child.mover_seeds() == 0 {
                if n as i32 == si {
                    take(1);
                }
            } else if m.captured > 0 {
                let c = m.captured as u32;
                if c as i32 - scores.score(n - c, rank(&m.child))? as i32 == si {
                    take(1);
                }
            } else {
                let g = rank(&m.child);
                if -(scores.score(n, g)? as i32) == si {
                    let d = dist(g)?;
                    take(if d == NONE { u32::MAX } else { 1 + d as u32 });
                }
            }
        }
        if over {
            return Ok(0);
        }
        Ok(match best {
            Some(d) if d <= MAX as u32 => d as u8,
            _ => NONE,
        })
    }

    /// The distance by plain fixpoint iteration of the recurrence.
    fn naive(n: u32, rules: &Rules, scores: &[Vec<u8>]) -> Vec<u8> {
        let size = layer_size(n) as usize;
        let mut d = vec![NONE; size];
        loop {
            let mut changed = false;
            for (g, p) in LayerIter::new(n) {
                let s = scores[n as usize][g as usize] as i8;
                let e = expected(n, rules, &p, s, scores, |h| Ok(d[h as usize])).unwrap();
                if e != d[g as usize] {
                    d[g as usize] = e;
                    changed = true;
                }
            }
            if !changed {
                return d;
            }
        }
    }

    #[test]
    fn the_pass_equals_the_fixpoint_and_every_nonzero_score_has_a_distance() {
        for rules in &crate::rules::PRESETS {
            let tables = crate::solve::memory::solve_all(10, rules, false).unwrap();
            let scores: Vec<Vec<u8>> = tables.into_iter().map(|t| t[0].clone()).collect();
            for n in 0..=10 {
                let d = solve_distance(n, rules, &scores[..], &crate::solve::Silent).unwrap();
                assert_eq!(
                    &d[..],
                    &naive(n, rules, &scores)[..],
                    "{} layer {n}",
                    rules.name
                );
                for (g, &v) in d.iter().enumerate() {
                    if scores[n as usize][g] != 0 {
                        assert_ne!(v, NONE, "{} layer {n} index {g}", rules.name);
                    }
                }
            }
        }
    }
}

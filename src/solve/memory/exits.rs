//! The in-memory solver's exits: every position's best exits (for the
//! score and the envelope's two bounds) and its counters of internal
//! moves, computed in one pass that prefetches the lower layers' entries of
//! a batch's captures before reading any; the score's exits wait in a
//! scratch file while the envelope sweep runs.

use super::sweep::{bit, Masks};
use super::{A, B, CHUNK, CNT, SUB};
use crate::error::{Error, Result};
use crate::index::{layer_size, rank};
use crate::mem::prefetch;
use crate::rules::{Position, Rules};
use crate::solve::kernel::BATCH;
use crate::solve::SolveError;
use crate::solve::{dec, enc, Below, Observer, NO_EXIT};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

#[derive(Clone, Copy)]
struct Exits {
    score: i32,
    lower: i32,
    upper: i32,
    internal: u8,
}

/// The moves of one position, before the lower layers are read: exits
/// known without them, and the captures whose children must be looked up.
#[derive(Clone, Copy)]
struct Plan {
    g: u64,
    known: Exits,
    captures: [(u8, u64); 6],
    ncaptures: u8,
}

/// First half of the exits of `p` (layer `n`, index `g`): everything but the
/// lookups of capture children, which are prefetched.
#[inline]
fn plan(n: u32, rules: &Rules, g: u64, p: &Position, below: &[Below], envelope: bool) -> Plan {
    let ni = n as i32;
    let mut plan = Plan {
        g,
        known: Exits {
            score: NO_EXIT,
            lower: NO_EXIT,
            upper: NO_EXIT,
            internal: 0,
        },
        captures: [(0, 0); 6],
        ncaptures: 0,
    };
    let e = &mut plan.known;
    if p.mover_seeds() == 0 {
        // No move: the opponent takes everything left.
        (e.score, e.lower, e.upper) = (-ni, -ni, -ni);
        return plan;
    }
    let mut any = false;
    for m in p.moves(rules).legal() {
        any = true;
        if m.child.mover_seeds() == 0 {
            // The opponent is left without seeds: the mover gets the
            // capture plus every seed left.
            (e.score, e.lower, e.upper) = (ni, ni, ni);
        } else if m.captured > 0 {
            let cg = rank(&m.child);
            let t = &below[(n - m.captured as u32) as usize];
            prefetch(&t.score[cg as usize]);
            if envelope {
                for table in [t.lower, t.upper].into_iter().flatten() {
                    prefetch(&table[cg as usize]);
                }
            }
            plan.captures[plan.ncaptures as usize] = (m.captured, cg);
            plan.ncaptures += 1;
        } else {
            e.internal += 1;
        }
    }
    if !any {
        // No legal move (mandatory feeding that cannot feed): each side
        // takes its own row.
        let v = p.final_score(rules);
        (e.score, e.lower, e.upper) = (v, v, v);
    }
    plan
}

/// Second half: the best exits for the score, and for the envelope's bounds
/// with `envelope`.
#[inline]
fn finish(n: u32, plan: &Plan, below: &[Below], envelope: bool) -> Exits {
    let mut e = plan.known;
    for &(c, g) in &plan.captures[..plan.ncaptures as usize] {
        let t = &below[(n - c as u32) as usize];
        let c = c as i32;
        let g = g as usize;
        e.score = e.score.max(c - t.score[g] as i8 as i32);
        if envelope {
            // Present: checked by `check_below` before the solve.
            let (Some(lo), Some(hi)) = (t.lower, t.upper) else {
                continue;
            };
            // Across a move the roles swap: our lower bound scores cycles
            // against us, which is the child's upper bound.
            e.lower = e.lower.max(c - hi[g] as i8 as i32);
            e.upper = e.upper.max(c - lo[g] as i8 as i32);
        }
    }
    e
}

/// Which exits a pass over the layer stores.
#[derive(Clone, Copy)]
pub(super) enum Pass<'a> {
    /// Computes every exit once: the counters, `lower` exits in `A` and
    /// `upper` exits in `B`; the score's exits go to the scratch file for
    /// the score sweep.
    Envelope(&'a Scratch),
    /// The score's exits in `A`, read back from the scratch file (the
    /// envelope pass stored the counters).
    ScoreFromScratch(&'a Scratch),
    /// Computes the score's exits and the counters (no envelope).
    Score,
}

/// The score's exits while the envelope sweep runs: one byte per position
/// in an unnamed temporary file (it disappears with the process), written
/// and read back in chunks in index order. The state has no room for them,
/// and computing them again would mean a second pass of move generation and
/// lower-layer lookups.
pub(super) struct Scratch {
    file: std::fs::File,
    dir: std::path::PathBuf,
}

impl Scratch {
    pub(super) fn new(dir: &std::path::Path) -> Result<Self> {
        let file = tempfile::tempfile_in(dir).map_err(|source| SolveError::Scratch {
            dir: dir.to_path_buf(),
            source,
        })?;
        Ok(Scratch {
            file,
            dir: dir.to_path_buf(),
        })
    }
    fn err(&self, source: std::io::Error) -> Error {
        SolveError::Scratch {
            dir: self.dir.clone(),
            source,
        }
        .into()
    }
    fn write(&self, at: u64, buf: &[u8]) -> Result<()> {
        use std::os::unix::fs::FileExt;
        self.file.write_all_at(buf, at).map_err(|e| self.err(e))
    }
    fn read(&self, at: u64, buf: &mut [u8]) -> Result<()> {
        use std::os::unix::fs::FileExt;
        self.file.read_exact_at(buf, at).map_err(|e| self.err(e))
    }
}

/// The score's best exits, for the distance pass.
impl crate::solve::distance::BestExits for Scratch {
    fn read(&self, start: u64, out: &mut [u8]) -> Result<()> {
        Scratch::read(self, start, out)
    }
}

/// Computes every position's exits (and counters) for one sweep, and the
/// sweep's threshold masks.
pub(super) fn init(
    n: u32,
    rules: &Rules,
    below: &[Below],
    st: &[AtomicU8],
    stride: usize,
    pass: Pass,
    obs: &dyn Observer,
) -> Result<Masks> {
    let size = layer_size(n);
    let chunks = size.div_ceil(CHUNK);
    let ni = n as i32;
    let envelope = matches!(pass, Pass::Envelope(_));
    let last = if envelope { 1 - ni } else { 1 };
    let masks = Masks::new(size.div_ceil(SUB));
    (0..chunks).into_par_iter().try_for_each(|c| {
        let start = c * CHUNK;
        let len = CHUNK.min(size - start);
        const K: usize = (CHUNK / SUB) as usize;
        let mut bits = [0u128; K];
        // A position's sweep values: the `>= t` side waits for its exit;
        // with no internal move the `<= -t` side waits for minus its exit.
        let mut mark = |g: u64, win: i32, lose: i32, internal: u8| {
            let k = ((g - start) / SUB) as usize;
            bits[k] |= bit(win, n, last);
            if internal == 0 {
                bits[k] |= bit(-lose, n, last);
            }
        };
        if let Pass::ScoreFromScratch(scratch) = pass {
            let mut buf = vec![0u8; len as usize];
            scratch.read(start, &mut buf)?;
            for (g, &b) in (start..).zip(&buf) {
                let i = g as usize * stride;
                st[i + A].store(b, Relaxed);
                let internal = st[i + CNT].load(Relaxed) >> 3 & 7;
                mark(g, dec(b), dec(b), internal);
            }
        } else {
            let mut scores = Vec::with_capacity(if envelope { len as usize } else { 0 });
            let mut plans: Vec<Plan> = Vec::with_capacity(BATCH);
            let mut iter = crate::index::LayerIter::range(n, start, start + len).peekable();
            while iter.peek().is_some() {
                plans.clear();
                plans.extend(
                    iter.by_ref()
                        .take(BATCH)
                        .map(|(g, p)| plan(n, rules, g, &p, below, envelope)),
                );
                for pl in &plans {
                    let e = finish(n, pl, below, envelope);
                    let i = pl.g as usize * stride;
                    st[i + CNT].store(e.internal | (e.internal << 3), Relaxed);
                    if envelope {
                        st[i + A].store(enc(e.lower), Relaxed);
                        st[i + B].store(enc(e.upper), Relaxed);
                        scores.push(enc(e.score));
                        mark(pl.g, e.lower, e.upper, e.internal);
                    } else {
                        st[i + A].store(enc(e.score), Relaxed);
                        mark(pl.g, e.score, e.score, e.internal);
                    }
                }
            }
            if let Pass::Envelope(scratch) = pass {
                scratch.write(start, &scores)?;
            }
            obs.advance(len * if envelope { 2 } else { 1 });
        }
        for (k, &b) in bits.iter().enumerate().take(len.div_ceil(SUB) as usize) {
            masks.store((start / SUB) as usize + k, b);
        }
        Ok::<(), Error>(())
    })?;
    Ok(masks)
}

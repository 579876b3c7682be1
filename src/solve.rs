//! Solving one layer by threshold sweeps (`spec/ALGORITHM.md`).
//!
//! The score and the two envelope bounds are each the same kind of game: a
//! value `v(P) >= t` is reached through an exit worth at least `t` or an
//! internal child whose value is at most `-t`; `v(Q) <= -t` is reached when
//! every exit of `Q` is worth at most `-t` and every internal child reached
//! `>= t`. For the score both sides live in one array; for the envelope the
//! `>= t` side is `lower` and the `<= -t` side is `upper` (the roles swap
//! across a move, because each bound scores endless play against the other
//! side). One [`Sweep`] handles both cases.
//!
//! Per position the solver keeps one byte per quantity (a settled flag and a
//! 7-bit value; before settling the value is the best exit) plus one byte of
//! two 3-bit counters of internal moves. Thresholds run from `n` down; within
//! a threshold every settlement is propagated depth-first to the
//! predecessors, claimed with a compare-and-swap. The set of positions that
//! settle at each threshold does not depend on the order of the work, so the
//! tables are the same bytes for any number of threads.

use crate::index::{layer_size, rank, unrank_unchecked};
use crate::rules::Position;
use memmap2::MmapMut;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};
use std::time::Instant;

/// Value of "no exit": below every real value.
const NO_EXIT: i32 = -64;
const SETTLED: u8 = 0x80;
/// Positions per unit of parallel work.
const CHUNK: u64 = 1 << 15;

#[inline(always)]
fn enc(v: i32) -> u8 {
    (v + 64) as u8
}
#[inline(always)]
fn dec(b: u8) -> i32 {
    (b & 0x7f) as i32 - 64
}

/// The solved tables of a layer below the one being solved, as stored in the
/// files (one signed byte per Goedel index).
#[derive(Clone, Copy)]
pub struct Below<'a> {
    /// `scores.k`.
    pub score: &'a [u8],
    /// `lower.k`, when the envelope is built.
    pub lower: Option<&'a [u8]>,
    /// `upper.k`, when the envelope is built.
    pub upper: Option<&'a [u8]>,
}

/// What the solver reports while it works.
pub trait Observer: Sync {
    /// A phase of the layer starts.
    fn phase(&self, _name: &'static str) {}
    /// `k` more positions were settled (or initialised, in the first phase).
    fn advance(&self, _k: u64) {}
}

/// An observer that ignores everything.
pub struct Silent;
impl Observer for Silent {}

/// Figures of one solved layer.
#[derive(Clone, Debug, Default)]
pub struct SolveStats {
    /// Settlements (predecessor walks) of the envelope sweep.
    pub envelope_settlements: u64,
    /// Settlements of the score sweep.
    pub score_settlements: u64,
    /// Seconds spent computing exits and counters.
    pub init_seconds: f64,
    /// Seconds in the envelope sweep.
    pub envelope_seconds: f64,
    /// Seconds in the score sweep.
    pub score_seconds: f64,
}

/// A solved layer: one signed byte per Goedel index in each table.
pub struct Solved {
    /// The scores.
    pub score: Buffer,
    /// Lower and upper bounds of the envelope, if built.
    pub envelope: Option<(Buffer, Buffer)>,
    /// Figures.
    pub stats: SolveStats,
}

/// A zero-filled anonymous mapping, advised onto huge pages: the solver's
/// arrays are accessed at random, and huge pages spare most TLB misses.
pub struct Buffer {
    map: MmapMut,
    len: usize,
}

impl Buffer {
    /// `len` zero bytes.
    pub fn zeroed(len: usize) -> std::io::Result<Self> {
        let map = MmapMut::map_anon(len.max(1))?;
        #[cfg(target_os = "linux")]
        {
            // Only a hint: a kernel without transparent huge pages ignores it.
            let _ = map.advise(memmap2::Advice::HugePage);
        }
        Ok(Buffer { map, len })
    }
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.map[..self.len]
    }
    /// The bytes, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.map[..self.len]
    }
    fn atomic(&mut self) -> &[AtomicU8] {
        let s = self.as_mut_slice();
        // SAFETY: AtomicU8 has the size and alignment of u8, and the
        // exclusive borrow of the buffer keeps every other access out for the
        // lifetime of the returned slice.
        unsafe { &*(s as *mut [u8] as *const [AtomicU8]) }
    }
}

impl std::ops::Deref for Buffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

/// Bytes of working memory the solver needs for layer `n`, beyond the
/// mapped lower layers: one byte per quantity plus the counters.
pub fn working_bytes(n: u32, envelope: bool) -> u64 {
    layer_size(n) * if envelope { 4 } else { 2 }
}

#[derive(Clone, Copy)]
struct Exits {
    score: i32,
    lower: i32,
    upper: i32,
    internal: u8,
}

/// Best exits of `p` (layer `n`) for the score and both bounds, and its
/// number of internal moves.
#[inline]
fn exits(n: u32, p: &Position, below: &[Below], envelope: bool) -> Exits {
    let ni = n as i32;
    if p.mover_seeds() == 0 {
        // No move: the opponent takes everything left.
        return Exits {
            score: -ni,
            lower: -ni,
            upper: -ni,
            internal: 0,
        };
    }
    let mut e = Exits {
        score: NO_EXIT,
        lower: NO_EXIT,
        upper: NO_EXIT,
        internal: 0,
    };
    for m in p.moves().legal() {
        let (s, lo, hi);
        if m.child.mover_seeds() == 0 {
            // The opponent is left without seeds: the mover gets the
            // capture plus every seed left.
            (s, lo, hi) = (ni, ni, ni);
        } else if m.captured > 0 {
            let c = m.captured as i32;
            let t = &below[(n - m.captured as u32) as usize];
            let g = rank(&m.child) as usize;
            s = c - t.score[g] as i8 as i32;
            if envelope {
                // Across a move the roles swap: our lower bound scores
                // cycles against us, which is the child's upper bound.
                lo = c - t.upper.expect("envelope of lower layer")[g] as i8 as i32;
                hi = c - t.lower.expect("envelope of lower layer")[g] as i8 as i32;
            } else {
                (lo, hi) = (s, s);
            }
        } else {
            e.internal += 1;
            continue;
        }
        e.score = e.score.max(s);
        e.lower = e.lower.max(lo);
        e.upper = e.upper.max(hi);
    }
    e
}

#[derive(Clone, Copy)]
struct Item {
    pos: Position,
    /// Settled on the `<= -t` side.
    lose: bool,
}

/// One threshold game: `win` holds the `>= t` side, `lose` the `<= -t` side
/// (the same array for the score), `cnt >> shift & 7` the internal children
/// not yet known to be `>= t`.
struct Sweep<'a> {
    n: u32,
    win: &'a [AtomicU8],
    lose: &'a [AtomicU8],
    cnt: &'a [AtomicU8],
    shift: u32,
}

impl Sweep<'_> {
    /// Runs thresholds `n` down to `last`; returns the settlements made.
    fn run(&self, last: i32, obs: &dyn Observer) -> u64 {
        let size = self.win.len() as u64;
        let chunks = size.div_ceil(CHUNK);
        let total = AtomicU64::new(0);
        for t in (last..=self.n as i32).rev() {
            (0..chunks).into_par_iter().for_each_init(Vec::new, |stack, c| {
                let lo = c * CHUNK;
                let hi = (lo + CHUNK).min(size);
                let mut count = 0u64;
                for g in lo..hi {
                    let i = g as usize;
                    let w = self.win[i].load(Relaxed);
                    if w < SETTLED
                        && dec(w) >= t
                        && self.win[i]
                            .compare_exchange(w, SETTLED | enc(t), Relaxed, Relaxed)
                            .is_ok()
                    {
                        stack.push(Item {
                            pos: unrank_unchecked(self.n, g),
                            lose: false,
                        });
                        count += self.drain(stack, t);
                    }
                    let l = self.lose[i].load(Relaxed);
                    if l < SETTLED
                        && dec(l) <= -t
                        && (self.cnt[i].load(Relaxed) >> self.shift) & 7 == 0
                        && self.lose[i]
                            .compare_exchange(l, SETTLED | enc(-t), Relaxed, Relaxed)
                            .is_ok()
                    {
                        stack.push(Item {
                            pos: unrank_unchecked(self.n, g),
                            lose: true,
                        });
                        count += self.drain(stack, t);
                    }
                }
                if count > 0 {
                    total.fetch_add(count, Relaxed);
                    obs.advance(count);
                }
            });
        }
        total.into_inner()
    }

    /// Propagates the settlements on `stack` at threshold `t` to closure.
    #[inline]
    fn drain(&self, stack: &mut Vec<Item>, t: i32) -> u64 {
        let mut count = 0;
        while let Some(it) = stack.pop() {
            count += 1;
            if it.lose {
                // v(Q) = -t: every predecessor reaches t.
                it.pos.for_each_predecessor(|p| {
                    let g = rank(&p);
                    let a = &self.win[g as usize];
                    let w = a.load(Relaxed);
                    if w < SETTLED
                        && a.compare_exchange(w, SETTLED | enc(t), Relaxed, Relaxed)
                            .is_ok()
                    {
                        stack.push(Item {
                            pos: p,
                            lose: false,
                        });
                    }
                });
            } else {
                // v(P) >= t: one child fewer keeps each predecessor above -t.
                it.pos.for_each_predecessor(|p| {
                    let g = rank(&p) as usize;
                    let old = self.cnt[g].fetch_sub(1 << self.shift, Relaxed);
                    if (old >> self.shift) & 7 != 1 {
                        return;
                    }
                    let a = &self.lose[g];
                    let l = a.load(Relaxed);
                    if l < SETTLED
                        && dec(l) <= -t
                        && a.compare_exchange(l, SETTLED | enc(-t), Relaxed, Relaxed)
                            .is_ok()
                    {
                        stack.push(Item {
                            pos: p,
                            lose: true,
                        });
                    }
                });
            }
        }
        count
    }
}

/// Turns settled bytes into signed values in place; unsettled ones become
/// `unsettled`.
fn decode(buf: &mut [u8], unsettled: i8) {
    buf.par_chunks_mut(CHUNK as usize).for_each(|c| {
        for b in c {
            *b = if *b & SETTLED != 0 {
                dec(*b) as i8 as u8
            } else {
                unsettled as u8
            };
        }
    });
}

/// Solves layer `n` (not 47) given every layer below it. With `envelope`,
/// `below` must carry the lower layers' envelopes too.
pub fn solve_layer(
    n: u32,
    below: &[Below],
    envelope: bool,
    obs: &dyn Observer,
) -> std::io::Result<Solved> {
    assert!(below.len() >= n as usize, "layers below {n} missing");
    let size = layer_size(n) as usize;
    let mut stats = SolveStats::default();
    let mut sc = Buffer::zeroed(size)?;
    let mut cnt = Buffer::zeroed(size)?;
    let (mut lo, mut hi) = if envelope {
        (Some(Buffer::zeroed(size)?), Some(Buffer::zeroed(size)?))
    } else {
        (None, None)
    };

    // Exits and counters.
    obs.phase("exits");
    let t0 = Instant::now();
    {
        let sca = sc.atomic();
        let cnta = cnt.atomic();
        let loa = lo.as_mut().map(|b| b.atomic());
        let hia = hi.as_mut().map(|b| b.atomic());
        let chunks = (size as u64).div_ceil(CHUNK);
        (0..chunks).into_par_iter().for_each(|c| {
            let start = c * CHUNK;
            let iter = crate::index::LayerIter::range(n, start, start + CHUNK);
            let len = iter.len() as u64;
            for (g, p) in iter {
                let e = exits(n, &p, below, envelope);
                let i = g as usize;
                sca[i].store(enc(e.score), Relaxed);
                cnta[i].store(e.internal | (e.internal << 3), Relaxed);
                if let (Some(l), Some(h)) = (loa, hia) {
                    l[i].store(enc(e.lower), Relaxed);
                    h[i].store(enc(e.upper), Relaxed);
                }
            }
            obs.advance(len);
        });
    }
    stats.init_seconds = t0.elapsed().as_secs_f64();

    let ni = n as i32;
    if let (Some(lo), Some(hi)) = (lo.as_mut(), hi.as_mut()) {
        obs.phase("envelope");
        let t0 = Instant::now();
        let sweep = Sweep {
            n,
            win: lo.atomic(),
            lose: hi.atomic(),
            cnt: cnt.atomic(),
            shift: 0,
        };
        stats.envelope_settlements = sweep.run(-ni + 1, obs);
        stats.envelope_seconds = t0.elapsed().as_secs_f64();
    }

    obs.phase("score");
    let t0 = Instant::now();
    {
        let cnta = cnt.atomic();
        let s = sc.atomic();
        let sweep = Sweep {
            n,
            win: s,
            lose: s,
            cnt: cnta,
            shift: 3,
        };
        stats.score_settlements = sweep.run(1, obs);
    }
    stats.score_seconds = t0.elapsed().as_secs_f64();
    drop(cnt);

    decode(sc.as_mut_slice(), 0);
    let envelope = match (lo, hi) {
        (Some(mut lo), Some(mut hi)) => {
            decode(lo.as_mut_slice(), -(ni as i8));
            decode(hi.as_mut_slice(), ni as i8);
            Some((lo, hi))
        }
        _ => None,
    };
    Ok(Solved {
        score: sc,
        envelope,
        stats,
    })
}

/// Solves layers `0..=max` in memory (no files), for tests and small tools.
/// Index `k` of the result holds layer `k`; layer 47 is left empty.
pub fn solve_in_memory(max: u32, envelope: bool) -> std::io::Result<Vec<Solved>> {
    let mut out: Vec<Solved> = Vec::new();
    for n in 0..=max {
        if n == 47 {
            out.push(Solved {
                score: Buffer::zeroed(0)?,
                envelope: None,
                stats: SolveStats::default(),
            });
            continue;
        }
        let below: Vec<Below> = out
            .iter()
            .map(|s| Below {
                score: s.score.as_slice(),
                lower: s.envelope.as_ref().map(|e| e.0.as_slice()),
                upper: s.envelope.as_ref().map(|e| e.1.as_slice()),
            })
            .collect();
        let solved = solve_layer(n, &below, envelope, &Silent)?;
        out.push(solved);
    }
    Ok(out)
}

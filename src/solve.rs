//! Solving one layer: threshold sweeps for the score and for its cycle
//! envelope.
//!
//! What follows is the solver's design and the reasoning that makes it
//! correct; the later sections say how this code carries it out. A different
//! design would be acceptable if it produced the same bytes at least as fast;
//! the tests decide.
//!
//! # Why layers
//!
//! Sowing without a capture keeps the number of seeds on the board, and a
//! capture lowers it by at least 2. So layer `n` depends only on itself and on
//! the layers below it, and the layers are solved in increasing order: 0, 1,
//! ..., 46, 48 (47 never occurs). [`solve_layer`] solves one layer, given the
//! tables of every layer below it ([`Below`]).
//!
//! # Per-position quantities of layer `n`
//!
//! * **Legal moves**, as defined in [`crate::rules`]: a move that leaves the
//!   opponent without seeds is legal only if every move does. A position
//!   without a legal move is final at `-n`.
//! * **Exits**: the legal moves that leave the layer or end the game at once.
//!   These are captures (the child lies in a lower layer, already solved) and
//!   moves whose child's mover has no seeds (worth the capture plus every seed
//!   left on the board, which is `+n` when nothing was captured).
//! * **Internal moves**: the remaining legal moves, which capture nothing and
//!   lead to a child in layer `n` whose mover has seeds. A position has at
//!   most 6 of them; their number is its counter.
//! * **Predecessors** of `Q`: the positions `P` with an internal move to `Q`,
//!   found by un-moves ([`Position::for_each_predecessor`]). The origin of the
//!   un-move is an empty pit of the side that has just moved; a sowing of `s`
//!   seeds can be taken back if every pit it fed holds enough seeds; if the
//!   last seed fell on the other side, it must not have made 2 or 3 there; and
//!   `P` must have a valid index ([`crate::index`]).
//!
//! # 1. The score (endless play splits the rest evenly, worth 0)
//!
//! A capture of `c` seeds into child `C` is an exit worth `c - score(C)`, and
//! `e(P)` is `P`'s best exit (`-inf` if it has none). Then, for
//! `t = n, n-1, ..., 1`:
//!
//! 1. every unsettled `P` with `e(P) >= t` settles at `t`;
//! 2. when `Q` settles at `-t`, each unsettled predecessor of `Q` settles at
//!    `t`;
//! 3. when `P` settles at a value `>= t`, the counter of each of its
//!    predecessors drops by one. A predecessor whose counter reaches 0 settles
//!    at `-t` if its `e <= -t`; otherwise it waits, for threshold `-e` if
//!    `e < 0` or for step 1 if `e > 0`;
//! 4. steps 2 and 3 are repeated to closure before `t` is lowered.
//!
//! Whatever is still unsettled after `t = 1` scores 0: endless play, or a
//! best line worth exactly 0. Each position settles once.
//!
//! **A trap:** the score cannot be derived from the envelope below. A line
//! that captures 3 seeds and then cycles forever is worth +3, not 0, because
//! captures made before a cycle count; the exits must therefore use the lower
//! layers' *scores*.
//!
//! # 2. The envelope (how far any cycle rule could move the score)
//!
//! `upper(P)` scores every endless play as all remaining seeds to the side to
//! move at `P`, and `lower(P)` as all of them to its opponent, in this layer
//! **and in every layer below** (see [`crate::rules`] for why the envelope is
//! needed). So the roles swap across a move. For exits, `upper` uses
//! `c - lower(C)` and `lower` uses `c - upper(C)`; internal children do the
//! same:
//!
//! * `upper(P) = max(exits_hi, max over Q of -lower(Q))`,
//! * `lower(P) = max(exits_lo, max over Q of -upper(Q))`.
//!
//! A single sweep over `t = n, ..., -n+1` serves both. `lower(P) >= t` is
//! reached as in steps 1 and 2 above (`exits_lo >= t`, or a child whose
//! `upper <= -t`); `upper(Q) <= -t` is reached when `Q`'s counter of children
//! with `lower >= t` reaches 0 and its `exits_hi <= -t` (otherwise `Q` waits
//! for threshold `-exits_hi`). After the sweep, an unsettled `lower` is `-n`
//! and an unsettled `upper` is `+n`.
//!
//! Every reading of the cycle rule gives a score in `lower..=upper`, and a
//! position is **pinned** when `lower == upper`. A pinned position needs no
//! score sweep at all (its score is that value), so a score sweep may skip
//! pinned positions; this one does not, and sweeps every position.
//!
//! # How this solver implements it
//!
//! The score and the two envelope bounds are each the same kind of game: a
//! value `v(P) >= t` is reached through an exit worth at least `t` or an
//! internal child whose value is at most `-t`; `v(Q) <= -t` is reached when
//! every exit of `Q` is worth at most `-t` and every internal child reached
//! `>= t`. For the score both sides live in one array; for the envelope the
//! `>= t` side is `lower` and the `<= -t` side is `upper` (the roles swap
//! across a move, because each bound scores endless play against the other
//! side). One `Sweep` handles both cases.
//!
//! Per position the solver keeps one byte per quantity being swept (a settled
//! flag and a 7-bit value; before settling the value is the best exit) plus
//! one byte of two 3-bit counters of internal moves: 3 bytes with the
//! envelope (whose bytes are written out and reused for the score), 2
//! without ([`working_bytes`]). The exits are computed once, in one pass
//! that works in batches, prefetching the lower layers' entries of a
//! batch's captures before reading any of them. With the envelope the
//! state has no room for the score's exits during the envelope sweep, so
//! they wait in an unnamed scratch file, one byte per position, written and
//! read back in index order.
//!
//! Thresholds run from `n` down. For each block of positions a bit mask
//! records the thresholds at which a scan of the block can settle something
//! (an exit equal to the threshold, or a position waiting for it); a scan at
//! threshold `t` skips the blocks whose bit `t` is clear, and a position that
//! starts to wait for threshold `-e` sets that bit of its block. A scan
//! compares the bytes of 8 positions at once with the two values that can
//! settle at `t` (an exit of exactly `t`, a wait for exactly `-t`: larger
//! ones settled at their own, earlier thresholds) and looks at single
//! positions only where one matches. Within a
//! threshold every settlement is propagated depth-first to the predecessors,
//! claimed with a compare-and-swap; settlements are handled in batches whose
//! predecessors' state bytes are prefetched before any is touched, so the
//! cache misses overlap. While the sweeps run, every access to the state is
//! an atomic access to the 64-bit word that holds the byte (atomics of
//! different sizes must not race), so a scan can read a group's words while
//! other threads update bytes in them. The set of positions that settle at
//! each threshold
//! does not depend on the order of the work, so the tables are the same bytes
//! for any number of threads.
//!
//! # Costs
//!
//! Each settlement walks the predecessors of the settled position: random
//! accesses into the layer's arrays. Score and envelope together come to about
//! 3 settlements per position; the solver measures and reports them
//! ([`SolveStats`]). The lower layers are only read, so they are
//! memory-mapped. The current layer's arrays are accessed at random and run
//! much faster on huge pages (madvise `HugePage`, [`crate::mem::Buffer`]): on
//! the build machine a random read-modify-write rate of about 9 M/s rose to
//! about 23 M/s with them.
//!
//! # Parallelism and determinism
//!
//! Each threshold's frontier is processed in parallel with rayon:
//! settlements are claimed with an atomic compare-and-swap, counters are
//! decremented atomically, and the next frontier is collected in per-thread
//! buffers. The output must be byte-identical whatever the thread count.
//! Here the workers scan the layer in chunks, and each keeps the settlements
//! still to propagate on its own stack, which serves as its buffer.
//!
//! # Memory
//!
//! A settled flag and a 7-bit value fit in one byte (values lie within
//! `-48..=48`), and a counter fits in 3 bits. The target is at most 3 bytes
//! per position of the layer being solved, which this solver meets; the
//! threshold masks and a fixed baseline come on top ([`memory_estimate`]).
//!
//! # Independent checks that must agree
//!
//! * The Bellman check ([`crate::verify::bellman_check`]) recomputes every
//!   position's score and bounds forward from its children; every one must
//!   equal the stored value.
//! * A deliberately naive solver for small layers (plain fixpoint iteration
//!   over all positions, in the test suite) produces the same tables.

pub mod compact;

use crate::format::Kind;
use crate::index::{layer_size, rank, unrank_unchecked};
use crate::mem::{prefetch, Buffer};
use crate::rules::Position;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};
use std::time::Instant;

/// Value of "no exit": below every real value.
pub(crate) const NO_EXIT: i32 = -64;
const SETTLED: u8 = 0x80;
/// Positions per unit of parallel work.
const CHUNK: u64 = 1 << 15;
/// Positions per threshold mask (a divisor of `CHUNK`).
const SUB: u64 = 1 << 12;

#[inline(always)]
pub(crate) fn enc(v: i32) -> u8 {
    (v + 64) as u8
}
#[inline(always)]
pub(crate) fn dec(b: u8) -> i32 {
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

/// Why a layer cannot be solved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SolveError {
    /// The working arrays could not be allocated.
    #[error("cannot allocate the working arrays: {0}")]
    Alloc(#[from] std::io::Error),
    /// The scratch file of the score's exits could not be created, written
    /// or read.
    #[error("scratch file in {}: {source}", .dir.display())]
    Scratch {
        /// The folder of the scratch file.
        dir: std::path::PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A layer below is missing, of the wrong size, or lacks the envelope
    /// the solve needs.
    #[error("layer {layer} below: {reason}")]
    Below {
        /// The lower layer.
        layer: u32,
        /// What is wrong with it.
        reason: String,
    },
    /// Another rank of a partitioned solve stopped.
    #[error("{0}")]
    Comm(#[from] crate::comm::CommError),
}

/// Checks that `below` holds every layer under `n` (47 excepted, which may
/// be empty) with the right sizes, and their envelopes when `envelope`.
fn check_below(n: u32, below: &[Below], envelope: bool) -> Result<(), SolveError> {
    for k in (0..n).filter(|&k| k != 47) {
        let bad = |reason: String| SolveError::Below { layer: k, reason };
        let Some(b) = below.get(k as usize) else {
            return Err(bad("not given".into()));
        };
        let size = layer_size(k) as usize;
        let tables: &[(&str, Option<&[u8]>)] = if envelope {
            &[
                ("scores", Some(b.score)),
                ("lower", b.lower),
                ("upper", b.upper),
            ]
        } else {
            &[("scores", Some(b.score))]
        };
        for &(name, t) in tables {
            match t {
                None => {
                    return Err(bad(format!(
                        "no {name} table (built without the envelope?)"
                    )))
                }
                Some(t) if t.len() != size => {
                    return Err(bad(format!(
                        "{name} table of {} bytes, the layer has {size} positions",
                        t.len()
                    )))
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// What the solver reports while it works.
pub trait Observer: Sync {
    /// A phase of the layer starts.
    fn phase(&self, _name: &'static str) {}
    /// `k` more units of the layer's work are done; a layer is
    /// [`work_units`] units in all, and they add up to exactly that.
    fn advance(&self, _k: u64) {}
}

/// Units of work of solving layer `n`, as [`Observer::advance`] counts them:
/// for the pass that computes exits, two per position with the envelope (it
/// computes the envelope's exits and the score's) and one without; one per
/// possible settlement in each sweep
/// (two per position in the envelope sweep, `lower` and `upper`; one in the
/// score sweep). Each sweep reports its settlements as they happen and, at
/// its end, the settlements that did not happen (positions whose value is
/// decided by the cycle rule), so the count ends at exactly this total.
pub fn work_units(n: u32, envelope: bool) -> u64 {
    layer_size(n) * if envelope { 5 } else { 2 }
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
    /// Disk traffic (the compact solver only).
    pub io: Option<crate::table::IoFigures>,
}

/// Offsets in a position's state bytes: the counters, then the two value
/// bytes. With the envelope, `A` and `B` hold `lower` and `upper` during the
/// envelope sweep; once those are written out, `A` holds the score for the
/// score sweep. So the solver needs 3 bytes per position (2 without the
/// envelope).
const CNT: usize = 0;
const A: usize = 1;
const B: usize = 2;

/// Which tables the state holds, decoded.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    /// Nothing decoded yet.
    Working,
    /// `A` is `lower`, `B` is `upper`.
    Envelope,
    /// `A` is the score.
    Score,
}

/// A layer's tables as the solver hands them out: after the envelope sweep
/// the envelope (`lower`, `upper`), after the score sweep the score.
pub struct Solved {
    n: u32,
    /// Positions; the state is padded to whole groups of 8.
    len: usize,
    state: Buffer,
    stride: usize,
    phase: Phase,
}

impl Solved {
    /// Seeds of the layer.
    pub fn seeds(&self) -> u32 {
        self.n
    }
    /// Positions in the layer.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the layer is empty (never: layer 0 has one position).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Whether `kind` can be read now.
    pub fn has(&self, kind: Kind) -> bool {
        self.offset(kind).is_some()
    }
    fn offset(&self, kind: Kind) -> Option<usize> {
        match (self.phase, kind) {
            (Phase::Envelope, Kind::Lower) => Some(A),
            (Phase::Envelope, Kind::Upper) => Some(B),
            (Phase::Score, Kind::Score) => Some(A),
            _ => None,
        }
    }
    /// The value of one position in one table, if that table can be read.
    pub fn get(&self, kind: Kind, g: u64) -> Option<i8> {
        self.offset(kind)
            .map(|o| self.state[g as usize * self.stride + o] as i8)
    }
    /// Copies entries `start..start + out.len()` of a table into `out`, in
    /// the file format (one signed byte per position).
    pub fn extract(&self, kind: Kind, start: usize, out: &mut [u8]) {
        let o = self.offset(kind).expect("table not available now");
        let src = &self.state[start * self.stride..(start + out.len()) * self.stride];
        for (d, s) in out.iter_mut().zip(src.chunks_exact(self.stride)) {
            *d = s[o];
        }
    }
    /// Number of positions per score, from `-n` to `n` (once the score is
    /// available).
    pub fn histogram(&self) -> Vec<u64> {
        let o = self.offset(Kind::Score).expect("score not available now");
        let n = self.n as i32;
        let w = 2 * n as usize + 1;
        self.state[..self.len * self.stride]
            .par_chunks(CHUNK as usize * self.stride)
            .map(|c| {
                let mut h = vec![0u64; w];
                for s in c.chunks_exact(self.stride) {
                    h[(s[o] as i8 as i32 + n) as usize] += 1;
                }
                h
            })
            .reduce(
                || vec![0u64; w],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            )
    }
    /// Positions whose envelope is closed (`lower == upper`), while the
    /// envelope is available.
    pub fn pinned(&self) -> Option<u64> {
        (self.phase == Phase::Envelope).then(|| {
            self.state[..self.len * self.stride]
                .par_chunks(CHUNK as usize * self.stride)
                .map(|c| c.chunks_exact(self.stride).filter(|s| s[A] == s[B]).count() as u64)
                .sum()
        })
    }
    /// A whole table in the file format (it must be available).
    pub fn table(&self, kind: Kind) -> Vec<u8> {
        let mut v = vec![0u8; self.len()];
        self.extract(kind, 0, &mut v);
        v
    }
}

/// A solved layer's tables as either solver hands them out ([`Solved`] in
/// memory, [`compact::Assembled`] from its result lists), so one writer
/// serves both.
pub trait Tables {
    /// Whether `kind` can be read now.
    fn has(&self, kind: Kind) -> bool;
    /// Copies entries `start..start + out.len()` of table `kind` into `out`,
    /// in the file format; a table is read in order, from the start.
    fn extract(&self, kind: Kind, start: usize, out: &mut [u8]) -> Result<(), SolveError>;
    /// Positions whose envelope is closed, while the envelope can be read.
    fn pinned(&self) -> Result<Option<u64>, SolveError>;
    /// Positions per score, from `-n` to `n`, once the score can be read
    /// (of the part).
    fn histogram(&self) -> Vec<u64>;
    /// The part of the layer these tables hold (all of it in one process).
    fn part(&self) -> crate::comm::Part;
}

impl Tables for Solved {
    fn has(&self, kind: Kind) -> bool {
        Solved::has(self, kind)
    }
    fn extract(&self, kind: Kind, start: usize, out: &mut [u8]) -> Result<(), SolveError> {
        Solved::extract(self, kind, start, out);
        Ok(())
    }
    fn pinned(&self) -> Result<Option<u64>, SolveError> {
        Ok(Solved::pinned(self))
    }
    fn histogram(&self) -> Vec<u64> {
        Solved::histogram(self)
    }
    fn part(&self) -> crate::comm::Part {
        crate::comm::Part::new(self.len as u64, 1, 0, 1)
    }
}

/// Bytes of working memory the solver needs for layer `n`, beyond the
/// mapped lower layers: two value bytes and a byte of counters per position
/// with the envelope, one value byte and the counters without.
pub fn working_bytes(n: u32, envelope: bool) -> u64 {
    layer_size(n) * if envelope { 3 } else { 2 }
}

/// Anonymous memory the process holds besides the working arrays while it
/// solves a layer (code, heap, thread stacks, the lower layers' bookkeeping),
/// measured on small layers.
pub const BASELINE_BYTES: u64 = 16 << 20;

/// The memory guard's estimate of the peak anonymous memory of solving
/// layer `n`: the working arrays, the threshold masks and the baseline.
pub fn memory_estimate(n: u32, envelope: bool) -> u64 {
    let masks = layer_size(n).div_ceil(SUB) * 16;
    working_bytes(n, envelope) + masks + BASELINE_BYTES
}

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
fn plan(n: u32, g: u64, p: &Position, below: &[Below], envelope: bool) -> Plan {
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
    for m in p.moves().legal() {
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

/// A settlement whose predecessors are still to visit.
#[derive(Clone, Copy)]
pub(crate) struct Item {
    pub(crate) pos: Position,
    /// Settled on the `<= -t` side.
    pub(crate) lose: bool,
}

/// One threshold game: `win` holds the `>= t` side, `lose` the `<= -t` side
/// (the same array for the score), `cnt >> shift & 7` the internal children
/// not yet known to be `>= t`.
struct Sweep<'a> {
    n: u32,
    /// Positions in the layer.
    size: u64,
    /// Interleaved state, `stride` bytes per position, as 64-bit words
    /// (padded to whole groups of 8 positions): every access is a word
    /// access, so the scan can read eight positions' bytes at once while
    /// other threads update single bytes.
    st: &'a [AtomicU64],
    stride: usize,
    win: usize,
    lose: usize,
    shift: u32,
    /// Lowest threshold of the sweep.
    last: i32,
    masks: Masks,
    /// Settlements each position can make in this sweep (the progress
    /// units of the sweep, per position).
    per_position: u64,
}

/// Per `SUB` positions, the thresholds at which a scan of them can
/// find something: bit `t + 64` is set when some position of the chunk has
/// a `>= t` exit equal to `t`, or waits (all internal children known, exits
/// too high so far) to settle at `-t`. Chunks without the bit are skipped.
struct Masks(Vec<[AtomicU64; 2]>);

impl Masks {
    fn new(chunks: u64) -> Self {
        Masks((0..chunks).map(|_| Default::default()).collect())
    }
    #[inline]
    fn set(&self, chunk: usize, t: i32) {
        let b = (t + 64) as usize;
        self.0[chunk][b / 64].fetch_or(1 << (b % 64), Relaxed);
    }
    /// Sets a whole chunk's bits at once.
    fn store(&self, chunk: usize, bits: u128) {
        self.0[chunk][0].store(bits as u64, Relaxed);
        self.0[chunk][1].store((bits >> 64) as u64, Relaxed);
    }
    #[inline]
    fn has(&self, chunk: usize, t: i32) -> bool {
        let b = (t + 64) as usize;
        self.0[chunk][b / 64].load(Relaxed) >> (b % 64) & 1 != 0
    }
}

/// Bit of threshold `t` in a chunk's mask, if `t` is one the sweep visits.
#[inline]
fn bit(t: i32, n: u32, last: i32) -> u128 {
    if t >= last && t <= n as i32 {
        1u128 << (t + 64)
    } else {
        0
    }
}

/// Settlements handled together: their predecessors' state bytes are
/// prefetched before any is touched, so the cache misses overlap.
pub(crate) const BATCH: usize = 32;

/// A worker's scratch space for [`drain`].
#[derive(Default)]
pub(crate) struct Work {
    /// Settled positions whose predecessors are not yet visited.
    pub(crate) stack: Vec<Item>,
    /// Predecessors of a batch: state offset, position, whether they were
    /// reached from a `<= -t` settlement.
    preds: Vec<(usize, Position, bool)>,
}

/// Propagates the settlements on `work`'s stack to closure, a batch at a
/// time: `locate(p)` gives a predecessor's state offset (and prefetches
/// its state), so a batch's cache misses overlap before `visit(offset, p,
/// from_lose, stack)` updates each predecessor and pushes what settles.
/// Returns the settlements whose predecessors were visited.
#[inline]
pub(crate) fn drain(
    work: &mut Work,
    locate: impl Fn(&Position) -> usize,
    mut visit: impl FnMut(usize, Position, bool, &mut Vec<Item>),
) -> u64 {
    let Work { stack, preds } = work;
    let mut count = 0;
    while !stack.is_empty() {
        let from = stack.len().saturating_sub(BATCH);
        count += (stack.len() - from) as u64;
        preds.clear();
        for it in stack.drain(from..) {
            it.pos
                .for_each_predecessor(|p| preds.push((locate(&p), p, it.lose)));
        }
        for &(i, p, from_lose) in preds.iter() {
            visit(i, p, from_lose, stack);
        }
    }
    count
}

/// `0x80` in each byte of `x` that is zero, `0` elsewhere (exact).
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// Positions the scan looks at together: 8 positions are `stride` words.
const GROUP: u64 = 8;

/// Per word of a group of 8 positions (at most 3 words): the byte a scan
/// looks for in the group's `>= t` lanes and in its `<= -t` lanes, and
/// 0x01 in the other lanes (never zero after the exclusive or).
#[derive(Clone, Copy, Default)]
struct Patterns {
    want_win: [u64; 3],
    want_lose: [u64; 3],
    other_win: [u64; 3],
    other_lose: [u64; 3],
}

impl Sweep<'_> {
    /// Byte `i` of the state.
    #[inline(always)]
    fn byte(&self, i: usize) -> u8 {
        (self.st[i / 8].load(Relaxed) >> (i % 8 * 8)) as u8
    }

    /// Sets byte `i` from `old` to `new` unless it is no longer `old`
    /// (another thread settled it first); whether it did.
    #[inline(always)]
    fn claim(&self, i: usize, old: u8, new: u8) -> bool {
        let shift = i % 8 * 8;
        let word = &self.st[i / 8];
        let mut cur = word.load(Relaxed);
        loop {
            if (cur >> shift) as u8 != old {
                return false;
            }
            let next = (cur & !(0xff << shift)) | (new as u64) << shift;
            match word.compare_exchange_weak(cur, next, Relaxed, Relaxed) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// Subtracts one from the counter at `self.shift` in byte `i` (it is
    /// never 0 there, so nothing borrows from the neighbouring bits); the
    /// byte before.
    #[inline(always)]
    fn take_counter(&self, i: usize) -> u8 {
        let shift = i % 8 * 8;
        (self.st[i / 8].fetch_sub(1 << (shift as u32 + self.shift), Relaxed) >> shift) as u8
    }

    /// The words a scan at threshold `t` compares a group's words with.
    fn patterns(&self, t: i32) -> Patterns {
        let mut p = Patterns::default();
        for j in 0..GROUP as usize * self.stride {
            let (k, b) = (j / 8, j % 8 * 8);
            let lane = j % self.stride;
            if lane == self.win {
                p.want_win[k] |= (enc(t) as u64) << b;
            } else {
                p.other_win[k] |= 1 << b;
            }
            if lane == self.lose {
                p.want_lose[k] |= (enc(-t) as u64) << b;
            } else {
                p.other_lose[k] |= 1 << b;
            }
        }
        p
    }

    /// Runs thresholds `n` down to `last`; returns the settlements made.
    fn run(&self, obs: &dyn Observer) -> u64 {
        let size = self.size;
        let chunks = size.div_ceil(CHUNK);
        let total = AtomicU64::new(0);
        for t in (self.last..=self.n as i32).rev() {
            let patterns = self.patterns(t);
            (0..chunks)
                .into_par_iter()
                .for_each_init(Work::default, |work, c| {
                    let mut count = 0u64;
                    let first = c * CHUNK;
                    let end = (first + CHUNK).min(size);
                    let subs = (first..end).step_by(SUB as usize);
                    for lo in subs.filter(|&lo| self.masks.has((lo / SUB) as usize, t)) {
                        count += self.scan(work, lo, (lo + SUB).min(end), t, &patterns);
                    }
                    count += self.drain(work, t);
                    if count > 0 {
                        total.fetch_add(count, Relaxed);
                        obs.advance(count);
                    }
                });
        }
        let total = total.into_inner();
        // Positions that never settled (their value depends on the cycle
        // rule) complete the sweep's share of the work.
        obs.advance((size * self.per_position).saturating_sub(total));
        total
    }

    /// Settles the positions `lo..hi` that reach threshold `t` by their
    /// exits (or, on the `<= -t` side, wait for it with every internal child
    /// known), propagating a batch at a time; returns the settlements made.
    /// `lo` is a multiple of [`GROUP`].
    ///
    /// The thresholds above `t` are done, so an unsettled `>= t` byte that
    /// reaches `t` holds an exit equal to `t` (a larger one settled at its
    /// own threshold), and an unsettled `<= -t` byte whose counter is 0 holds
    /// exactly `-t` (it waited for this threshold). The scan therefore
    /// compares 8 positions' bytes at once with those two values, and looks
    /// at single positions only in the groups where one matches.
    #[inline]
    fn scan(&self, work: &mut Work, lo: u64, hi: u64, t: i32, patterns: &Patterns) -> u64 {
        let mut count = 0;
        let (win, lose, shift, stride) = (self.win, self.lose, self.shift, self.stride);
        let Patterns {
            want_win,
            want_lose,
            other_win,
            other_lose,
        } = *patterns;
        let first_word = lo as usize * stride / 8;
        let mut g = lo;
        while g < hi {
            let w0 = first_word + ((g - lo) as usize / 8) * stride;
            let mut hit = 0;
            for k in 0..stride {
                let w = self.st[w0 + k].load(Relaxed);
                hit |= zero_bytes((w ^ want_win[k]) | other_win[k])
                    | zero_bytes((w ^ want_lose[k]) | other_lose[k]);
            }
            let end = (g + GROUP).min(hi);
            if hit != 0 {
                for g in g..end {
                    let i = g as usize * stride;
                    let w = self.byte(i + win);
                    if w == enc(t) && self.claim(i + win, w, SETTLED | enc(t)) {
                        work.stack.push(Item {
                            pos: unrank_unchecked(self.n, g),
                            lose: false,
                        });
                    }
                    let l = self.byte(i + lose);
                    if l == enc(-t)
                        && (self.byte(i + CNT) >> shift) & 7 == 0
                        && self.claim(i + lose, l, SETTLED | enc(-t))
                    {
                        work.stack.push(Item {
                            pos: unrank_unchecked(self.n, g),
                            lose: true,
                        });
                    }
                }
                if work.stack.len() >= BATCH {
                    count += self.drain(work, t);
                }
            }
            g = end;
        }
        count
    }

    /// Propagates the settlements on the stack at threshold `t` to closure,
    /// a batch at a time.
    fn drain(&self, work: &mut Work, t: i32) -> u64 {
        let locate = |p: &Position| {
            let i = rank(p) as usize * self.stride;
            prefetch(self.st[i / 8].as_ptr() as *const u8);
            i
        };
        drain(work, locate, |i, p, from_lose, stack| {
            if from_lose {
                // A child is at -t: the predecessor reaches t.
                let w = self.byte(i + self.win);
                if w < SETTLED && self.claim(i + self.win, w, SETTLED | enc(t)) {
                    stack.push(Item {
                        pos: p,
                        lose: false,
                    });
                }
                return;
            }
            // A child is >= t: one fewer keeps the predecessor above -t.
            let old = self.take_counter(i + CNT);
            if (old >> self.shift) & 7 != 1 {
                return;
            }
            let l = self.byte(i + self.lose);
            if l >= SETTLED {
                return;
            }
            if dec(l) > -t {
                // Waits for threshold -exit: wake its chunk then.
                if -dec(l) >= self.last {
                    self.masks.set(i / self.stride / SUB as usize, -dec(l));
                }
            } else if self.claim(i + self.lose, l, SETTLED | enc(-t)) {
                stack.push(Item { pos: p, lose: true });
            }
        })
    }
}

/// Turns the settled bytes at `offsets` into signed values in place;
/// unsettled ones become `unsettled[k]`.
fn decode(state: &mut [u8], stride: usize, offsets: &[(usize, i8)]) {
    state.par_chunks_mut(CHUNK as usize * stride).for_each(|c| {
        for s in c.chunks_exact_mut(stride) {
            for &(o, unsettled) in offsets {
                let b = s[o];
                s[o] = if b & SETTLED != 0 {
                    dec(b) as i8 as u8
                } else {
                    unsettled as u8
                };
            }
        }
    });
}

/// Which exits a pass over the layer stores.
#[derive(Clone, Copy)]
enum Pass<'a> {
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
struct Scratch {
    file: std::fs::File,
    dir: std::path::PathBuf,
}

impl Scratch {
    fn new(dir: &std::path::Path) -> Result<Self, SolveError> {
        let file = tempfile::tempfile_in(dir).map_err(|source| SolveError::Scratch {
            dir: dir.to_path_buf(),
            source,
        })?;
        Ok(Scratch {
            file,
            dir: dir.to_path_buf(),
        })
    }
    fn err(&self, source: std::io::Error) -> SolveError {
        SolveError::Scratch {
            dir: self.dir.clone(),
            source,
        }
    }
    fn write(&self, at: u64, buf: &[u8]) -> Result<(), SolveError> {
        use std::os::unix::fs::FileExt;
        self.file.write_all_at(buf, at).map_err(|e| self.err(e))
    }
    fn read(&self, at: u64, buf: &mut [u8]) -> Result<(), SolveError> {
        use std::os::unix::fs::FileExt;
        self.file.read_exact_at(buf, at).map_err(|e| self.err(e))
    }
}

/// Computes every position's exits (and counters) for one sweep, and the
/// sweep's threshold masks.
fn init(
    n: u32,
    below: &[Below],
    st: &[AtomicU8],
    stride: usize,
    pass: Pass,
    obs: &dyn Observer,
) -> Result<Masks, SolveError> {
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
                        .map(|(g, p)| plan(n, g, &p, below, envelope)),
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
        Ok::<(), SolveError>(())
    })?;
    Ok(masks)
}

/// Solves layer `n` (not 47) given every layer below it. With `envelope`,
/// `below` must carry the lower layers' envelopes too, and the score's exits
/// wait in an unnamed scratch file in `scratch` (the system's temporary
/// folder when `None`) during the envelope sweep: one byte per position,
/// written and read back in index order.
///
/// The tables are handed to `ready` as they are finished: first the envelope
/// (when built), then the score, which reuses the envelope's memory, so the
/// solver works in 3 bytes per position (2 without the envelope).
pub fn solve_layer<E: From<SolveError>>(
    n: u32,
    below: &[Below],
    envelope: bool,
    scratch: Option<&std::path::Path>,
    obs: &dyn Observer,
    ready: &mut dyn FnMut(&Solved) -> Result<(), E>,
) -> Result<SolveStats, E> {
    check_below(n, below, envelope)?;
    let scratch = if envelope {
        let dir = scratch.map_or_else(std::env::temp_dir, |d| d.to_path_buf());
        Some(Scratch::new(&dir)?)
    } else {
        None
    };
    let size = layer_size(n) as usize;
    let stride = if envelope { 3 } else { 2 };
    let ni = n as i32;
    let mut stats = SolveStats::default();
    let padded = size.next_multiple_of(GROUP as usize);
    let mut solved = Solved {
        n,
        len: size,
        state: Buffer::zeroed(padded * stride).map_err(SolveError::from)?,
        stride,
        phase: Phase::Working,
    };

    if let Some(scratch) = &scratch {
        obs.phase("exits");
        let t0 = Instant::now();
        let st = solved.state.atomic();
        let masks = init(n, below, st, stride, Pass::Envelope(scratch), obs)?;
        stats.init_seconds += t0.elapsed().as_secs_f64();
        obs.phase("envelope");
        let t0 = Instant::now();
        let sweep = Sweep {
            n,
            size: size as u64,
            st: solved.state.atomic_words(),
            stride,
            win: A,
            lose: B,
            shift: 0,
            last: 1 - ni,
            masks,
            per_position: 2,
        };
        stats.envelope_settlements = sweep.run(obs);
        stats.envelope_seconds = t0.elapsed().as_secs_f64();
        decode(
            &mut solved.state.as_mut_slice()[..size * stride],
            stride,
            &[(A, -ni as i8), (B, ni as i8)],
        );
        solved.phase = Phase::Envelope;
        ready(&solved)?;
        solved.phase = Phase::Working;
    }

    obs.phase("exits");
    let t0 = Instant::now();
    let pass = match &scratch {
        Some(scratch) => Pass::ScoreFromScratch(scratch),
        None => Pass::Score,
    };
    let masks = init(n, below, solved.state.atomic(), stride, pass, obs)?;
    stats.init_seconds += t0.elapsed().as_secs_f64();
    obs.phase("score");
    let t0 = Instant::now();
    let sweep = Sweep {
        n,
        size: size as u64,
        st: solved.state.atomic_words(),
        stride,
        win: A,
        lose: A,
        shift: 3,
        last: 1,
        masks,
        per_position: 1,
    };
    stats.score_settlements = sweep.run(obs);
    stats.score_seconds = t0.elapsed().as_secs_f64();
    decode(
        &mut solved.state.as_mut_slice()[..size * stride],
        stride,
        &[(A, 0)],
    );
    solved.phase = Phase::Score;
    ready(&solved)?;
    Ok(stats)
}

/// Solves layers `0..=max` in memory (no files), for tests and small tools.
/// Index `k` of the result holds layer `k`'s tables (score, lower, upper;
/// the envelope tables empty without `envelope`); layer 47 is left empty.
pub fn solve_in_memory(max: u32, envelope: bool) -> Result<Vec<[Vec<u8>; 3]>, SolveError> {
    solve_layers(max, envelope, |n, below| {
        let mut tables: [Vec<u8>; 3] = Default::default();
        solve_layer(n, below, envelope, None, &Silent, &mut |s: &Solved| {
            for (k, kind) in [Kind::Score, Kind::Lower, Kind::Upper]
                .into_iter()
                .enumerate()
            {
                if s.has(kind) {
                    tables[k] = s.table(kind);
                }
            }
            Ok::<(), SolveError>(())
        })?;
        Ok(tables)
    })
}

/// Layers `0..=max` in memory, each solved by `one(n, below)` from the
/// tables of the layers under it; laid out as [`solve_in_memory`]'s.
pub(crate) fn solve_layers(
    max: u32,
    envelope: bool,
    mut one: impl FnMut(u32, &[Below]) -> Result<[Vec<u8>; 3], SolveError>,
) -> Result<Vec<[Vec<u8>; 3]>, SolveError> {
    let mut out: Vec<[Vec<u8>; 3]> = Vec::new();
    for n in 0..=max {
        if n == 47 {
            out.push(Default::default());
            continue;
        }
        let below: Vec<Below> = out
            .iter()
            .map(|t| Below {
                score: &t[0],
                lower: envelope.then_some(&t[1][..]),
                upper: envelope.then_some(&t[2][..]),
            })
            .collect();
        let tables = one(n, &below)?;
        out.push(tables);
    }
    Ok(out)
}

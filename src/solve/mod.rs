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
//! ..., 46, 48 (47 never occurs). Each solver solves one layer given the
//! tables of every layer below it ([`Below`]).
//!
//! # Per-position quantities of layer `n`
//!
//! Every solver takes the rule set ([`crate::rules::Rules`]) and asks it for
//! the legal moves and the un-moves; nothing below depends on which rule set
//! it is.
//!
//! * **Legal moves**, as defined in [`crate::rules`] for the rule set (awari:
//!   a move that leaves the opponent without seeds is legal only if every
//!   move does; abapa: a grand slam captures nothing, feeding is
//!   mandatory; olympiad: a grand slam captures, feeding is mandatory;
//!   awale: a grand slam is illegal, feeding is free). A position without
//!   a legal move is final at its
//!   [`final_score`](crate::rules::Position::final_score): `-n` when the
//!   mover has no seeds or (awale) only grand slams, `+n` when an abapa or
//!   olympiad mover cannot feed.
//! * **Exits**: the legal moves that leave the layer or end the game at once.
//!   These are captures (the child lies in a lower layer, already solved) and
//!   moves whose child's mover has no seeds (worth the capture plus every seed
//!   left on the board: `+n`, be it an olympiad grand slam or an awale
//!   move that leaves an empty opponent empty); a position
//!   without a legal move has its final score as its one exit.
//! * **Internal moves**: the remaining legal moves, which capture nothing and
//!   lead to a child in layer `n` whose mover has seeds (under abapa, grand
//!   slams among them). A position has at most 6 of them; their number is
//!   its counter.
//! * **Predecessors** of `Q`: the positions `P` with an internal move to `Q`,
//!   found by un-moves ([`Position::for_each_predecessor`](crate::rules::Position::for_each_predecessor)). The origin of the
//!   un-move is an empty pit of the side that has just moved; a sowing of `s`
//!   seeds can be taken back if every pit it fed holds enough seeds; if the
//!   last seed fell on the other side, it must not have made 2 or 3 there
//!   (unless, under abapa, the move was a grand slam, which captures
//!   nothing); and `P` must have a valid index ([`crate::index`]).
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
//! # Two solvers, one kernel
//!
//! * [`memory`]: the in-memory solver, 3 bytes per position (2 without the
//!   envelope), the lower layers mapped; the faster one.
//! * [`compact`]: the compact solver, 1 byte per position, exits and
//!   results as lists on disk, the lower layers streamed (raw or
//!   compressed), and a layer split between ranks.
//! * [`kernel`]: what both share: the batched, prefetching propagation of
//!   settlements to predecessors ([`kernel::drain`]).
//! * [`distance`]: the distance to the next capture, from the finished
//!   scores: by the in-memory solver in its own state after the score
//!   sweep, else by the builder after the solver.
//! * `waves`: what the in-memory solver uses in its large sweeps (a
//!   state of 4.5 GiB or more), and the compact one when `AWARI_WAVES=1`
//!   asks, instead of depth-first propagation: the updates bucketed by
//!   the region of the state they hit and applied a region at a time
//!   (`src/solve/waves.rs`, whose module docs give the design).
//!
//! Each solver states its cost in one function ([`memory::cost`],
//! [`compact::cost`]), which the build's planner
//! ([`crate::plan`]) compares with the memory allowed. Both hand
//! their tables out through [`SolvedTables`] and report progress to an
//! [`Observer`]; both produce the same bytes.
//!
//! # Independent checks that must agree
//!
//! * The Bellman check ([`crate::verify::bellman_check`]) recomputes every
//!   position's score and bounds forward from its children; every one must
//!   equal the stored value.
//! * A deliberately naive solver for small layers (plain fixpoint iteration
//!   over all positions, in the test suite) produces the same tables.

mod error;
pub use error::SolveError;
pub mod compact;
pub mod distance;
pub mod kernel;
pub mod memory;
mod waves;

use crate::error::Result;
use crate::format::Kind;
use crate::index::layer_size;
use crate::store::StoreError;
use std::path::PathBuf;
/// A value as the solvers' state bytes hold it (`v + 64`).
#[inline(always)]
pub(crate) fn enc(v: i32) -> u8 {
    (v + 64) as u8
}
/// A state byte's value (its low 7 bits, less 64).
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

/// Checks that `below` holds every layer under `n` (47 excepted, which may
/// be empty) with the right sizes, and their envelopes when `envelope`.
pub(crate) fn check_below(n: u32, below: &[Below], envelope: bool) -> Result<()> {
    for k in (0..n).filter(|&k| k != 47) {
        let Some(b) = below.get(k as usize) else {
            return Err(StoreError::MissingLayer {
                layer: k,
                dir: PathBuf::from("(memory)"),
                vu: false,
            }
            .into());
        };
        let size = layer_size(k);
        let tables: &[(&'static str, Option<&[u8]>)] = if envelope {
            &[
                ("scores", Some(b.score)),
                ("lower", b.lower),
                ("upper", b.upper),
            ]
        } else {
            &[("scores", Some(b.score))]
        };
        for &(table, t) in tables {
            match t {
                None => {
                    return Err(StoreError::NoEnvelope {
                        dir: PathBuf::from("(memory)"),
                        layer: k,
                    }
                    .into())
                }
                Some(t) if t.len() as u64 != size => {
                    return Err(StoreError::TableSize {
                        layer: k,
                        table,
                        expected: size,
                        found: t.len() as u64,
                    }
                    .into())
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
    /// [`memory::work_units`] or [`compact::work_units`] units in all, and
    /// they add up to exactly that.
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
    /// Seconds in the distance pass, when the solver ran it.
    pub distance_seconds: f64,
    /// Disk traffic (the compact solver only).
    pub io: Option<crate::store::IoFigures>,
}

/// A solved layer's tables as either solver hands them out ([`memory::Solved`] in
/// memory, [`compact::Assembled`] from its result lists), so one writer
/// serves both.
pub trait SolvedTables {
    /// Whether `kind` can be read now.
    fn has(&self, kind: Kind) -> bool;
    /// Copies entries `start..start + out.len()` of table `kind` into `out`,
    /// in the file format; a table is read in order, from the start.
    fn extract(&self, kind: Kind, start: usize, out: &mut [u8]) -> Result<()>;
    /// Positions whose envelope is closed, while the envelope can be read.
    fn pinned(&self) -> Result<Option<u64>>;
    /// Positions per score, from `-n` to `n`, once the score can be read
    /// (of the part).
    fn histogram(&self) -> Vec<u64>;
    /// The part of the layer these tables hold (all of it in one process).
    fn part(&self) -> crate::comm::Part;
}

/// Anonymous memory the process holds besides the working arrays while it
/// solves a layer (code, heap, thread stacks, the lower layers' bookkeeping),
/// measured on small layers.
pub const BASELINE_BYTES: u64 = 16 << 20;

/// What a solver needs to solve a layer: its working arrays, and the
/// memory guard's estimate of its peak anonymous memory (the arrays,
/// buffers and [`BASELINE_BYTES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cost {
    /// Bytes of the working arrays.
    pub working: u64,
    /// Bytes of the estimated peak.
    pub estimate: u64,
}

/// Value of "no exit": below every real value.
pub(crate) const NO_EXIT: i32 = -64;

/// Layers `0..=max` in memory, each solved by `one(n, below)` from the
/// tables of the layers under it; index `k` holds layer `k`'s
/// tables (score, lower, upper; the envelope tables empty without
/// `envelope`), layer 47 empty.
pub(crate) fn solve_layers(
    max: u32,
    envelope: bool,
    mut one: impl FnMut(u32, &[Below]) -> Result<[Vec<u8>; 3]>,
) -> Result<Vec<[Vec<u8>; 3]>> {
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

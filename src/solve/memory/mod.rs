//! The in-memory solver: every position's state in memory, 3 bytes per
//! position with the envelope (2 without), the lower layers mapped.
//!
//! It plays the threshold games of the [parent module](super) directly on
//! the state: `exits` computes every position's exits and counters
//! (prefetching the lower layers' entries of a batch's captures),
//! `sweep` runs the thresholds.
//!
//! # How it works
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
//! envelope, 2 without ([`cost`]). Once the envelope is written out, the
//! state closes up to the 2 bytes a position the score needs (the counters
//! and one value byte), so that the score sweep's random updates range over
//! two thirds of the memory. The exits are computed once, in one pass
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
//! cache misses overlap. In the large sweeps (a state of 4.5 GiB or
//! more) propagation goes in waves instead (`src/solve/waves.rs`): the updates are
//! bucketed by the region of the state they hit and applied a region at a
//! time, each region by one thread. While the sweeps run, every access to the state is
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
//! threshold masks, the waves' bitmap and buckets (at most 0.45 bytes a
//! position, on the large layers) and a fixed baseline come on top
//! ([`cost`]).
//!

mod exits;
mod sweep;

use super::waves::{self, Waves};
use super::{check_below, Below, Cost, Observer, Silent, SolveStats, SolvedTables, BASELINE_BYTES};
use crate::error::{Error, Result};
use crate::format::Kind;
use crate::index::layer_size;
use crate::mem::Buffer;
use crate::rules::Rules;
use exits::{init, Pass, Scratch};
use rayon::prelude::*;
use std::time::Instant;
use sweep::{decode, Sweep, GROUP};

/// A settled byte's flag (its low 7 bits are the value, `enc`).
const SETTLED: u8 = 0x80;
/// Positions per unit of parallel work.
const CHUNK: u64 = 1 << 15;
/// Positions per threshold mask (a divisor of `CHUNK`).
const SUB: u64 = 1 << 12;

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

/// Offsets in a position's state bytes: the counters, then the two value
/// bytes. With the envelope, `A` and `B` hold `lower` and `upper` during the
/// envelope sweep; once those are written out, the state closes up to 2
/// bytes a position and `A` holds the score for the score sweep. So the
/// solver needs 3 bytes per position (2 without the envelope).
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
    /// The distance is in the counters' byte (after the score).
    distance: bool,
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
            (Phase::Score, Kind::Distance) if self.distance => Some(CNT),
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

impl SolvedTables for Solved {
    fn has(&self, kind: Kind) -> bool {
        Solved::has(self, kind)
    }
    fn extract(&self, kind: Kind, start: usize, out: &mut [u8]) -> Result<()> {
        Solved::extract(self, kind, start, out);
        Ok(())
    }
    fn pinned(&self) -> Result<Option<u64>> {
        Ok(Solved::pinned(self))
    }
    fn histogram(&self) -> Vec<u64> {
        Solved::histogram(self)
    }
    fn part(&self) -> crate::comm::Part {
        crate::comm::Part::new(self.len as u64, 1, 0, 1)
    }
}

/// What the in-memory solver needs for layer `n`: two value bytes and a
/// byte of counters per position with the envelope (one value byte and the
/// counters without), beyond the mapped lower layers, and on the layers
/// that propagate in waves their bitmap and buckets (`src/solve/waves.rs`);
/// and its estimate, which adds the threshold masks and the baseline.
pub fn cost(n: u32, envelope: bool) -> Cost {
    let size = layer_size(n);
    let stride = if envelope { 3 } else { 2 };
    // The envelope's sweep has the larger state: waves for the score
    // alone come only with waves for the envelope.
    let waves = if waves::on(size * stride) {
        waves::bytes(size, 1)
    } else {
        0
    };
    let working = size * stride + waves;
    let masks = layer_size(n).div_ceil(SUB) * 16;
    Cost {
        working,
        estimate: working + masks + BASELINE_BYTES,
    }
}

/// Solves layer `n` (not 47) given every layer below it. With `envelope`,
/// `below` must carry the lower layers' envelopes too, and the score's exits
/// wait in an unnamed scratch file in `scratch` (the system's temporary
/// folder when `None`) during the envelope sweep: one byte per position,
/// written and read back in index order.
///
/// The tables are handed to `ready` as they are finished: first the envelope
/// (when built), then the score, which reuses the envelope's memory, so the
/// solver works in 3 bytes per position (2 without the envelope). With
/// `distance`, the score comes with the distance table
/// ([`crate::solve::distance`]), computed in the counters' byte beside
/// the score, the score's best exits read back from the scratch file.
#[allow(clippy::too_many_arguments)]
pub fn solve_layer<E: From<Error>>(
    n: u32,
    rules: &Rules,
    below: &[Below],
    envelope: bool,
    distance: bool,
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
        state: Buffer::zeroed(padded * stride)?,
        stride,
        phase: Phase::Working,
        distance: false,
    };

    if let Some(scratch) = &scratch {
        obs.phase("envelope exits");
        let t0 = Instant::now();
        let st = solved.state.atomic();
        let masks = init(n, rules, below, st, stride, Pass::Envelope(scratch), obs)?;
        stats.init_seconds += t0.elapsed().as_secs_f64();
        obs.phase("envelope");
        let t0 = Instant::now();
        let waves = if waves::on(size as u64 * 3) {
            Some(Waves::new(size as u64)?)
        } else {
            None
        };
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
            rules: *rules,
            waves: waves.as_ref(),
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
        // The score needs the counters and one value byte: the state
        // closes up to 2 bytes a position, so that the score sweep's
        // random updates range over two thirds of the memory.
        close_up(solved.state.as_mut_slice(), padded);
        solved.stride = 2;
    }
    let stride = solved.stride;

    obs.phase("score exits");
    let t0 = Instant::now();
    let pass = match &scratch {
        Some(scratch) => Pass::ScoreFromScratch(scratch),
        None => Pass::Score,
    };
    let masks = init(n, rules, below, solved.state.atomic(), stride, pass, obs)?;
    stats.init_seconds += t0.elapsed().as_secs_f64();
    obs.phase("score");
    let t0 = Instant::now();
    let waves = if waves::on(size as u64 * 2) {
        Some(Waves::new(size as u64)?)
    } else {
        None
    };
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
        rules: *rules,
        waves: waves.as_ref(),
    };
    stats.score_settlements = sweep.run(obs);
    stats.score_seconds = t0.elapsed().as_secs_f64();
    decode(
        &mut solved.state.as_mut_slice()[..size * stride],
        stride,
        &[(A, 0)],
    );
    if distance {
        // The state is [counters, score] a position: the counters' byte
        // takes the distance.
        obs.phase("distance");
        let t0 = Instant::now();
        let lower: Vec<&[u8]> = below.iter().map(|b| b.score).collect();
        let exits = scratch
            .as_ref()
            .map(|s| s as &dyn super::distance::BestExits);
        super::distance::run(
            n,
            rules,
            solved.state.atomic_words(),
            exits,
            &lower[..],
            obs,
        )?;
        stats.distance_seconds = t0.elapsed().as_secs_f64();
        solved.distance = true;
    }
    solved.phase = Phase::Score;
    ready(&solved)?;
    Ok(stats)
}

/// Moves the counter byte of each of the first `len` positions of a
/// 3-byte state to where a 2-byte state keeps it (`CNT` of position `g`
/// from byte `3g` to `2g`), in place and in order, so that nothing is
/// overwritten before it is read. The value bytes are left to be written.
fn close_up(state: &mut [u8], len: usize) {
    let mut g = 0;
    // Eight positions at a time once their 16 new bytes lie wholly before
    // their 24 old ones (from position 16 on).
    while g < len {
        if g >= 16 && g + 8 <= len {
            let (new, old) = state.split_at_mut(3 * g);
            let (new, old) = (&mut new[2 * g..2 * g + 16], &old[..24]);
            for j in 0..8 {
                new[2 * j + CNT] = old[3 * j + CNT];
            }
            g += 8;
        } else {
            state[2 * g + CNT] = state[3 * g + CNT];
            g += 1;
        }
    }
}

/// Solves layers `0..=max` with this solver, no files written, for tests
/// and small tools.
/// Index `k` of the result holds layer `k`'s tables (score, lower, upper;
/// the envelope tables empty without `envelope`); layer 47 is left empty.
/// (The distance is not computed.)
pub fn solve_all(max: u32, rules: &Rules, envelope: bool) -> Result<Vec<[Vec<u8>; 3]>> {
    super::solve_layers(max, envelope, |n, below| {
        let mut tables: [Vec<u8>; 3] = Default::default();
        solve_layer(
            n,
            rules,
            below,
            envelope,
            false,
            None,
            &Silent,
            &mut |s: &Solved| {
                for (k, kind) in [Kind::Score, Kind::Lower, Kind::Upper]
                    .into_iter()
                    .enumerate()
                {
                    if s.has(kind) {
                        tables[k] = s.table(kind);
                    }
                }
                Ok::<(), Error>(())
            },
        )?;
        Ok(tables)
    })
}

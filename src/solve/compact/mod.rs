//! The compact solver: one byte of state per position in memory; exits,
//! results and the lower layers on disk, read and written in index order.
//!
//! It computes what [`super::memory::solve_layer`] computes (the same threshold
//! games, the same bytes) in a third of the memory, and it reads the lower
//! layers only as streams, so they may be kept compressed.
//!
//! # What a threshold game needs at random
//!
//! In the in-memory solver a position's state bytes hold its best exit, its
//! value once settled, and its counters. Of these, the propagation of a
//! settlement (the random part of the work) only asks of a predecessor:
//!
//! * on the `>= t` side ("win"), whether it is settled yet;
//! * on the `<= -t` side ("lose"), whether it is settled, how many internal
//!   children are not yet known to be `>= t` (its counter), and whether its
//!   exits allow `<= -t` at the current threshold (a flag).
//!
//! A settlement's value is the threshold at which it happens, so it need not
//! be kept either. One byte holds all of that: the counter (bits 0..=2), the
//! flag (bit 3), and per side two bits, "settled at this threshold" and
//! "settled before". After each threshold a sequential pass (the *harvest*)
//! appends the positions settled at it to that threshold's result list and
//! marks them as settled before. The tables are assembled from the result
//! lists at the end of a sweep.
//!
//! # Exits as lists
//!
//! The exits are not in memory during a sweep. An exit matters at exactly
//! one threshold: a win exit `e` settles its position at `t = e` (a larger
//! threshold never sees it, a smaller one finds the position settled), and a
//! lose exit `e` sets the flag at `t = -e`. So the exits are written as lists
//! of positions per threshold, and each threshold reads only its own lists.
//!
//! Once per layer, a forward pass generates every position's moves and
//! keeps, half a byte per position in a scratch file, its number of
//! internal moves and the exit that needs no lower layer (no move: `-n`; a
//! move that leaves the opponent empty: `+n`). The exits are computed into a
//! byte array (the layer's one byte per position, before the state exists):
//! those facts first, then the lower layers are streamed in index order, one table at a time, and
//! each child position `C` of layer `n - c` hands `c - value(C)` to every
//! position with a move capturing `c` seeds into `C`
//! ([`Position::for_each_capture_predecessor`](crate::rules::Position::for_each_capture_predecessor)), which keeps the largest. So
//! each lower table is read once, sequentially, per exits pass, whatever its
//! format, and the random accesses are into the layer's own array.
//!
//! # Lists on disk
//!
//! A list holds positions in increasing index order in unnamed temporary
//! files in the scratch folder (they vanish with the process). The layer is
//! cut into windows of [`WINDOW`] positions and chunks of [`CHUNK`]; each
//! window of a list is one blob of segments, one per chunk with entries,
//! each a header (chunk, count, bytes) and LEB128 gaps between indices,
//! compressed with zstd (level 1) when it is long enough. The chunks of a
//! window are encoded and decoded in parallel. An exit list is dropped (its
//! disk space freed) once its threshold is done.
//!
//! # Costs
//!
//! Per layer the compact solver adds to the in-memory solver's work: three
//! exits passes (lower and upper exits for the envelope, score exits)
//! instead of one, each a stream of the lower layers with un-captures; a
//! harvest per threshold (a sequential read of the state); and the lists'
//! I/O, about 3 bytes written and 6 read per position, compressed (layer
//! 24: 1.15 GB written, 2.31 GB read, at most 584 MB on disk at once).
//!
//! # Memory
//!
//! One byte per position (the exits array, then the state, never both) plus
//! the buffers of one window of lists, independent of the layer's size
//! ([`cost`]). Where `AWARI_WAVES` asks for them ([`with_waves`]: not
//! by default, they were slower here), the sweeps propagate in waves
//! (the parent module's `waves`: what the exit lists settle is marked
//! in a bitmap, and the updates it sets off are bucketed by region and
//! applied a region at a time; with several ranks, each wave's updates
//! for the others are exchanged after it), which takes about 0.45 bytes
//! a position more (0.65 with several ranks); the planner drops them
//! where only the solver without them fits.
//!
//! # Where the code is
//!
//! * `lists`: lists of positions on disk (the scratch folder, varint
//!   segments, zstd), and the figures of the traffic;
//! * `exits`: the forward facts, the exits passes over the lower layers,
//!   and the exits sorted into threshold lists;
//! * `sweep`: the compact state and the threshold games on it, with the
//!   exchanges between ranks;
//! * `assemble`: the tables assembled from the result lists.

mod assemble;
mod exits;
mod lists;
mod sweep;

pub use assemble::Assembled;

use super::waves;
use super::{Below, Cost, Observer, SolveStats, BASELINE_BYTES};
use crate::comm::{Comm, Part};
use crate::error::{Error, Result};
use crate::format::Kind;
use crate::index::layer_size;
use crate::mem::Buffer;
use crate::rules::Rules;
use crate::store::StoreError;
use exits::{exits, last_threshold, sort_exits, ExitLists, Facts};
use lists::Disk;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;
use sweep::{sweep, Game};

/// Positions per segment of a list: the unit of parallel work.
pub const CHUNK: u64 = 1 << 16;
/// Positions per window: lists are written and read a window at a time.
pub const WINDOW: u64 = 1 << 20;

/// Windows of an exit list read and decompressed together.
const APPLY_WINDOWS: usize = 4;

/// With several ranks, lower-layer chunks each rank streams between two
/// exchanges of the exits it found for other ranks.
const ROUND_CHUNKS: u64 = 16;

/// Updates from other ranks handled per task.
const RECEIVED_BATCH: usize = 4096;

/// The most seeds one capture takes (six pits of 3).
const MAX_CAPTURE: u32 = 18;

/// Lower layers as the compact solver reads them: ranges of a table, in
/// index order.
pub trait Lower: Sync {
    /// Copies entries `start..start + out.len()` of table `kind` of layer
    /// `layer` into `out`.
    fn read(&self, layer: u32, kind: Kind, start: u64, out: &mut [u8]) -> Result<()>;
}

/// Lower layers held as byte slices (in memory or mapped).
pub struct Slices<'a>(pub &'a [Below<'a>]);

impl Lower for Slices<'_> {
    fn read(&self, layer: u32, kind: Kind, start: u64, out: &mut [u8]) -> Result<()> {
        let memory = || PathBuf::from("(memory)");
        let b = self
            .0
            .get(layer as usize)
            .ok_or_else(|| StoreError::MissingLayer {
                layer,
                dir: memory(),
                vu: false,
            })?;
        let t = match kind {
            Kind::Score => Some(b.score),
            Kind::Lower => b.lower,
            Kind::Upper => b.upper,
            Kind::Distance => None,
        }
        .ok_or_else(|| StoreError::NoEnvelope {
            dir: memory(),
            layer,
        })?;
        let s = start as usize;
        let src = t
            .get(s..s + out.len())
            .ok_or_else(|| StoreError::TableSize {
                layer,
                table: kind.stem(),
                expected: layer_size(layer),
                found: t.len() as u64,
            })?;
        out.copy_from_slice(src);
        Ok(())
    }
}

/// The buffers of lists and lower-layer chunks, at most.
const BUFFER_BYTES: u64 = 12 << 20;

/// What the compact solver needs for layer `n` on each of `ranks` ranks:
/// one byte per position of the largest part, the buffers of a window
/// of lists and, when its sweeps go in `waves` ([`with_waves`]), their
/// bitmap and buckets; its estimate adds the baseline and, with several ranks, the
/// exits exchanged per round and the sweep's updates in flight.
pub fn cost(n: u32, ranks: usize, waves: bool) -> Cost {
    let size = layer_size(n);
    let ranks = ranks.max(1);
    let most = (0..ranks)
        .map(|r| Part::new(size, WINDOW, r, ranks).len())
        .max()
        .unwrap_or(0);
    let waves = match waves {
        true => waves::bytes(most, ranks),
        false => 0,
    };
    let working = most.next_multiple_of(8) + BUFFER_BYTES + waves;
    let exchange = if ranks > 1 {
        EXCHANGE_BYTES + SWEEP_EXCHANGE_BYTES + most / 32
    } else {
        0
    };
    Cost {
        working,
        estimate: working + exchange + BASELINE_BYTES,
    }
}

/// Whether the sweeps go in waves where memory allows ([`crate::solve`]'s
/// waves; with several ranks the updates for the others are exchanged
/// after each wave): only when `AWARI_WAVES` forces them (`1` or `all`).
/// On a state of one byte a position they were slower than depth-first
/// in every measurement so far (docs/performance.md). They take about
/// 0.45 bytes a position more, 0.65 with several ranks ([`cost`]); the
/// planner drops them when only the solver without them fits.
pub fn with_waves() -> bool {
    waves::forced().unwrap_or(false)
}

/// The sweep's updates for other ranks in flight (sent, received and the
/// ones they cause), per group of applied windows: an allowance of three
/// 8-byte updates per position of a group, plus 1/32 byte per position of
/// the part (the chains of settlements an update sets off grow with the
/// layer). An allowance, not a bound: measured with two ranks, the updates
/// took 71 MiB on layer 24 and 101 MiB on layer 29.
const SWEEP_EXCHANGE_BYTES: u64 = 3 * APPLY_WINDOWS as u64 * WINDOW * 8;

/// Exits sent and received per round, at most about (one per lower
/// position streamed; measured: about 0.6).
const EXCHANGE_BYTES: u64 = 2 * ROUND_CHUNKS * CHUNK * 8;

/// Units of work of the compact solve of layer `n`: one per position in
/// each exits pass (three with the envelope, one without) and per possible
/// settlement in each sweep (two per position in the envelope sweep, one
/// in the score sweep).
pub fn work_units(n: u32, envelope: bool) -> u64 {
    layer_size(n) * if envelope { 6 } else { 2 }
}

/// This rank's part of the layer, and the other ranks.
#[derive(Clone, Copy)]
struct Ranks<'a> {
    part: Part,
    comm: &'a dyn Comm,
}

impl Ranks<'_> {
    /// Sends each message to the owner of index `m >> shift` (never this
    /// rank); returns the messages other ranks sent to this one.
    fn exchange(&self, disk: &Disk, msgs: Vec<u64>, shift: u32) -> Result<Vec<u64>> {
        let mut out = vec![Vec::new(); self.comm.size()];
        disk.0.sent.fetch_add(8 * msgs.len() as u64, Relaxed);
        for m in msgs {
            out[self.part.owner(m >> shift)].push(m);
        }
        self.comm.exchange(out)
    }
}

/// Solves layer `n` (not 47) in one byte per position, reading the lower
/// layers through `lower` and keeping lists in unnamed files in `scratch`.
/// With several ranks (`comm`), this rank solves its part of the layer
/// ([`Part`]) together with the others; the tables (this rank's part of
/// them) are handed to `ready` as in [`super::memory::solve_layer`]: the envelope
/// (when built), then the score. With `waves` (and one rank) the sweeps
/// propagate in waves ([`with_waves`]).
#[allow(clippy::too_many_arguments)]
pub fn solve_layer<E: From<Error>>(
    n: u32,
    rules: &Rules,
    lower: &dyn Lower,
    envelope: bool,
    scratch: &Path,
    comm: &dyn Comm,
    waves: bool,
    obs: &dyn Observer,
    ready: &mut dyn FnMut(&Assembled) -> Result<(), E>,
) -> Result<SolveStats, E> {
    // Every rank goes in waves or none does (their memory may differ).
    let mut agree = [waves as u64];
    comm.sum(&mut agree)?;
    let waves = agree[0] == comm.size() as u64;
    let disk = Disk::new(scratch);
    let part = Part::new(layer_size(n), WINDOW, comm.rank(), comm.size());
    let ranks = Ranks { part, comm };
    let size = part.len();
    let mut stats = SolveStats::default();
    let t0 = Instant::now();
    let facts = Facts::compute(&disk, n, rules, part)?;
    stats.init_seconds += t0.elapsed().as_secs_f64();
    let new_lists = || ExitLists {
        win: Vec::new(),
        lose: Vec::new(),
        none: None,
    };
    if envelope {
        obs.phase("envelope exits");
        let t0 = Instant::now();
        let last = last_threshold(n, true);
        let mut lists = new_lists();
        {
            let mut x = Buffer::zeroed(size as usize)?;
            // lower(P) >= t through an exit c - upper(C).
            exits(&disk, ranks, &facts, lower, Kind::Upper, &mut x, obs)?;
            sort_exits(&disk, n, part, last, &mut x, Some(&mut lists.win), None)?;
            // upper(P) <= -t needs every exit c - lower(C) <= -t.
            x.as_mut_slice().fill(0);
            exits(&disk, ranks, &facts, lower, Kind::Lower, &mut x, obs)?;
            sort_exits(
                &disk,
                n,
                part,
                last,
                &mut x,
                None,
                Some((&mut lists.lose, &mut lists.none)),
            )?;
        }
        stats.init_seconds += t0.elapsed().as_secs_f64();
        obs.phase("envelope");
        let t0 = Instant::now();
        let (win, lose, settled) = sweep(
            &disk,
            ranks,
            &facts,
            Game {
                n,
                last,
                joint: false,
                per_position: 2,
                waves,
            },
            lists,
            obs,
        )?;
        stats.envelope_settlements = settled;
        stats.envelope_seconds = t0.elapsed().as_secs_f64();
        ready(&Assembled::new(n, part, &disk, true, win, lose))?;
    }
    obs.phase("score exits");
    let t0 = Instant::now();
    let mut lists = new_lists();
    {
        let mut x = Buffer::zeroed(size as usize)?;
        exits(&disk, ranks, &facts, lower, Kind::Score, &mut x, obs)?;
        let (mut lose, mut none) = (Vec::new(), None);
        sort_exits(
            &disk,
            n,
            part,
            1,
            &mut x,
            Some(&mut lists.win),
            Some((&mut lose, &mut none)),
        )?;
        lists.lose = lose;
        lists.none = none;
    }
    stats.init_seconds += t0.elapsed().as_secs_f64();
    obs.phase("score");
    let t0 = Instant::now();
    let (win, lose, settled) = sweep(
        &disk,
        ranks,
        &facts,
        Game {
            n,
            last: last_threshold(n, false),
            joint: true,
            per_position: 1,
            waves,
        },
        lists,
        obs,
    )?;
    stats.score_settlements = settled;
    stats.score_seconds = t0.elapsed().as_secs_f64();
    ready(&Assembled::new(n, part, &disk, false, win, lose))?;
    stats.io = Some(disk.figures());
    Ok(stats)
}

/// Solves layers `0..=max` with the compact solver, lists in `scratch`, as
/// `ranks` ranks ([`crate::comm::Threads`]: threads of this process, each
/// with `threads` threads of its own); the result is laid out as
/// [`super::memory::solve_all`]'s, the ranks' parts put together.
pub fn solve_all(
    max: u32,
    rules: &Rules,
    envelope: bool,
    scratch: &Path,
    ranks: usize,
    threads: usize,
) -> Result<Vec<[Vec<u8>; 3]>> {
    solve_all_as(max, rules, envelope, scratch, ranks, threads, with_waves())
}

/// [`solve_all`], the sweeps in waves when `waves`.
fn solve_all_as(
    max: u32,
    rules: &Rules,
    envelope: bool,
    scratch: &Path,
    ranks: usize,
    threads: usize,
    waves: bool,
) -> Result<Vec<[Vec<u8>; 3]>> {
    super::solve_layers(max, envelope, |n, below| {
        let comms = crate::comm::Threads::ranks(ranks);
        let parts: Vec<Result<[Vec<u8>; 3]>> = std::thread::scope(|s| {
            let handles: Vec<_> = comms
                .iter()
                .map(|comm| {
                    s.spawn(move || {
                        let pool = rayon::ThreadPoolBuilder::new()
                            .num_threads(threads)
                            .build()
                            .expect("a thread pool");
                        pool.install(|| {
                            let mut tables: [Vec<u8>; 3] = Default::default();
                            solve_layer(
                                n,
                                rules,
                                &Slices(below),
                                envelope,
                                scratch,
                                comm,
                                waves,
                                &super::Silent,
                                &mut |s: &Assembled| {
                                    for (k, kind) in [Kind::Score, Kind::Lower, Kind::Upper]
                                        .into_iter()
                                        .enumerate()
                                    {
                                        if s.has(kind) {
                                            tables[k] = s.table(kind)?;
                                        }
                                    }
                                    Ok::<(), Error>(())
                                },
                            )?;
                            Ok(tables)
                        })
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a rank panicked"))
                .collect()
        });
        let mut tables: [Vec<u8>; 3] = Default::default();
        for part in parts {
            for (t, p) in tables.iter_mut().zip(part?) {
                t.extend_from_slice(&p);
            }
        }
        Ok(tables)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::AWARI;

    /// The same tables as the in-memory solver, with and without the
    /// envelope.
    #[test]
    fn same_tables_as_the_in_memory_solver() {
        let dir = tempfile::tempdir().unwrap();
        for envelope in [true, false] {
            let want = super::super::memory::solve_all(13, &AWARI, envelope).unwrap();
            let got = solve_all(13, &AWARI, envelope, dir.path(), 1, 2).unwrap();
            for (n, (w, g)) in want.iter().zip(&got).enumerate() {
                assert!(w == g, "layer {n} differs (envelope {envelope})");
            }
        }
    }

    /// In waves (forced on every layer: with several ranks every
    /// threshold goes in waves to its end, exchanging after each wave),
    /// 1, 2 and 3 ranks make the tables of depth-first propagation.
    #[test]
    fn ranks_in_waves_make_the_same_tables() {
        let dir = tempfile::tempdir().unwrap();
        let want = solve_all_as(14, &AWARI, true, dir.path(), 1, 2, false).unwrap();
        for ranks in [1, 2, 3] {
            let got = solve_all_as(14, &AWARI, true, dir.path(), ranks, 2, true).unwrap();
            for (n, (w, g)) in want.iter().zip(&got).enumerate() {
                assert!(w == g, "layer {n} differs in waves with {ranks} ranks");
            }
        }
    }

    /// Any number of ranks makes the same tables as one process (layers 13
    /// and 14 have more windows than ranks; small layers leave ranks empty).
    /// `cli/xt/ranks.rs` builds layers 0..=16 by 2, 3 and 4 ranks against the
    /// known-good checksums.
    #[test]
    fn ranks_make_the_same_tables() {
        let dir = tempfile::tempdir().unwrap();
        let want = solve_all(14, &AWARI, true, dir.path(), 1, 2).unwrap();
        for ranks in [2, 3, 4] {
            let got = solve_all(14, &AWARI, true, dir.path(), ranks, 1).unwrap();
            for (n, (w, g)) in want.iter().zip(&got).enumerate() {
                assert!(w == g, "layer {n} differs with {ranks} ranks");
            }
        }
    }
}

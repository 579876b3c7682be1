//! The one memory planner: which solver builds a layer, what it needs, and
//! whether that fits.
//!
//! Each solver states its cost in one function ([`solve::memory::cost`],
//! [`solve::compact::cost`]); [`choose`] picks between them for a layer
//! given where its lower layers are (raw, or only compressed) and the
//! [`Budget`], and is used for everything that asks: the check of the
//! whole range before a build starts ([`check_range`]), each layer's
//! choice, and each rank's need in a build of several ranks.
//!
//! The readers plan here too: the Bellman check of a layer
//! ([`check_need`], [`fit_check`]; `awari check` and `recover`) and a
//! pass streaming a layer's tables ([`stream_need`], [`fit_stream`];
//! `awari stats`, `recover`), each refused before it starts when it does
//! not fit.
//!
//! [`solve::memory::cost`]: crate::solve::memory::cost
//! [`solve::compact::cost`]: crate::solve::compact::cost

use crate::error::{human, Cause, ErrorKind, Result};
use crate::index::layer_size;
use crate::mem::available_memory;
use crate::solve;
use std::path::{Path, PathBuf};

/// Which solver builds a layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Solver {
    /// The in-memory solver ([`solve::memory`](crate::solve::memory)) when the lower layers
    /// are raw and its memory (3 bytes per position) and the mapped lower
    /// tables fit, in the limit or in the memory available; otherwise the
    /// compact one.
    #[default]
    Auto,
    /// Always the in-memory solver (lower layers kept only compressed are
    /// written back raw first).
    Memory,
    /// Always the compact solver ([`solve::compact`](crate::solve::compact)): one byte per
    /// position, lower layers streamed raw or compressed.
    Compact,
}

/// What the planner needs to know of a build: its solver, whether it
/// writes the envelope, whether it compresses each layer as it finishes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shape {
    /// Which solver builds a layer.
    pub solver: Solver,
    /// Whether the envelope's tables are built too.
    pub envelope: bool,
    /// Whether the distance table is built too (after the solver, which
    /// has freed its state by then).
    pub distance: bool,
    /// Whether each layer is compressed (and its raw tables removed) once
    /// recorded.
    pub compress_finished: bool,
}

/// The memory a build may use.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Bytes.
    pub bytes: u64,
    /// Whether they are the caller's limit (else what the machine has
    /// available).
    pub from_limit: bool,
}

impl Budget {
    /// The caller's limit, or what the machine has available now.
    pub fn now(limit: Option<u64>) -> Budget {
        match limit {
            Some(bytes) => Budget {
                bytes,
                from_limit: true,
            },
            None => Budget {
                bytes: available_memory().unwrap_or(u64::MAX),
                from_limit: false,
            },
        }
    }
}

/// Where the layers below a layer are, as the planner needs to know it.
#[derive(Clone, Debug, Default)]
pub struct Lower {
    /// Whether every lower layer is there raw (the in-memory solver maps
    /// them; it writes back those kept only compressed first otherwise).
    pub all_raw: bool,
    /// Bytes of the lower tables the in-memory solver maps.
    pub mapped: u64,
    /// The largest compressed lower table the compact solver maps while it
    /// streams it (0 when all are raw).
    pub largest_compressed: u64,
}

impl Lower {
    /// Lower layers of `n` all raw (or assumed to be).
    pub fn raw(n: u32, envelope: bool) -> Lower {
        let tables = if envelope { 3 } else { 1 };
        Lower {
            all_raw: true,
            mapped: (0..n)
                .filter(|&k| k != 47)
                .map(|k| layer_size(k) * tables)
                .sum(),
            largest_compressed: 0,
        }
    }
}

/// The solver chosen for a layer and its memory estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The compact solver (else the in-memory one).
    pub compact: bool,
    /// The compact solver's sweeps go in waves
    /// ([`solve::compact::with_waves`], where they fit).
    pub waves: bool,
    /// Bytes it needs (the guard's estimate).
    pub estimate: u64,
}

/// What memory a [`PlanError::Memory`] was refused for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Need {
    /// The in-memory solver building a layer.
    MemorySolver,
    /// The compact solver building a layer.
    CompactSolver,
    /// The Bellman check of a layer.
    Check,
    /// A pass streaming a layer's tables.
    Stream,
    /// The distance pass of a built layer.
    Distance,
}

impl Need {
    /// Whether it is a reader's (a check or a streaming pass) rather than
    /// a build's.
    pub fn is_reader(self) -> bool {
        matches!(self, Need::Check | Need::Stream)
    }
}

impl std::fmt::Display for Need {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Need::MemorySolver => {
                "in-memory solver: 3 bytes per position (up to 0.45 more on the layers that \
                 propagate in waves), threshold masks and a fixed baseline; with a limit, the \
                 mapped lower tables too"
            }
            Need::CompactSolver => {
                "compact solver: 1 byte per position, buffers and a fixed baseline, the least \
                 of the solvers"
            }
            Need::Check => {
                "Bellman check: the layer's own tables read whole (3 with the envelope, 1 \
                 without), buffers per thread for the lower layers read in index order, a fixed \
                 baseline"
            }
            Need::Stream => {
                "a pass streaming the layer's tables: a window of each and a fixed baseline"
            }
            Need::Distance => {
                "distance pass, after the solver: 2 bytes per position (the distance beside \
                 the score), a mask per block and a fixed baseline"
            }
        })
    }
}

/// Picks the solver of layer `n` (see [`Solver`]) for one of `ranks`
/// ranks, with its lower layers as `lower`, and checks its memory against
/// `budget`; [`PlanError::Memory`] when no solver allowed fits.
///
/// With several ranks every layer is built by the compact solver, each
/// rank holding its part. In one process, `auto` takes the in-memory
/// solver when the lower layers are raw and its state together with the
/// mapped lower tables fits: those pages are page cache the kernel takes
/// back, but layer 31 built here in memory (10.3 GiB of state, 29.4 GB of
/// lower tables, 24 GiB of memory) spent 1,603 s of its 3,293 s re-reading
/// lower pages at random. With a limit, the mapped lower tables count
/// against it for `memory` too.
pub fn choose(n: u32, opts: &Shape, ranks: usize, lower: &Lower, budget: Budget) -> Result<Choice> {
    choose_as(n, opts, ranks, lower, budget, solve::compact::with_waves())
}

/// [`choose`], the compact solver's sweeps in waves where they fit when
/// `waves`.
fn choose_as(
    n: u32,
    opts: &Shape,
    ranks: usize,
    lower: &Lower,
    budget: Budget,
    waves: bool,
) -> Result<Choice> {
    let refuse = |needed, what| {
        Err(PlanError::Memory {
            what,
            layer: n,
            needed,
            available: budget.bytes,
            from_limit: budget.from_limit,
        }
        .into())
    };
    // The compact solver's waves, where it would use them, if they fit.
    let compact_cost =
        |waves| solve::compact::cost(n, ranks, waves).estimate + lower.largest_compressed;
    let waves = waves && compact_cost(true) <= budget.bytes;
    let compact = compact_cost(waves);
    // The distance pass comes after the solver, in memory it has freed.
    let distance = solve::distance::cost(n).estimate + lower.largest_compressed;
    if opts.distance && distance > budget.bytes {
        return refuse(distance, Need::Distance);
    }
    if ranks > 1 {
        return if compact <= budget.bytes {
            Ok(Choice {
                compact: true,
                waves,
                estimate: compact,
            })
        } else {
            refuse(compact, Need::CompactSolver)
        };
    }
    let state = solve::memory::cost(n, opts.envelope).estimate;
    let cached = state + lower.mapped;
    let memory = if budget.from_limit { cached } else { state };
    let pick = |compact, estimate| {
        Ok(Choice {
            compact,
            waves: compact && waves,
            estimate,
        })
    };
    match opts.solver {
        Solver::Memory if memory <= budget.bytes => pick(false, memory),
        Solver::Memory => refuse(memory, Need::MemorySolver),
        Solver::Auto if lower.all_raw && cached <= budget.bytes => pick(false, memory),
        _ if compact <= budget.bytes => pick(true, compact),
        _ => refuse(compact, Need::CompactSolver),
    }
}

/// What a reader's process needs besides what it reads: code, stacks,
/// the tables' handles.
pub const READER_BASELINE: u64 = 32 << 20;

/// Bytes the Bellman check of layer `n` needs with `threads` threads
/// ([`crate::verify::bellman_check`]): its own tables read whole (three
/// with the envelope, else the scores), the rows it walks, each thread's
/// batch ([`crate::verify::CHECK_BATCH_BYTES`]) and
/// [`READER_BASELINE`]. The lower layers are read a run at a time, not
/// held.
pub fn check_need(n: u32, envelope: bool, threads: usize) -> u64 {
    // The distance table, where the layer has one, comes on top.
    let tables = if envelope { 3 } else { 1 } + 1;
    // Each row of 6 pits of at most n seeds: 6 bytes, and its place.
    let rows = (1..=6u64).fold(1, |c, i| c * (n as u64 + i) / i) * 14;
    layer_size(n) * tables
        + rows
        + threads.max(1) as u64 * crate::verify::CHECK_BATCH_BYTES
        + READER_BASELINE
}

/// Checks that the Bellman check of layer `n` fits in `budget`; its need
/// ([`check_need`]), else [`PlanError::Memory`] naming the layer and the bytes.
pub fn fit_check(n: u32, envelope: bool, threads: usize, budget: Budget) -> Result<u64> {
    fit(n, check_need(n, envelope, threads), Need::Check, budget)
}

/// Checks that the distance pass of layer `n` alone (adding `dist.n` to a
/// layer recorded without it) fits in `budget`; its need.
pub fn fit_distance(n: u32, budget: Budget) -> Result<u64> {
    fit(n, solve::distance::cost(n).estimate, Need::Distance, budget)
}

/// Bytes a pass streaming a layer's `tables` tables in windows of
/// `window` bytes needs.
pub fn stream_need(tables: u64, window: u64) -> u64 {
    tables * window + READER_BASELINE
}

/// Checks that a pass streaming `tables` tables of layer `n` in windows of
/// `window` bytes fits in `budget` ([`stream_need`]).
pub fn fit_stream(n: u32, tables: u64, window: u64, budget: Budget) -> Result<u64> {
    fit(n, stream_need(tables, window), Need::Stream, budget)
}

fn fit(n: u32, needed: u64, what: Need, budget: Budget) -> Result<u64> {
    if needed <= budget.bytes {
        return Ok(needed);
    }
    Err(PlanError::Memory {
        what,
        layer: n,
        needed,
        available: budget.bytes,
        from_limit: budget.from_limit,
    }
    .into())
}

/// Checks, before anything is written, that every layer of `todo` (the
/// layers a build will make, in order) fits in memory as [`choose`] would
/// plan it (lower layers not built yet taken as raw, which is the least
/// the compact solver needs) and that their tables fit on the disk of
/// `dir`: all of them, or with compression as they go the largest layer's
/// raw tables (a lower bound: compressed copies come on top).
pub fn check_range(
    dir: &Path,
    todo: &[u32],
    opts: &Shape,
    ranks: usize,
    budget: Budget,
) -> Result<()> {
    for &n in todo {
        choose(n, opts, ranks, &Lower::raw(n, opts.envelope), budget)?;
    }
    let tables = if opts.envelope { 3 } else { 1 } + u64::from(opts.distance);
    let raw = todo.iter().map(|&n| layer_size(n) * tables);
    let needed = if opts.compress_finished {
        raw.max().unwrap_or(0)
    } else {
        raw.sum()
    };
    if let (Some(free), Some(first), Some(last)) = (free_disk(dir), todo.first(), todo.last()) {
        if needed > free {
            return Err(PlanError::Disk {
                dir: dir.to_path_buf(),
                first: *first,
                last: *last,
                needed,
                free,
            }
            .into());
        }
    }
    Ok(())
}

/// Bytes free for an unprivileged writer on the filesystem of `dir` (or of
/// its nearest existing ancestor); `None` where it cannot be told.
fn free_disk(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let existing = dir
        .ancestors()
        .find(|p| p.exists() && !p.as_os_str().is_empty())?;
    let c = std::ffi::CString::new(existing.as_os_str().as_bytes()).ok()?;
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid C string and a struct of the right type to fill.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    Some(s.f_bavail as u64 * s.f_frsize as u64)
}

/// What does not fit: memory for a layer, disk for the tables.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// A layer does not fit in the memory allowed.
    #[error(
        "layer {layer} needs {} of memory ({what}) but only {} is available{}",
        human(*needed), human(*available),
        if *from_limit { " (the memory limit)" } else { " on this machine" }
    )]
    Memory {
        /// What the memory is for.
        what: Need,
        /// The layer refused.
        layer: u32,
        /// Bytes it needs.
        needed: u64,
        /// Bytes allowed.
        available: u64,
        /// Whether the bytes allowed are the caller's limit (else what the
        /// machine has available).
        from_limit: bool,
    },
    /// A layer range does not fit on the disk.
    #[error(
        "layers {first}..={last} need about {} of disk in {}, but it has {} free",
        human(*needed), dir.display(), human(*free)
    )]
    Disk {
        /// The folder.
        dir: PathBuf,
        /// First layer to build.
        first: u32,
        /// Last layer to build.
        last: u32,
        /// Bytes the tables need.
        needed: u64,
        /// Bytes free.
        free: u64,
    },
}

impl Cause for PlanError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Memory
    }

    fn path(&self) -> Option<&Path> {
        match self {
            PlanError::Disk { dir, .. } => Some(dir),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(solver: Solver) -> Shape {
        Shape {
            solver,
            envelope: true,
            distance: false,
            compress_finished: false,
        }
    }

    #[test]
    fn auto_takes_memory_when_it_fits_else_compact_else_refuses() {
        let o = opts(Solver::Auto);
        let lower = Lower::raw(20, true);
        let big = Budget {
            bytes: u64::MAX / 4,
            from_limit: true,
        };
        let c = choose(20, &o, 1, &lower, big).unwrap();
        assert!(!c.compact);
        assert_eq!(
            c.estimate,
            solve::memory::cost(20, true).estimate + lower.mapped
        );
        let compact = solve::compact::cost(20, 1, false).estimate;
        let tight = Budget {
            bytes: compact,
            from_limit: true,
        };
        let c = choose(20, &o, 1, &lower, tight).unwrap();
        assert_eq!(
            c,
            Choice {
                compact: true,
                waves: false,
                estimate: compact
            }
        );
        let small = Budget {
            bytes: compact - 1,
            from_limit: true,
        };
        match choose(20, &o, 1, &lower, small).map_err(|e| e.cause::<PlanError>().cloned()) {
            Err(Some(PlanError::Memory { needed, layer, .. })) => {
                assert_eq!((needed, layer), (compact, 20))
            }
            other => panic!("{other:?}"),
        }
    }

    /// The compact solver's waves, asked for, come when they fit, and are
    /// dropped when only the solver without them does; not asked for
    /// (the default), they never come.
    #[test]
    fn the_compact_solver_drops_its_waves_when_only_it_fits_without() {
        let o = opts(Solver::Compact);
        let lower = Lower::raw(30, true);
        let (with, without) = (
            solve::compact::cost(30, 1, true).estimate,
            solve::compact::cost(30, 1, false).estimate,
        );
        // The bitmap alone is a quarter of a byte a position.
        assert!(with > without + layer_size(30) / 4);
        for (bytes, waves, estimate) in [(with, true, with), (with - 1, false, without)] {
            let budget = Budget {
                bytes,
                from_limit: true,
            };
            let c = choose_as(30, &o, 1, &lower, budget, true).unwrap();
            assert_eq!((c.compact, c.waves, c.estimate), (true, waves, estimate));
            // Not asked for, no waves.
            let c = choose_as(30, &o, 1, &lower, budget, false).unwrap();
            assert_eq!((c.compact, c.waves, c.estimate), (true, false, without));
        }
    }

    #[test]
    fn ranks_and_compressed_lower_layers_use_the_compact_solver() {
        let o = opts(Solver::Auto);
        let big = Budget {
            bytes: u64::MAX / 4,
            from_limit: false,
        };
        let c = choose(22, &o, 3, &Lower::raw(22, true), big).unwrap();
        assert!(c.compact);
        assert_eq!(c.estimate, solve::compact::cost(22, 3, false).estimate);
        let packed = Lower {
            all_raw: false,
            mapped: 0,
            largest_compressed: 1000,
        };
        let c = choose(22, &o, 1, &packed, big).unwrap();
        assert_eq!(
            c.estimate,
            solve::compact::cost(22, 1, false).estimate + 1000
        );
    }

    #[test]
    fn a_check_needs_its_own_tables_and_is_refused_below() {
        let need = check_need(20, true, 2);
        assert!(need > 3 * layer_size(20));
        assert!(check_need(20, false, 2) < need);
        let budget = |bytes| Budget {
            bytes,
            from_limit: true,
        };
        assert_eq!(fit_check(20, true, 2, budget(need)).unwrap(), need);
        match fit_check(20, true, 2, budget(need - 1)).map_err(|e| e.cause::<PlanError>().cloned())
        {
            Err(Some(PlanError::Memory {
                layer,
                needed,
                what,
                ..
            })) => {
                assert_eq!((layer, needed), (20, need));
                assert!(what.is_reader());
            }
            other => panic!("{other:?}"),
        }
        assert!(fit_stream(20, 1, 1 << 20, budget(1 << 20)).is_err());
    }

    /// The distance pass comes after the solver, in 2 bytes a position
    /// and its masks: a budget that the compact solver fits but the pass
    /// does not is refused, naming the pass.
    #[test]
    fn a_build_with_the_distance_needs_its_pass() {
        let o = Shape {
            distance: true,
            ..opts(Solver::Auto)
        };
        let need = solve::distance::cost(20).estimate;
        assert!(need > solve::compact::cost(20, 1, false).estimate);
        let lower = Lower::raw(20, true);
        let budget = |bytes| Budget {
            bytes,
            from_limit: true,
        };
        assert!(choose(20, &o, 1, &lower, budget(need)).unwrap().compact);
        match choose(20, &o, 1, &lower, budget(need - 1))
            .map_err(|e| e.cause::<PlanError>().cloned())
        {
            Err(Some(PlanError::Memory { what, needed, .. })) => {
                assert_eq!((what, needed), (Need::Distance, need))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_whole_range_is_checked_before_the_first_layer() {
        // A limit that layer 19 fits and layer 21 does not: refused at once,
        // naming layer 21, not after building 0..=20.
        let o = opts(Solver::Auto);
        let limit = solve::compact::cost(20, 1, false).estimate;
        let budget = Budget {
            bytes: limit,
            from_limit: true,
        };
        let todo: Vec<u32> = (0..=24).collect();
        match check_range(Path::new("."), &todo, &o, 1, budget)
            .map_err(|e| e.cause::<PlanError>().cloned())
        {
            Err(Some(PlanError::Memory { layer, .. })) => assert_eq!(layer, 21),
            other => panic!("{other:?}"),
        }
    }
}

//! Building one layer: solve it (in memory, or compact with its lower
//! layers streamed), write its tables, and gather its figures for the
//! manifest.

use super::{BuildObserver, BuildOptions, Choice};
use crate::comm::{Comm, Part, Single};
use crate::error::Result;
use crate::format::Kind;
use crate::index::layer_size;
use crate::mem::{peak_rss, reset_peak_rss, PeakSampler};
use crate::solve::{self, Below};
use crate::store::StoreError;
use crate::store::{self, FileEntry, LayerEntry, Manifest, Mapped, PhaseSeconds};
use std::path::Path;
use std::time::Instant;

/// The mapped tables of a finished layer, for the in-memory solver.
pub(super) struct Finished {
    score: Mapped,
    envelope: Option<(Mapped, Mapped)>,
}

impl Finished {
    /// Maps the raw tables of layer `n` of `dir`, whose lock the builder
    /// holds.
    pub(super) fn map(dir: &Path, n: u32, envelope: bool) -> Result<Finished> {
        // SAFETY: the builder holds the folder's lock, which every writer
        // of the folder takes, so no one truncates its tables meanwhile
        // (see the mapping contract in `store::map`).
        let access = unsafe { store::Access::mapped() };
        let open = |k: Kind| -> Result<Mapped> {
            let raw = store::raw_file_required(dir, &k.file_name(n))?;
            let t = store::StoredTable::open(&raw, n, k, None, access)?;
            Ok(t.into_mapped().expect("a raw table, mapped"))
        };
        Ok(Finished {
            score: open(Kind::Score)?,
            envelope: if envelope {
                Some((open(Kind::Lower)?, open(Kind::Upper)?))
            } else {
                None
            },
        })
    }

    /// Drops its resident pages (they stay in the page cache).
    fn release(&self) {
        self.score.release();
        if let Some((lo, hi)) = &self.envelope {
            lo.release();
            hi.release();
        }
    }
}

/// The lower layers as the compact solver reads them, opened by
/// [`store::StoredTable::find`]: raw tables with `pread` (no mapping, so
/// nothing of them counts as the process's memory), compressed ones block
/// by block from a mapping. One table is open at a time.
struct Streams<'a> {
    dir: &'a Path,
    manifest: &'a Manifest,
    open: std::sync::Mutex<Option<OpenTable>>,
}

/// The table a [`Streams`] has open: layer, kind and the table.
type OpenTable = ((u32, Kind), std::sync::Arc<store::StoredTable>);

impl Streams<'_> {
    fn source(&self, k: u32, kind: Kind) -> Result<std::sync::Arc<store::StoredTable>> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((key, s)) = &*open {
            if *key == (k, kind) {
                return Ok(s.clone());
            }
        }
        *open = None;
        // SAFETY: the builder holds the folder's lock, which every writer
        // of the folder takes (see `store::map`).
        let access = unsafe { store::Access::mapped_compressed() };
        let rules = self.manifest.rules();
        let table =
            store::StoredTable::find(self.dir, Some(self.manifest), k, kind, Some(&rules), access)?
                .ok_or_else(|| match self.manifest.layer(k) {
                    Some(_) => StoreError::NoEnvelope {
                        dir: self.dir.to_path_buf(),
                        layer: k,
                    },
                    None => StoreError::MissingLayer {
                        layer: k,
                        dir: self.dir.to_path_buf(),
                        vu: false,
                    },
                })?;
        let s = std::sync::Arc::new(table);
        *open = Some(((k, kind), s.clone()));
        Ok(s)
    }
}

impl solve::compact::Lower for Streams<'_> {
    fn read(&self, layer: u32, kind: Kind, start: u64, out: &mut [u8]) -> Result<()> {
        self.source(layer, kind)?.read_at(start, out)
    }
}

/// What a layer's solve wrote.
#[derive(Default)]
struct Written {
    scores: Option<FileEntry>,
    lower: Option<FileEntry>,
    upper: Option<FileEntry>,
    dist: Option<FileEntry>,
    pinned: Option<u64>,
    histogram: Vec<u64>,
    seconds: f64,
}

/// Solves layer `n` with the in-memory solver on the mapped lower layers
/// and writes its tables.
fn build_in_memory(
    dir: &Path,
    n: u32,
    opts: &BuildOptions,
    finished: &[Option<Finished>],
    obs: &dyn BuildObserver,
    w: &mut Written,
) -> Result<solve::SolveStats> {
    let empty: &[u8] = &[];
    let below: Vec<Below> = finished
        .iter()
        .map(|f| match f {
            Some(f) => Below {
                score: &f.score,
                lower: f.envelope.as_ref().map(|e| &*e.0),
                upper: f.envelope.as_ref().map(|e| &*e.1),
            },
            None => Below {
                score: empty,
                lower: None,
                upper: None,
            },
        })
        .collect();
    solve::memory::solve_layer(
        n,
        &opts.rules,
        &below,
        opts.envelope,
        opts.distance,
        Some(opts.scratch.as_deref().unwrap_or(dir)),
        obs,
        &mut |solved: &solve::memory::Solved| write_tables(dir, n, &Single, obs, solved, w),
    )
}

/// Writes the tables a solver hands out (the envelope, then the score) and
/// records them in `w`: each rank its part (see [`write_parts`]), with the
/// pinned count and the histogram summed over the ranks.
fn write_tables(
    dir: &Path,
    n: u32,
    comm: &dyn Comm,
    obs: &dyn BuildObserver,
    solved: &dyn solve::SolvedTables,
    w: &mut Written,
) -> Result<()> {
    obs.phase("write");
    let tw = Instant::now();
    let positions = layer_size(n);
    let write = |kind: Kind| -> Result<FileEntry> {
        let name = kind.file_name(n);
        let xxh3 = store::write_parts(
            &dir.join(&name),
            positions,
            solved.part(),
            comm,
            |start, buf| solved.extract(kind, start as usize, buf),
        )?;
        Ok(FileEntry {
            name,
            bytes: positions,
            xxh3,
        })
    };
    if solved.has(Kind::Lower) {
        w.lower = Some(write(Kind::Lower)?);
        w.upper = Some(write(Kind::Upper)?);
        w.pinned = match solved.pinned()? {
            Some(p) => {
                let mut p = [p];
                comm.sum(&mut p)?;
                Some(p[0])
            }
            None => None,
        };
    }
    if solved.has(Kind::Score) {
        w.scores = Some(write(Kind::Score)?);
        if solved.has(Kind::Distance) {
            w.dist = Some(write(Kind::Distance)?);
        }
        w.histogram = solved.histogram();
        comm.sum(&mut w.histogram)?;
    }
    w.seconds += tw.elapsed().as_secs_f64();
    Ok(())
}

pub(super) fn build_layer(
    n: u32,
    opts: &BuildOptions,
    manifest: &Manifest,
    finished: &[Option<Finished>],
    choice: Choice,
    comm: &dyn Comm,
    obs: &dyn BuildObserver,
) -> Result<LayerEntry> {
    let dir = opts.db.as_path();
    let positions = layer_size(n);
    let part = Part::new(positions, solve::compact::WINDOW, comm.rank(), comm.size());
    // This rank's working arrays and share of the work (all of it in one
    // process); the estimate is the planner's.
    let (working, work) = if choice.compact {
        (
            solve::compact::cost(n, comm.size(), choice.waves).working,
            solve::compact::work_units(n, opts.envelope) / positions * part.len(),
        )
    } else {
        (
            solve::memory::cost(n, opts.envelope).working,
            solve::memory::work_units(n, opts.envelope),
        )
    };
    let estimate = choice.estimate;
    // The distance pass follows on rank 0 ([`super::distance`]).
    let work = work
        + if opts.distance && comm.rank() == 0 {
            2 * positions
        } else {
            0
        };
    obs.start(n, positions, work, choice.compact);
    if opts.reset_peak_rss {
        reset_peak_rss();
    }
    let sampler = PeakSampler::start();
    let t0 = Instant::now();
    let mut w = Written::default();
    let s = if choice.compact {
        // The compact solver streams the lower layers: pages the in-memory
        // solver left mapped would only count against the budget.
        for f in finished.iter().flatten() {
            f.release();
        }
        let scratch = opts.scratch.as_deref().unwrap_or(dir);
        let streams = Streams {
            dir,
            manifest,
            open: Default::default(),
        };
        solve::compact::solve_layer(
            n,
            &opts.rules,
            &streams,
            opts.envelope,
            scratch,
            comm,
            choice.waves,
            obs,
            &mut |solved: &solve::compact::Assembled| {
                write_tables(dir, n, comm, obs, solved, &mut w)
            },
        )?
    } else {
        build_in_memory(dir, n, opts, finished, obs, &mut w)?
    };
    let Written {
        scores,
        lower,
        upper,
        dist,
        pinned,
        histogram,
        seconds: write_seconds,
    } = w;
    let scores = scores.expect("the solver hands out the score");

    let wall = t0.elapsed().as_secs_f64();
    let peaks = sampler.finish();
    // Memory: the largest rank's; work and traffic: all ranks'.
    let mut most = [peak_rss(), peaks.anon, peaks.file, working, estimate];
    comm.max(&mut most)?;
    let [peak_rss_bytes, peak_anon, peak_file, working, estimate] = most;
    let mut sums = [s.envelope_settlements + s.score_settlements, 0, 0, 0, 0, 0];
    if let Some(io) = &s.io {
        sums[1..].copy_from_slice(&[
            io.lower_read_bytes,
            io.scratch_written_bytes,
            io.scratch_read_bytes,
            io.scratch_peak_bytes,
            io.sent_bytes,
        ]);
    }
    comm.sum(&mut sums)?;
    let io = s.io.as_ref().map(|_| store::IoFigures {
        lower_read_bytes: sums[1],
        scratch_written_bytes: sums[2],
        scratch_read_bytes: sums[3],
        scratch_peak_bytes: sums[4],
        sent_bytes: sums[5],
    });
    let entry = LayerEntry {
        seeds: n,
        positions,
        scores,
        lower,
        upper,
        dist,
        wall_seconds: wall,
        positions_per_second: positions as f64 / wall.max(1e-9),
        phase_seconds: PhaseSeconds {
            exits: s.init_seconds,
            envelope: s.envelope_seconds,
            score: s.score_seconds,
            write: write_seconds,
            distance: s.distance_seconds,
        },
        peak_rss_bytes,
        working_bytes: working,
        peak_anon_bytes: peak_anon,
        peak_file_bytes: peak_file,
        estimate_bytes: estimate,
        threads: rayon::current_num_threads(),
        settlements_per_position: sums[0] as f64 / positions as f64,
        pinned,
        score_histogram: histogram,
        recovered: None,
        solver: Some(
            if choice.compact {
                "compact"
            } else {
                "in-memory"
            }
            .into(),
        ),
        io,
        ranks: (comm.size() > 1).then_some(comm.size()),
    };
    Ok(entry)
}

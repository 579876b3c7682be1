//! Building a database: every layer in order, resumable, into a folder of
//! tables.
//!
//! Before anything is written, [`plan::check_range`] checks that every
//! layer to build fits in memory (the one planner, [`crate::plan`]) and on
//! disk.
//! Per layer: pick the solver and check its memory ([`plan::choose`]),
//! solve ([`crate::solve`]), write each table atomically, then record the
//! layer in the manifest (written atomically too; [`crate::store`]). A
//! later run skips layers whose files are listed in the manifest and match
//! their checksums ([`store::check_layer`]), rebuilds a layer whose files
//! do not, and continues at the first missing layer, so a build killed at
//! any moment ends with the same bytes once restarted.
//!
//! * this module: the driver ([`build`], [`build_ranks`]) and its options.
//! * `layer`: one layer: solve, write, figures.
//! * `distance`: a recorded layer's distance table
//!   ([`crate::solve::distance`]), computed from its scores once they are
//!   written; a layer recorded without it gets it on the next build that
//!   asks for it.
//! * `ranks`: what the ranks of a build must agree on.
//!
//! # Example
//!
//! Layers 0..=8 with the envelope into a new folder; run again, it
//! verifies them and builds nothing.
//!
//! ```
//! use awari_egdb::build::{build, layers_up_to, BuildOptions, Silent};
//! # fn main() -> awari_egdb::Result<()> {
//! let dir = tempfile::tempdir().unwrap();
//! let opts = BuildOptions { max_seeds: 8, ..BuildOptions::new(dir.path()) };
//! let report = build(&opts, &Silent)?;
//! assert_eq!(report.built, layers_up_to(8));
//! assert!(build(&opts, &Silent)?.built.is_empty());
//! # Ok(()) }
//! ```
//!
//! The builder maps the raw tables of lower layers for the in-memory
//! solver while it holds the folder's lock (see the mapping contract in
//! [`crate::store::map`]).

mod distance;
mod error;
pub use error::BuildError;
mod layer;
mod ranks;

pub use crate::plan::{Budget, Choice, Shape, Solver};
pub use crate::solve::{Observer, Silent, SolveStats};

use crate::comm::{Comm, Single};
use crate::error::Result;
use crate::format::Kind;
use crate::index::IndexError;
use crate::plan;
use crate::rules::{Rules, MAX_SEEDS};
use crate::solve;
use crate::store::{self, FolderLock, LayerEntry, Manifest};
use layer::Finished;
use std::path::{Path, PathBuf};

/// What to build and where.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// The rule set of the tables ([`crate::rules::AWARI`] by default); a
    /// folder of another rule set is refused.
    pub rules: Rules,
    /// Build layers `0..=max_seeds` (47 is skipped).
    pub max_seeds: u32,
    /// The folder of tables.
    pub db: PathBuf,
    /// Build `lower.n` and `upper.n` too.
    pub envelope: bool,
    /// Build `dist.n` too, the distance to the next capture
    /// ([`crate::solve::distance`]); without it a folder holds what the VU
    /// database holds, best play by it may repeat a position before the
    /// capture its score needs.
    pub distance: bool,
    /// Refuse a layer whose working memory exceeds this many bytes; `None`:
    /// what the machine has available before each layer.
    pub memory_limit: Option<u64>,
    /// Reset the process's peak resident memory counter (Linux: writes
    /// `/proc/self/clear_refs`) before each layer, so that each manifest
    /// entry records that layer's own peak. This changes process state, so
    /// it is the caller's choice (the `awari` binary sets it); without it a
    /// layer records the process's peak so far.
    pub reset_peak_rss: bool,
    /// Which solver builds each layer.
    pub solver: Solver,
    /// Folder of the compact solver's lists (unnamed temporary files);
    /// `None`: the output folder.
    pub scratch: Option<PathBuf>,
    /// Compress each layer's tables with these settings (format 4, once
    /// the layer is recorded) and remove its raw tables (the next layers
    /// read it compressed, with the compact solver), so a long build keeps
    /// the disk small as it goes.
    pub compress_finished: Option<crate::codec::Settings>,
}

impl BuildOptions {
    /// What the planner needs to know of this build.
    pub fn shape(&self) -> Shape {
        Shape {
            solver: self.solver,
            envelope: self.envelope,
            distance: self.distance,
            compress_finished: self.compress_finished.is_some(),
        }
    }

    /// Awari layers 0..=20 with the envelope and the distance into `db`, with the memory the
    /// machine has, the solver chosen per layer, nothing compressed.
    pub fn new(db: impl Into<PathBuf>) -> BuildOptions {
        BuildOptions {
            rules: crate::rules::AWARI,
            max_seeds: 20,
            db: db.into(),
            envelope: true,
            distance: true,
            memory_limit: None,
            reset_peak_rss: false,
            solver: Solver::Auto,
            scratch: None,
            compress_finished: None,
        }
    }
}

/// What the builder reports while it works (on top of the solver's progress).
pub trait BuildObserver: Observer {
    /// The plan: these layers, of which some may be reused.
    fn plan(&self, _layers: &[u32]) {}
    /// A layer was found finished and its checksums verified.
    fn reused(&self, _n: u32) {}
    /// A layer starts building; its solve reports `work` units of work
    /// ([`Observer::advance`]), by the compact solver when `compact`.
    fn start(&self, _n: u32, _positions: u64, _work: u64, _compact: bool) {}
    /// A layer was built and recorded.
    fn done(&self, _entry: &LayerEntry) {}
    /// Something the user should know; the build goes on.
    fn warning(&self, _message: &str) {}
    /// What the builder is doing besides building (writing back layers
    /// kept compressed, for instance).
    fn note(&self, _message: &str) {}
}

impl BuildObserver for solve::Silent {}

/// The result of a build.
#[derive(Debug)]
pub struct BuildReport {
    /// Layers built by this run.
    pub built: Vec<u32>,
    /// Layers found finished and verified.
    pub reused: Vec<u32>,
    /// The folder's manifest at the end.
    pub manifest: Manifest,
}

/// The layers of a build up to `max`, in order (47 never occurs).
pub fn layers_up_to(max: u32) -> Vec<u32> {
    (0..=max).filter(|&n| n != 47).collect()
}

/// Builds (or resumes) the database described by `opts` on the current
/// rayon pool.
pub fn build(opts: &BuildOptions, obs: &dyn BuildObserver) -> Result<BuildReport> {
    build_ranks(opts, &Single, obs)
}

/// Where the lower layers of `n` are, for the planner.
fn lower_of(
    dir: &Path,
    m: &Manifest,
    n: u32,
    finished: &[Option<Finished>],
    envelope: bool,
) -> Result<plan::Lower> {
    let mut lower = plan::Lower::raw(n, envelope);
    lower.all_raw = (0..n)
        .filter(|&k| k != 47)
        .all(|k| finished[k as usize].is_some());
    for k in (0..n).filter(|&k| k != 47 && finished[k as usize].is_none()) {
        for kind in [Kind::Score, Kind::Lower, Kind::Upper] {
            if let Some(store::Stored::Compressed {
                listed: Some((c, _)),
                ..
            }) = store::locate(dir, Some(m), k, kind)?
            {
                lower.largest_compressed = lower.largest_compressed.max(c.bytes);
            }
        }
    }
    Ok(lower)
}

/// The tables of a recorded layer kept only compressed.
fn compressed_only(dir: &Path, m: &Manifest, n: u32) -> Result<Vec<store::FileEntry>> {
    let mut out = Vec::new();
    if let Some(e) = m.layer(n) {
        for (kind, f) in e.files() {
            if store::locate(dir, Some(m), n, kind)?.is_some_and(|s| s.is_compressed()) {
                out.push(f.clone());
            }
        }
    }
    Ok(out)
}

/// Builds (or resumes) the database as one of the ranks of `comm`: every
/// rank solves its part of each layer and writes its byte range of the
/// tables; rank 0 alone decides which layers to build, holds the folder's
/// lock and writes the manifest. With one rank this is [`build`].
///
/// An error on one rank leaves the others waiting in their next
/// collective operation: the caller stops every rank when one returns an
/// error (the CLI calls `MPI_Abort`).
pub fn build_ranks(
    opts: &BuildOptions,
    comm: &dyn Comm,
    obs: &dyn BuildObserver,
) -> Result<BuildReport> {
    let ranks = comm.size();
    let root = comm.rank() == 0;
    if ranks > 1 {
        ranks::check_alike(opts, comm)?;
        if opts.solver == Solver::Memory {
            return Err(BuildError::RanksNeedCompact.into());
        }
    }
    if opts.max_seeds > MAX_SEEDS {
        return Err(IndexError::NoSuchLayer(opts.max_seeds).into());
    }
    let dir = opts.db.as_path();
    if dir.exists() {
        store::check_folder(dir)?;
    }
    if let Some(scratch) = &opts.scratch {
        store::check_folder(scratch)?;
    }
    if let Some(s) = opts.compress_finished {
        crate::pack::check_settings(s)?;
    }
    let plan = layers_up_to(opts.max_seeds);
    // Everything that can be refused is refused before anything is
    // written: a foreign folder, and a range that does not fit.
    let known = if dir.exists() {
        store::manifest_to_write(dir, &opts.rules)?
    } else {
        Manifest::new(&opts.rules)
    };
    let todo: Vec<u32> = plan
        .iter()
        .copied()
        .filter(|&n| known.layer(n).is_none())
        .collect();
    plan::check_range(
        dir,
        &todo,
        &opts.shape(),
        ranks,
        Budget::now(opts.memory_limit),
    )?;
    if dir.exists() {
        store::check_unlisted(dir, &known, &todo)?;
    }

    // Rank 0 alone writes to the folder outside the tables' byte ranges.
    let mut lock = None;
    if root {
        store::create_folder(dir)?;
        lock = Some(FolderLock::acquire(dir)?);
        if Manifest::load(dir)?.is_none() {
            // Claim the folder before the first table lands, so a build
            // killed at any moment leaves a folder it can resume.
            store::manifest_to_write(dir, &opts.rules)?.store(dir)?;
        }
    }
    if ranks > 1 {
        ranks::same_folder(dir, lock.as_ref(), comm)?;
    }
    comm.barrier()?;
    let mut manifest = Manifest::load(dir)?.unwrap_or_else(|| Manifest::new(&opts.rules));
    obs.plan(&plan);
    if let Some(n) = lock.as_ref().and_then(|l| l.interrupted_layer()) {
        if manifest.layer(n).is_none() {
            obs.warning(&format!(
                "the last build stopped in the middle of layer {n}; it is built again"
            ));
        }
    }

    let mut report = BuildReport {
        built: Vec::new(),
        reused: Vec::new(),
        manifest: Manifest::new(&opts.rules),
    };
    let mut finished: Vec<Option<Finished>> = Vec::new();
    for &n in &plan {
        while finished.len() < n as usize {
            finished.push(None); // layer 47
        }
        if !root {
            // Rank 0 checks the recorded layers; the others follow.
            let mut reuse = [0u64];
            comm.broadcast(&mut reuse)?;
            finished.push(None);
            if reuse[0] == 1 {
                report.reused.push(n);
                continue;
            }
            manifest = Manifest::load(dir)?.unwrap_or_else(|| Manifest::new(&opts.rules));
            let lower = lower_of(dir, &manifest, n, &finished, opts.envelope)?;
            let choice = plan::choose(
                n,
                &opts.shape(),
                ranks,
                &lower,
                Budget::now(opts.memory_limit),
            )?;
            layer::build_layer(n, opts, &manifest, &finished, choice, comm, obs)?;
            comm.barrier()?;
            report.built.push(n);
            continue;
        }
        if let Some(e) = manifest.layer(n) {
            match store::check_layer(dir, &manifest, e, opts.envelope)? {
                None => {
                    if ranks > 1 {
                        comm.broadcast(&mut [1])?;
                    }
                    if opts.distance && e.dist.is_none() {
                        // Recorded without the distance: it is added.
                        let mut e = e.clone();
                        plan::fit_distance(n, Budget::now(opts.memory_limit))?;
                        if let Some(l) = &lock {
                            l.record(&format!("adding the distance to layer {n}"))?;
                        }
                        obs.start(n, e.positions, 2 * e.positions, false);
                        let (f, secs) =
                            distance::write_distance(dir, &manifest, n, &opts.rules, obs)?;
                        e.dist = Some(f);
                        e.phase_seconds.distance = secs;
                        manifest.put(e.clone());
                        manifest.store(dir)?;
                        obs.done(&e);
                    }
                    let compressed = compressed_only(dir, &manifest, n)?;
                    if compressed.is_empty() {
                        finished.push(Some(Finished::map(dir, n, opts.envelope)?));
                    } else {
                        // Mapped raw only if a layer above is built.
                        let names: Vec<&str> = compressed.iter().map(|f| f.name.as_str()).collect();
                        obs.note(&format!(
                            "layer {n} is kept only compressed ({}); its compressed files \
                             match the manifest",
                            names.join(", ")
                        ));
                        finished.push(None);
                    }
                    report.reused.push(n);
                    obs.reused(n);
                    continue;
                }
                Some(why) => {
                    obs.warning(&format!("layer {n}: {why}; rebuilding it"));
                    let stale: Vec<String> = manifest
                        .compressed
                        .iter()
                        .filter(|c| c.seeds == n)
                        .map(|c| c.name.clone())
                        .collect();
                    manifest.remove(n);
                    manifest.store(dir)?;
                    // The manifest no longer lists them: the compressed
                    // copies of the old tables would only take disk space
                    // (what cannot be removed stays, unlisted, and is
                    // refused by `check_unlisted` only if built over).
                    let _ = store::remove_unlisted(dir, &manifest, &stale);
                }
            }
        }
        if ranks > 1 {
            // Built: the other ranks read the manifest as stored now.
            comm.broadcast(&mut [0])?;
        }
        let lower = lower_of(dir, &manifest, n, &finished, opts.envelope)?;
        let choice = plan::choose(
            n,
            &opts.shape(),
            ranks,
            &lower,
            Budget::now(opts.memory_limit),
        )?;
        if let Some(l) = &lock {
            l.record(&format!("building layer {n}"))?;
        }
        // The in-memory solver reads lower layers raw: those kept only
        // compressed are written back first.
        for k in 0..n {
            if choice.compact || k == 47 || finished[k as usize].is_some() {
                continue;
            }
            let e = manifest.layer(k).expect("a reused layer").clone();
            let raw: u64 = compressed_only(dir, &manifest, k)?
                .iter()
                .map(|f| f.bytes)
                .sum();
            obs.note(&format!(
                "layer {k} is kept only compressed; writing its raw tables back ({}) \
                 to build layer {n}, since the in-memory solver reads lower layers raw",
                crate::error::human(raw)
            ));
            let mut r = crate::pack::PackReport::default();
            crate::pack::decompress_layer(
                dir,
                &mut manifest,
                &e,
                false,
                &crate::pack::Quiet,
                &mut r,
            )?;
            finished[k as usize] = Some(Finished::map(dir, k, opts.envelope)?);
        }
        let mut entry = layer::build_layer(n, opts, &manifest, &finished, choice, comm, obs)?;
        if opts.distance && entry.dist.is_none() {
            // The compact solver leaves it: computed from the folder, the
            // layer's scores listed as written.
            let mut listed = manifest.clone();
            listed.put(entry.clone());
            let (f, secs) = distance::write_distance(dir, &listed, n, &opts.rules, obs)?;
            entry.dist = Some(f);
            entry.phase_seconds.distance = secs;
            entry.wall_seconds += secs;
            entry.positions_per_second = entry.positions as f64 / entry.wall_seconds.max(1e-9);
        }
        crate::fault::point("before-manifest", &n);
        manifest.put(entry.clone());
        manifest.store(dir)?;
        if let Some(settings) = opts.compress_finished {
            obs.note(&format!(
                "layer {n}: compressing its tables and removing the raw ones"
            ));
            let c = crate::pack::CompressOptions {
                settings,
                layers: n..=n,
                remove_raw: true,
            };
            crate::pack::compress_layers(
                dir,
                &mut manifest,
                std::slice::from_ref(&entry),
                &c,
                &crate::pack::Quiet,
            )?;
            crate::mem::release_freed_heap();
            finished.push(None);
        } else {
            finished.push(Some(Finished::map(dir, n, opts.envelope)?));
        }
        // The other ranks read the manifest once it is stored.
        comm.barrier()?;
        report.built.push(n);
        obs.done(&entry);
    }
    if let Some(l) = &lock {
        l.record("")?;
    }
    report.manifest = manifest;
    Ok(report)
}

//! `awari build`: every layer in order, resumable, into a folder of tables.
//!
//! Per layer: check the memory guard, solve ([`crate::solve`]), write each
//! table atomically, then record the layer in the manifest (written
//! atomically too). A later run skips layers whose files are listed in the
//! manifest and match their checksums, rebuilds a layer whose files do not,
//! and continues at the first missing layer, so a build killed at any moment
//! ends with the same bytes once restarted.

use crate::comm::{Comm, Part, Single};
use crate::format::Kind;
use crate::index::layer_size;
use crate::mem::PeakSampler;
use crate::rules::MAX_SEEDS;
use crate::solve::{self, Below, Observer};
use crate::table::{
    self, checksum_file, AtPath, FileEntry, FolderLock, LayerEntry, LockError, Manifest,
    ManifestError, MapError, Mapped, PathError, PhaseSeconds,
};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What to build and where.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Build layers `0..=max_seeds` (47 is skipped).
    pub max_seeds: u32,
    /// The folder of tables.
    pub out: PathBuf,
    /// Build `lower.n` and `upper.n` too.
    pub envelope: bool,
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
    /// Compress each layer's tables with these settings (`lower` and
    /// `upper` as soon as they are written, `scores` once the layer is
    /// recorded) and remove its raw tables (the next layers read it
    /// compressed, with the compact solver), so a long build keeps the disk
    /// small as it goes.
    pub compress_finished: Option<crate::codec::Settings>,
}

/// Which solver builds a layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Solver {
    /// The in-memory solver ([`solve::solve_layer`]) when the lower layers
    /// are raw and its memory (3 bytes per position) and the mapped lower
    /// tables fit, in the limit or in the memory available; otherwise the
    /// compact one.
    #[default]
    Auto,
    /// Always the in-memory solver (lower layers kept only compressed are
    /// written back raw first).
    Memory,
    /// Always the compact solver ([`solve::compact`]): one byte per
    /// position, lower layers streamed raw or compressed.
    Compact,
}

/// Why a build stopped. Finished layers stay on disk and in the manifest.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// No such layer.
    #[error("layer {0} does not exist: layers hold at most 48 seeds")]
    NoSuchLayer(u32),
    /// File or folder trouble (unwritable folder, full disk, ...).
    #[error(transparent)]
    Io(#[from] PathError),
    /// The manifest is foreign or for other rules.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// A finished table cannot be mapped.
    #[error(transparent)]
    Map(#[from] MapError),
    /// The output path is something other than a folder.
    #[error("{}: exists and is not a folder; the builder writes a folder of tables", .0.display())]
    NotAFolder(PathBuf),
    /// Writing back a compressed-only lower layer failed.
    #[error(transparent)]
    Pack(#[from] crate::pack::PackError),
    /// The folder holds tables but no manifest of ours.
    #[error(
        "{}: holds {file} but no manifest.json (a VU dataset or another tool's folder?); \
         refusing to write there",
        dir.display()
    )]
    ForeignFolder {
        /// The folder.
        dir: PathBuf,
        /// A table file found there.
        file: String,
    },
    /// The folder's lock cannot be taken (another build works in it).
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The solver could not run (memory, or a lower layer it needs).
    #[error(transparent)]
    Solve(#[from] solve::SolveError),
    /// A collective operation between ranks failed.
    #[error(transparent)]
    Comm(#[from] crate::comm::CommError),
    /// The ranks of a build were not started alike.
    #[error(
        "the ranks disagree on {0}: start every rank with the same binary, arguments and folder"
    )]
    RanksDisagree(&'static str),
    /// `--solver memory` with several ranks.
    #[error("the in-memory solver runs in one process; with several ranks every layer is built by the compact solver")]
    RanksNeedCompact,
    /// The memory guard refused a layer.
    #[error(
        "layer {layer} needs {} of memory ({what}) but only {} is available{}",
        human(*needed), human(*available),
        if *from_flag { " (the memory limit)" } else { " on this machine" }
    )]
    Memory {
        /// What the memory is for.
        what: &'static str,
        /// The layer refused.
        layer: u32,
        /// Bytes it needs.
        needed: u64,
        /// Bytes allowed.
        available: u64,
        /// Whether the limit came from the options.
        from_flag: bool,
    },
}

impl BuildError {
    /// Whether the error says a table is damaged (a compressed lower layer
    /// that cannot be written back), as opposed to bad input, memory or I/O
    /// trouble. The builder rebuilds damaged tables of its own.
    pub fn is_damage(&self) -> bool {
        match self {
            BuildError::Pack(e) => e.is_damage(),
            _ => false,
        }
    }
}

/// Bytes as a short human figure.
pub fn human(b: u64) -> String {
    bytesize::ByteSize(b).display().iec().to_string()
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

/// The mapped tables of a finished layer.
struct Finished {
    score: Mapped,
    envelope: Option<(Mapped, Mapped)>,
}

/// Opens the folder's manifest, refusing foreign folders.
fn open_manifest(dir: &Path) -> Result<Manifest, BuildError> {
    if let Some(m) = Manifest::load(dir)? {
        return Ok(m);
    }
    for entry in fs::read_dir(dir).at(dir)? {
        let name = entry.at(dir)?.file_name().to_string_lossy().into_owned();
        let table = ["scores.", "lower.", "upper."]
            .iter()
            .any(|p| name.starts_with(p) && !name.ends_with(".tmp"));
        if table {
            return Err(BuildError::ForeignFolder {
                dir: dir.to_path_buf(),
                file: name,
            });
        }
    }
    Ok(Manifest::default())
}

/// Checks the files of a recorded layer: sizes, then checksums. `Ok(None)`
/// when they all match, else what is wrong. A table kept only as a
/// compressed copy has its compressed file checked instead.
fn verify_layer(
    dir: &Path,
    m: &Manifest,
    e: &LayerEntry,
    envelope: bool,
) -> Result<Option<String>, BuildError> {
    if envelope && (e.lower.is_none() || e.upper.is_none()) {
        return Ok(Some("it was built without the envelope".into()));
    }
    for (kind, f) in e.files() {
        if kind != Kind::Score && !envelope {
            continue;
        }
        let path = dir.join(&f.name);
        let len = match fs::metadata(&path) {
            Ok(m) => m.len(),
            Err(_) => match m.compressed(&f.name) {
                Some(c) => {
                    let zst = dir.join(&c.name);
                    let ok = fs::metadata(&zst).is_ok_and(|m| m.len() == c.bytes)
                        && checksum_file(&zst)? == c.xxh3;
                    if !ok {
                        return Ok(Some(format!(
                            "{} is kept only compressed, and {} is missing or damaged",
                            f.name, c.name
                        )));
                    }
                    continue;
                }
                None => {
                    return Ok(Some(format!(
                        "{} is missing (and the manifest lists no compressed copy)",
                        f.name
                    )))
                }
            },
        };
        if len != f.bytes || len != layer_size(e.seeds) {
            return Ok(Some(format!(
                "{} has {len} bytes, expected {}",
                f.name, f.bytes
            )));
        }
        let sum = checksum_file(&path)?;
        if sum != f.xxh3 {
            return Ok(Some(format!(
                "{} has checksum {sum}, the manifest says {}",
                f.name, f.xxh3
            )));
        }
    }
    Ok(None)
}

fn map_layer(dir: &Path, n: u32, envelope: bool) -> Result<Finished, BuildError> {
    let size = layer_size(n);
    let open = |k: Kind| Mapped::open(&dir.join(k.file_name(n)), size);
    Ok(Finished {
        score: open(Kind::Score)?,
        envelope: if envelope {
            Some((open(Kind::Lower)?, open(Kind::Upper)?))
        } else {
            None
        },
    })
}

/// Bytes of memory available now (`MemAvailable`).
pub fn available_memory() -> Option<u64> {
    let text = fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Resets the peak resident set counter (Linux; ignored elsewhere).
fn reset_peak_rss() {
    let _ = fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident set since the last reset, in bytes.
pub fn peak_rss() -> u64 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| {
            let l = t.lines().find(|l| l.starts_with("VmHWM:"))?.to_owned();
            l.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kb| kb * 1024)
}

/// Builds (or resumes) the database described by `opts` on the current
/// rayon pool.
pub fn build(opts: &BuildOptions, obs: &dyn BuildObserver) -> Result<BuildReport, BuildError> {
    build_ranks(opts, &Single, obs)
}

/// What the ranks of a build must agree on: the binary (its bytes, or its
/// version where they cannot be read), the options that shape the tables,
/// and the folder's path. (That the path names the same folder on every
/// rank is checked once rank 0 holds its lock: [`same_folder`].)
fn fingerprint(opts: &BuildOptions) -> [u64; 3] {
    let h = |s: &str| xxhash_rust::xxh3::xxh3_64(s.as_bytes());
    let dir = fs::canonicalize(&opts.out).unwrap_or_else(|_| opts.out.clone());
    let binary = std::env::current_exe()
        .and_then(fs::read)
        .map(|b| xxhash_rust::xxh3::xxh3_64(&b))
        .unwrap_or(0);
    [
        binary
            ^ h(concat!(
                env!("CARGO_PKG_VERSION"),
                " ",
                env!("CARGO_PKG_NAME")
            )),
        h(&format!(
            "{} {} {:?} {:?} {:?}",
            opts.max_seeds, opts.envelope, opts.solver, opts.memory_limit, opts.compress_finished
        )),
        h(&dir.to_string_lossy()),
    ]
}

/// Checks that every rank sees the folder rank 0 holds the lock of (a
/// folder on a shared filesystem, not one of the same name on each
/// machine): rank 0 records a nonce in `build.lock`, and every rank reads
/// it back.
fn same_folder(dir: &Path, lock: Option<&FolderLock>, comm: &dyn Comm) -> Result<(), BuildError> {
    let mut nonce = [0u64];
    if let Some(l) = lock {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        nonce[0] = xxhash_rust::xxh3::xxh3_64(format!("{t} {}", std::process::id()).as_bytes());
        l.record(&format!("ranks {:016x}", nonce[0]))?;
    }
    comm.broadcast(&mut nonce)?;
    let seen = fs::read_to_string(dir.join("build.lock")).unwrap_or_default();
    let mut differ = [(seen.trim() != format!("ranks {:016x}", nonce[0])) as u64];
    comm.sum(&mut differ)?;
    if differ[0] > 0 {
        return Err(BuildError::RanksDisagree(
            "the output folder (some ranks do not see rank 0's folder: it must be on a filesystem every rank shares)",
        ));
    }
    Ok(())
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
) -> Result<BuildReport, BuildError> {
    let ranks = comm.size();
    let root = comm.rank() == 0;
    if ranks > 1 {
        let mine = fingerprint(opts);
        let mut theirs = mine;
        comm.broadcast(&mut theirs)?;
        let mut differ = [0u64; 3];
        for (d, (a, b)) in differ.iter_mut().zip(mine.iter().zip(&theirs)) {
            *d = (a != b) as u64;
        }
        comm.sum(&mut differ)?;
        for (d, what) in differ.iter().zip([
            "the binary's version",
            "the build options",
            "the output folder",
        ]) {
            if *d > 0 {
                return Err(BuildError::RanksDisagree(what));
            }
        }
        if opts.solver == Solver::Memory {
            return Err(BuildError::RanksNeedCompact);
        }
    }
    if opts.max_seeds > MAX_SEEDS {
        return Err(BuildError::NoSuchLayer(opts.max_seeds));
    }
    let dir = opts.out.as_path();
    if dir.exists() && !dir.is_dir() {
        return Err(BuildError::NotAFolder(dir.to_path_buf()));
    }
    let plan = layers_up_to(opts.max_seeds);
    if let Some(s) = opts.compress_finished {
        crate::pack::check_settings(s)?;
    }
    // A limit too small for the first layer to build is refused before
    // anything is written.
    if let Some(limit) = opts.memory_limit {
        let known = if dir.is_dir() {
            Manifest::load(dir)?
        } else {
            None
        };
        let first = plan
            .iter()
            .find(|&&n| known.as_ref().map_or(true, |m| m.layer(n).is_none()));
        if let Some(&n) = first {
            let (needed, what) = match opts.solver {
                Solver::Memory => (solve::memory_estimate(n, opts.envelope), MEMORY_WHAT),
                _ => (
                    solve::compact::memory_estimate_ranks(n, ranks),
                    COMPACT_WHAT,
                ),
            };
            if needed > limit {
                return Err(BuildError::Memory {
                    what,
                    layer: n,
                    needed,
                    available: limit,
                    from_flag: true,
                });
            }
        }
    }
    // Rank 0 alone writes to the folder outside the tables' byte ranges.
    let mut lock = None;
    if root {
        fs::create_dir_all(dir).at(dir)?;
        // Refuse a foreign folder before writing anything into it.
        open_manifest(dir)?;
        lock = Some(FolderLock::acquire(dir)?);
        if Manifest::load(dir)?.is_none() {
            // Claim the folder before the first table lands, so a build
            // killed at any moment leaves a folder it can resume.
            Manifest::default().store(dir)?;
        }
    }
    if ranks > 1 {
        same_folder(dir, lock.as_ref(), comm)?;
    }
    comm.barrier()?;
    let mut manifest = Manifest::load(dir)?.unwrap_or_default();
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
        manifest: Manifest::default(),
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
            manifest = Manifest::load(dir)?.unwrap_or_default();
            let choice = Choice {
                compact: true,
                estimate: solve::compact::memory_estimate_ranks(n, ranks),
            };
            check_limit(n, choice.estimate, opts)?;
            build_layer(n, opts, &manifest, &finished, choice, comm, obs)?;
            comm.barrier()?;
            report.built.push(n);
            continue;
        }
        if let Some(e) = manifest.layer(n) {
            match verify_layer(dir, &manifest, e, opts.envelope)? {
                None => {
                    if ranks > 1 {
                        comm.broadcast(&mut [1])?;
                    }
                    let e = e.clone();
                    let compressed: Vec<String> = e
                        .files()
                        .filter(|(_, f)| !dir.join(&f.name).exists())
                        .map(|(_, f)| f.name.clone())
                        .collect();
                    if compressed.is_empty() {
                        finished.push(Some(map_layer(dir, n, opts.envelope)?));
                    } else {
                        // Mapped raw only if a layer above is built.
                        obs.note(&format!(
                            "layer {n} is kept only compressed ({}); its compressed files \
                             match the manifest",
                            compressed.join(", ")
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
                    // copies of the old tables would only take disk space.
                    for name in stale {
                        let _ = fs::remove_file(dir.join(name));
                    }
                }
            }
        }
        if ranks > 1 {
            // Built: the other ranks read the manifest as stored now.
            comm.broadcast(&mut [0])?;
        }
        let choice = if ranks > 1 {
            let estimate = solve::compact::memory_estimate_ranks(n, ranks);
            check_limit(n, estimate, opts)?;
            Choice {
                compact: true,
                estimate,
            }
        } else {
            choose(dir, &manifest, n, opts, &finished)?
        };
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
            let raw: u64 = e
                .files()
                .filter(|(_, f)| !dir.join(&f.name).exists())
                .map(|(_, f)| f.bytes)
                .sum();
            obs.note(&format!(
                "layer {k} is kept only compressed; writing its raw tables back ({}) \
                 to build layer {n}, since the builder reads lower layers raw",
                human(raw)
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
            finished[k as usize] = Some(map_layer(dir, k, opts.envelope)?);
        }
        let (entry, compressed) = build_layer(n, opts, &manifest, &finished, choice, comm, obs)?;
        crate::fault::point("before-manifest", &n);
        manifest.put(entry.clone());
        for c in compressed {
            manifest.put_compressed(c);
        }
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
            finished.push(None);
        } else {
            finished.push(Some(map_layer(dir, n, opts.envelope)?));
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

/// What the in-memory solver's memory is, for the guard's message.
const MEMORY_WHAT: &str = "in-memory solver: 3 bytes per position, threshold masks and a \
     fixed baseline; with a limit, the mapped lower tables too";
/// What the compact solver's memory is, for the guard's message.
const COMPACT_WHAT: &str = "compact solver: 1 byte per position, buffers and a fixed \
     baseline, the least of the solvers";

/// The solver chosen for a layer and its memory estimate.
#[derive(Clone, Copy, Debug)]
struct Choice {
    compact: bool,
    estimate: u64,
}

/// With several ranks: checks this rank's need (the compact solver's) for
/// layer `n` against the limit, or the memory available here.
fn check_limit(n: u32, needed: u64, opts: &BuildOptions) -> Result<(), BuildError> {
    let (available, from_flag) = match opts.memory_limit {
        Some(l) => (l, true),
        None => (available_memory().unwrap_or(u64::MAX), false),
    };
    if needed > available {
        return Err(BuildError::Memory {
            what: COMPACT_WHAT,
            layer: n,
            needed,
            available,
            from_flag,
        });
    }
    Ok(())
}

/// Picks the solver of layer `n` (see [`Solver`]) and checks its memory
/// against the limit, or the memory available.
fn choose(
    dir: &Path,
    manifest: &Manifest,
    n: u32,
    opts: &BuildOptions,
    finished: &[Option<Finished>],
) -> Result<Choice, BuildError> {
    let (available, from_flag) = match opts.memory_limit {
        Some(l) => (l, true),
        None => (available_memory().unwrap_or(u64::MAX), false),
    };
    let lower = (0..n).filter(|&k| k != 47);
    let all_raw = lower.clone().all(|k| finished[k as usize].is_some());
    let tables = if opts.envelope { 3 } else { 1 };
    let mapped: u64 = lower.clone().map(|k| layer_size(k) * tables).sum();
    // The in-memory solver with its mapped lower tables resident. Without a
    // limit those pages are page cache the kernel takes back, so they do
    // not make the in-memory solver fail, but `auto` leaves it alone when
    // they do not fit beside its state: layer 31 built here in memory
    // (10.3 GiB of state, 29.4 GB of lower tables, 24 GiB of memory) spent
    // 1,603 s of its 3,293 s re-reading lower pages at random.
    let state = solve::memory_estimate(n, opts.envelope);
    let cached = state + mapped;
    let memory = if from_flag { cached } else { state };
    // The compact solver maps one compressed lower table at a time.
    let streamed = lower
        .filter(|&k| finished[k as usize].is_none())
        .filter_map(|k| manifest.layer(k))
        .flat_map(|e| e.files().map(|(_, f)| f.name.clone()).collect::<Vec<_>>())
        .filter(|name| !dir.join(name).exists())
        .filter_map(|name| manifest.compressed(&name).map(|c| c.bytes))
        .max()
        .unwrap_or(0);
    let compact = solve::compact::memory_estimate(n) + streamed;
    let refuse = |needed, what| {
        Err(BuildError::Memory {
            what,
            layer: n,
            needed,
            available,
            from_flag,
        })
    };
    let pick = |compact, estimate| Ok(Choice { compact, estimate });
    match opts.solver {
        Solver::Memory if memory <= available => pick(false, memory),
        Solver::Memory => refuse(memory, MEMORY_WHAT),
        Solver::Auto if all_raw && cached <= available => pick(false, memory),
        _ if compact <= available => pick(true, compact),
        _ => refuse(compact, COMPACT_WHAT),
    }
}

/// The lower layers as the compact solver reads them: raw tables with
/// `pread` (no mapping, so nothing of them counts as the process's memory),
/// compressed ones block by block. One table is open at a time.
struct Streams<'a> {
    dir: &'a Path,
    manifest: &'a Manifest,
    open: std::sync::Mutex<Option<OpenTable>>,
}

/// The table a [`Streams`] has open: layer, kind and its source.
type OpenTable = ((u32, Kind), std::sync::Arc<Source>);

enum Source {
    Raw(fs::File),
    Compressed(crate::codec::CompressedTable<Mapped>),
}

impl Streams<'_> {
    fn source(&self, k: u32, kind: Kind) -> Result<std::sync::Arc<Source>, String> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((key, s)) = &*open {
            if *key == (k, kind) {
                return Ok(s.clone());
            }
        }
        *open = None;
        let name = kind.file_name(k);
        let path = self.dir.join(&name);
        let source = if path.exists() {
            let f = fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let len = f
                .metadata()
                .map_err(|e| format!("{}: {e}", path.display()))?
                .len();
            if len != layer_size(k) {
                return Err(format!(
                    "{}: {len} bytes, the layer has {} positions",
                    path.display(),
                    layer_size(k)
                ));
            }
            Source::Raw(f)
        } else {
            let raw = self
                .manifest
                .layer(k)
                .and_then(|e| {
                    e.files()
                        .find(|(k2, _)| *k2 == kind)
                        .map(|(_, f)| f.clone())
                })
                .ok_or_else(|| format!("{name} is not in the manifest"))?;
            let c = self
                .manifest
                .compressed(&name)
                .ok_or_else(|| format!("{name} is missing and has no compressed copy"))?;
            let (t, _) = crate::pack::open_listed(self.dir, c, kind, &raw, false)
                .map_err(|e| e.to_string())?;
            Source::Compressed(t)
        };
        let s = std::sync::Arc::new(source);
        *open = Some(((k, kind), s.clone()));
        Ok(s)
    }
}

impl solve::compact::Lower for Streams<'_> {
    fn read(
        &self,
        layer: u32,
        kind: Kind,
        start: u64,
        out: &mut [u8],
    ) -> Result<(), solve::SolveError> {
        use std::os::unix::fs::FileExt;
        let bad = |reason: String| solve::SolveError::Below { layer, reason };
        match &*self.source(layer, kind).map_err(bad)? {
            Source::Raw(f) => f
                .read_exact_at(out, start)
                .map_err(|e| bad(format!("{}: {e}", kind.file_name(layer)))),
            Source::Compressed(t) => t.decompress_range(start, out).map_err(|e| {
                bad(format!(
                    "{}: {e}",
                    crate::codec::file_name(&kind.file_name(layer))
                ))
            }),
        }
    }
}

/// What a layer's solve wrote.
#[derive(Default)]
struct Written {
    scores: Option<FileEntry>,
    lower: Option<FileEntry>,
    upper: Option<FileEntry>,
    pinned: Option<u64>,
    histogram: Vec<u64>,
    seconds: f64,
    /// Tables already compressed (raw removed), to list with the layer.
    compressed: Vec<table::CompressedEntry>,
}

/// Solves layer `n` with the in-memory solver on the mapped lower layers
/// and writes its tables.
fn solve_in_memory(
    dir: &Path,
    n: u32,
    opts: &BuildOptions,
    finished: &[Option<Finished>],
    obs: &dyn BuildObserver,
    w: &mut Written,
) -> Result<solve::SolveStats, BuildError> {
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
    solve::solve_layer(
        n,
        &below,
        opts.envelope,
        Some(opts.scratch.as_deref().unwrap_or(dir)),
        obs,
        &mut |solved: &solve::Solved| write_tables(dir, n, opts, &Single, obs, solved, w),
    )
}

/// Writes the tables a solver hands out (the envelope, then the score) and
/// records them in `w`: each rank its part (see [`write_parts`]), with the
/// pinned count and the histogram summed over the ranks. With
/// `--compress-finished`, `lower` and `upper` are compressed (and their
/// raw files removed, by rank 0) at once, before the score sweep needs the
/// disk.
fn write_tables(
    dir: &Path,
    n: u32,
    opts: &BuildOptions,
    comm: &dyn Comm,
    obs: &dyn BuildObserver,
    solved: &dyn solve::Tables,
    w: &mut Written,
) -> Result<(), BuildError> {
    obs.phase("write");
    let tw = Instant::now();
    let positions = layer_size(n);
    let scratch = opts.scratch.as_deref().unwrap_or(dir);
    let write = |kind: Kind| -> Result<FileEntry, BuildError> {
        let name = kind.file_name(n);
        let xxh3 = write_parts(
            &dir.join(&name),
            positions,
            solved.part(),
            comm,
            |start, buf| {
                // Only the compact solver's lists (in the scratch folder) can
                // fail to read back.
                solved
                    .extract(kind, start as usize, buf)
                    .map_err(|e| table::PathError {
                        path: scratch.to_path_buf(),
                        source: std::io::Error::other(e.to_string()),
                    })
            },
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
        if let Some(settings) = opts.compress_finished {
            if comm.rank() == 0 {
                for (kind, f) in [(Kind::Lower, &w.lower), (Kind::Upper, &w.upper)] {
                    let f = f.as_ref().expect("just written");
                    w.compressed.push(crate::pack::compress_and_remove_raw(
                        dir, n, kind, f, settings,
                    )?);
                }
            }
            comm.barrier()?;
        }
    }
    if solved.has(Kind::Score) {
        w.scores = Some(write(Kind::Score)?);
        w.histogram = solved.histogram();
        comm.sum(&mut w.histogram)?;
    }
    w.seconds += tw.elapsed().as_secs_f64();
    Ok(())
}

/// Writes the table at `path` (`len` bytes), of which this rank fills the
/// range `part`. One rank writes it as [`table::write_atomic_try`] does.
/// With several, rank 0 creates the temporary file at its full length,
/// every rank writes and syncs its range, and rank 0 checksums the whole
/// file and renames it into place; the checksum is returned on every rank.
fn write_parts(
    path: &Path,
    len: u64,
    part: Part,
    comm: &dyn Comm,
    mut fill: impl FnMut(u64, &mut [u8]) -> Result<(), table::PathError>,
) -> Result<String, BuildError> {
    if comm.size() == 1 {
        return Ok(table::write_atomic_try(path, len, fill)?);
    }
    let tmp = table::temp_path(path);
    let root = comm.rank() == 0;
    if root {
        let f = fs::File::create(&tmp).at(&tmp)?;
        f.set_len(len).at(&tmp)?;
    }
    comm.barrier()?;
    {
        use std::os::unix::fs::FileExt;
        let f = fs::OpenOptions::new().write(true).open(&tmp).at(&tmp)?;
        let mut buf = vec![0u8; part.len().min(1 << 24) as usize];
        let mut at = part.lo;
        while at < part.hi {
            let k = (part.hi - at).min(buf.len() as u64) as usize;
            fill(at, &mut buf[..k])?;
            f.write_all_at(&buf[..k], at).at(&tmp)?;
            at += k as u64;
        }
        f.sync_all().at(&tmp)?;
    }
    comm.barrier()?;
    let mut sum = [0u64];
    if root {
        let hex = table::checksum_file(&tmp)?;
        sum[0] = u64::from_str_radix(&hex, 16).expect("a checksum in hex");
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        crate::fault::point("before-rename", &name);
        fs::rename(&tmp, path).at(path)?;
        table::sync_dir(path.parent().unwrap_or(Path::new(".")))?;
        crate::fault::point("after-rename", &name);
    }
    comm.broadcast(&mut sum)?;
    Ok(crate::format::hex(sum[0]))
}

fn build_layer(
    n: u32,
    opts: &BuildOptions,
    manifest: &Manifest,
    finished: &[Option<Finished>],
    choice: Choice,
    comm: &dyn Comm,
    obs: &dyn BuildObserver,
) -> Result<(LayerEntry, Vec<table::CompressedEntry>), BuildError> {
    let dir = opts.out.as_path();
    let positions = layer_size(n);
    let part = Part::new(positions, solve::compact::WINDOW, comm.rank(), comm.size());
    let (working, estimate) = if choice.compact {
        (
            solve::compact::working_bytes(n) - positions + part.len(),
            choice.estimate,
        )
    } else {
        (
            solve::working_bytes(n, opts.envelope),
            solve::memory_estimate(n, opts.envelope),
        )
    };
    // This rank's share of the work (all of it in one process).
    let work = if choice.compact {
        solve::compact::work_units(n, opts.envelope) / positions * part.len()
    } else {
        solve::work_units(n, opts.envelope)
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
            f.score.release();
            if let Some((lo, hi)) = &f.envelope {
                lo.release();
                hi.release();
            }
        }
        let scratch = opts.scratch.as_deref().unwrap_or(dir);
        let streams = Streams {
            dir,
            manifest,
            open: Default::default(),
        };
        solve::compact::solve_layer(
            n,
            &streams,
            opts.envelope,
            scratch,
            comm,
            obs,
            &mut |solved: &solve::compact::Assembled| {
                write_tables(dir, n, opts, comm, obs, solved, &mut w)
            },
        )?
    } else {
        solve_in_memory(dir, n, opts, finished, obs, &mut w)?
    };
    let Written {
        scores,
        lower,
        upper,
        pinned,
        histogram,
        seconds: write_seconds,
        compressed,
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
    let io = s.io.as_ref().map(|_| table::IoFigures {
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
        wall_seconds: wall,
        positions_per_second: positions as f64 / wall.max(1e-9),
        phase_seconds: PhaseSeconds {
            exits: s.init_seconds,
            envelope: s.envelope_seconds,
            score: s.score_seconds,
            write: write_seconds,
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
    Ok((entry, compressed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::Threads;

    /// Ranks pass the shared-folder check only when each sees the folder
    /// rank 0 holds the lock of (here rank 1 is given another folder under
    /// the path it uses, as a node-local folder of the same name would be).
    #[test]
    fn ranks_must_see_rank_0s_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        for (other, ok) in [(&a, true), (&b, false)] {
            let comms = Threads::ranks(2);
            let lock = FolderLock::acquire(&a).unwrap();
            let results: Vec<Result<(), BuildError>> = std::thread::scope(|sc| {
                let handles: Vec<_> = comms
                    .iter()
                    .enumerate()
                    .map(|(r, c)| {
                        let (lock, a) = (&lock, &a);
                        sc.spawn(move || {
                            let dir = if r == 0 { a } else { other };
                            same_folder(dir, (r == 0).then_some(lock), c)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for r in results {
                match r {
                    Ok(()) => assert!(ok),
                    Err(e @ BuildError::RanksDisagree(_)) => {
                        assert!(!ok, "{e}");
                        assert!(e.to_string().contains("shares"), "{e}");
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        }
    }
}

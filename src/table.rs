//! Table files and the folder manifest.
//!
//! A database folder holds, per layer `n`, `scores.n` (the VU format: one
//! signed byte per Goedel index, no header) and, with the envelope,
//! `lower.n` and `upper.n` in the same format, plus one `manifest.json`
//! describing the folder: rule set, checksums and build figures per layer.
//! Every file is written under a temporary name, synced, then renamed, so a
//! crash never leaves a complete-looking table that is not.

use crate::format::{hex, ChecksumMismatch, Kind, CHECKSUM, RULE_SET};
use serde::{Deserialize, Serialize};
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The `format` field of our manifests.
pub const FORMAT: &str = "awari-egdb";
/// Manifest version this code reads and writes.
pub const VERSION: u32 = 1;
/// Name of the manifest file.
pub const MANIFEST: &str = "manifest.json";

/// An I/O failure with the path it concerns.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct PathError {
    /// The file or folder.
    pub path: PathBuf,
    /// What went wrong.
    #[source]
    pub source: io::Error,
}

/// Attaches a path to an I/O result.
pub trait AtPath<T> {
    /// The error with `path`.
    fn at(self, path: &Path) -> Result<T, PathError>;
}

impl<T> AtPath<T> for io::Result<T> {
    fn at(self, path: &Path) -> Result<T, PathError> {
        self.map_err(|source| PathError {
            path: path.to_path_buf(),
            source,
        })
    }
}

/// One table file as the manifest records it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileEntry {
    /// File name inside the folder.
    pub name: String,
    /// Size in bytes (one per position).
    pub bytes: u64,
    /// `xxh3-64` of the contents, 16 hex digits.
    pub xxh3: String,
}

/// A compressed copy of one table, written by `awari compress` (the format
/// is in [`crate::codec`]). The table's [`FileEntry`] stays the truth:
/// the compressed file's header carries the same checksum of the
/// uncompressed bytes, and the raw file may be absent once it was removed.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct CompressedEntry {
    /// Seeds of the layer.
    pub seeds: u32,
    /// Name of the raw table it holds (the [`FileEntry`] name).
    pub raw: String,
    /// File name inside the folder (`scores.n.zst`, ...).
    pub name: String,
    /// Size in bytes of the compressed file.
    pub bytes: u64,
    /// `xxh3-64` of the compressed file, 16 hex digits.
    pub xxh3: String,
    /// Entries per block.
    pub block_size: u32,
    /// The zstd level it was compressed with.
    pub level: i32,
    /// The dictionary size asked for (0: none).
    #[serde(default)]
    pub dictionary: u32,
}

/// Seconds spent in each phase of a layer.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PhaseSeconds {
    /// Computing exits and counters.
    pub exits: f64,
    /// The envelope sweep.
    pub envelope: f64,
    /// The score sweep.
    pub score: f64,
    /// Writing and checksumming the files.
    pub write: f64,
}

/// One layer in the manifest.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LayerEntry {
    /// Seeds on the board.
    pub seeds: u32,
    /// Positions (entries per table).
    pub positions: u64,
    /// `scores.n`.
    pub scores: FileEntry,
    /// `lower.n`, with the envelope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<FileEntry>,
    /// `upper.n`, with the envelope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<FileEntry>,
    /// Wall time of the build of this layer.
    pub wall_seconds: f64,
    /// Positions per second over the wall time.
    pub positions_per_second: f64,
    /// Where the time went.
    pub phase_seconds: PhaseSeconds,
    /// Peak resident memory of the process while building this layer
    /// (anonymous plus mapped file pages).
    pub peak_rss_bytes: u64,
    /// The solver's own working memory for this layer.
    pub working_bytes: u64,
    /// Peak anonymous resident memory of the process while building this
    /// layer (sampled every 20 ms): the working arrays plus heap and stacks;
    /// what the memory guard estimates.
    #[serde(default)]
    pub peak_anon_bytes: u64,
    /// Peak resident pages of the process's mapped files while building this
    /// layer (sampled): the lower layers' tables, page cache the kernel can
    /// reclaim.
    #[serde(default)]
    pub peak_file_bytes: u64,
    /// The memory guard's estimate for this layer.
    #[serde(default)]
    pub estimate_bytes: u64,
    /// Threads used.
    pub threads: usize,
    /// Settlements (predecessor walks) per position, score and envelope.
    pub settlements_per_position: f64,
    /// Positions with `lower == upper`, with the envelope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<u64>,
    /// Number of positions per score, from `-n` to `n`.
    pub score_histogram: Vec<u64>,
    /// Set when the entry was rebuilt from the tables by `awari recover`
    /// (its build figures are then unknown and zero): how the tables were
    /// trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered: Option<String>,
    /// The solver that built the layer: `in-memory` or `compact` (absent
    /// in manifests written before there were two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solver: Option<String>,
    /// The compact solver's disk traffic (summed over the ranks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<IoFigures>,
    /// Ranks that built the layer, when more than one (MPI); the memory
    /// figures are then the largest rank's, the threads each rank's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<usize>,
}

/// Disk traffic of a layer built by the compact solver.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct IoFigures {
    /// Bytes of lower-layer tables read (uncompressed bytes: the entries
    /// streamed).
    pub lower_read_bytes: u64,
    /// Bytes written to the scratch folder (lists and per-position facts).
    pub scratch_written_bytes: u64,
    /// Bytes read back from the scratch folder.
    pub scratch_read_bytes: u64,
    /// Most bytes the scratch files held at once.
    pub scratch_peak_bytes: u64,
    /// Bytes of updates this rank sent to other ranks (0 in one process).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sent_bytes: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

impl LayerEntry {
    /// The file entries recorded, score first.
    pub fn files(&self) -> impl Iterator<Item = (Kind, &FileEntry)> {
        [
            (Kind::Score, Some(&self.scores)),
            (Kind::Lower, self.lower.as_ref()),
            (Kind::Upper, self.upper.as_ref()),
        ]
        .into_iter()
        .filter_map(|(k, f)| f.map(|f| (k, f)))
    }
}

/// `manifest.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u32,
    /// Always [`RULE_SET`].
    pub rule_set: String,
    /// Always [`CHECKSUM`].
    pub checksum: String,
    /// The finished layers, by seeds.
    pub layers: Vec<LayerEntry>,
    /// Compressed copies of tables (`awari compress`), by raw file name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compressed: Vec<CompressedEntry>,
}

impl Default for Manifest {
    fn default() -> Self {
        Manifest {
            format: FORMAT.into(),
            version: VERSION,
            rule_set: RULE_SET.into(),
            checksum: CHECKSUM.into(),
            layers: Vec::new(),
            compressed: Vec::new(),
        }
    }
}

/// Why a manifest cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The folder has no manifest, so it is not one of ours (commands that
    /// work only on our folders say so).
    #[error("{}: no manifest.json: not a folder made by awari build", .0.display())]
    NotOurs(PathBuf),
    /// Reading failed.
    #[error(transparent)]
    Io(#[from] PathError),
    /// Not a manifest of ours.
    #[error("{}: not an awari-egdb manifest ({reason})", path.display())]
    Foreign {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Ours, but for other rules or another format version.
    #[error("{}: built for {found}, not for {expected}", path.display())]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// What it says.
        found: String,
        /// What this program builds.
        expected: String,
    },
}

impl Manifest {
    /// Reads `dir/manifest.json`; `Ok(None)` when there is none.
    pub fn load(dir: &Path) -> Result<Option<Manifest>, ManifestError> {
        let path = dir.join(MANIFEST);
        let bytes = match fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(PathError { path, source }.into()),
        };
        let text = String::from_utf8(bytes).map_err(|_| ManifestError::Foreign {
            path: path.clone(),
            reason: "not JSON: not even UTF-8 text".into(),
        })?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| ManifestError::Foreign {
                path: path.clone(),
                reason: format!("not JSON: {e}"),
            })?;
        if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err(ManifestError::Foreign {
                path,
                reason: "no \"format\": \"awari-egdb\" field".into(),
            });
        }
        let m: Manifest = serde_json::from_value(value).map_err(|e| ManifestError::Foreign {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        m.validate().map_err(|reason| ManifestError::Foreign {
            path: path.clone(),
            reason,
        })?;
        let found = format!("rule set {} v{} ({})", m.rule_set, m.version, m.checksum);
        let expected = format!("rule set {RULE_SET} v{VERSION} ({CHECKSUM})");
        if found != expected {
            return Err(ManifestError::Mismatch {
                path,
                found,
                expected,
            });
        }
        Ok(Some(m))
    }

    /// Reads `dir/manifest.json` of a folder that must be one of ours: a
    /// missing folder or manifest is an error.
    pub fn load_ours(dir: &Path) -> Result<Manifest, ManifestError> {
        if !dir.is_dir() {
            return Err(ManifestError::Io(PathError {
                path: dir.to_path_buf(),
                source: io::Error::new(io::ErrorKind::NotFound, "not a folder"),
            }));
        }
        Manifest::load(dir)?.ok_or_else(|| ManifestError::NotOurs(dir.to_path_buf()))
    }

    /// Writes `dir/manifest.json` atomically.
    pub fn store(&self, dir: &Path) -> Result<(), PathError> {
        let mut text = serde_json::to_string_pretty(self).expect("manifest serialises");
        text.push('\n');
        write_atomic(&dir.join(MANIFEST), text.as_bytes())
    }

    /// Checks what the rest of the code relies on: real layers, each once,
    /// with one byte per position in every file.
    fn validate(&self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for l in &self.layers {
            let n = l.seeds;
            if n > crate::rules::MAX_SEEDS || n == 47 {
                return Err(format!("it lists layer {n}, which does not exist"));
            }
            if !seen.insert(n) {
                return Err(format!("it lists layer {n} twice"));
            }
            let size = crate::index::layer_size(n);
            if l.positions != size {
                return Err(format!(
                    "layer {n} has {size} positions, it says {}",
                    l.positions
                ));
            }
            for (_, f) in l.files() {
                if f.bytes != size {
                    return Err(format!(
                        "{} should hold {size} bytes, it says {}",
                        f.name, f.bytes
                    ));
                }
                check_name(&f.name)?;
            }
        }
        let mut names: std::collections::HashSet<&str> = self
            .layers
            .iter()
            .flat_map(|l| l.files().map(|(_, f)| f.name.as_str()))
            .collect();
        let mut raws = std::collections::HashSet::new();
        for c in &self.compressed {
            let Some(l) = self.layer(c.seeds) else {
                return Err(format!(
                    "it lists {} for layer {}, which it does not list",
                    c.name, c.seeds
                ));
            };
            if !l.files().any(|(_, f)| f.name == c.raw) {
                return Err(format!(
                    "{} compresses '{}', which is not a table of layer {}",
                    c.name, c.raw, c.seeds
                ));
            }
            if !raws.insert(c.raw.as_str()) {
                return Err(format!("it lists two compressed copies of {}", c.raw));
            }
            check_name(&c.name)?;
            if !names.insert(c.name.as_str()) {
                return Err(format!("it lists the file name {} twice", c.name));
            }
            crate::format::check_compression(c.level, c.block_size, c.dictionary)
                .map_err(|(name, reason)| format!("{}: {name} {reason}", c.name))?;
        }
        Ok(())
    }

    /// The entry of layer `n`.
    pub fn layer(&self, n: u32) -> Option<&LayerEntry> {
        self.layers.iter().find(|l| l.seeds == n)
    }

    /// Inserts or replaces the entry of a layer, keeping them sorted.
    pub fn put(&mut self, e: LayerEntry) {
        self.remove(e.seeds);
        self.layers.push(e);
        self.layers.sort_by_key(|l| l.seeds);
    }

    /// Forgets layer `n`, with the compressed copies of its tables.
    pub fn remove(&mut self, n: u32) {
        self.layers.retain(|l| l.seeds != n);
        self.compressed.retain(|c| c.seeds != n);
    }

    /// The compressed copy of the raw table named `raw`, if any.
    pub fn compressed(&self, raw: &str) -> Option<&CompressedEntry> {
        self.compressed.iter().find(|c| c.raw == raw)
    }

    /// Records a compressed copy, replacing the one of the same raw table.
    pub fn put_compressed(&mut self, e: CompressedEntry) {
        self.remove_compressed(&e.raw.clone());
        self.compressed.push(e);
        self.compressed
            .sort_by(|a, b| (a.seeds, &a.name).cmp(&(b.seeds, &b.name)));
    }

    /// Forgets the compressed copy of the raw table named `raw`.
    pub fn remove_compressed(&mut self, raw: &str) {
        self.compressed.retain(|c| c.raw != raw);
    }
}

/// A file name must stay inside the folder.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.contains('/') || name.contains('\\') || name.starts_with('.') {
        return Err(format!("file name '{name}' points outside the folder"));
    }
    Ok(())
}

/// The checksum of a file, read sequentially.
pub fn checksum_file(path: &Path) -> Result<String, PathError> {
    let mut f = File::open(path).at(path)?;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 22];
    loop {
        let k = f.read(&mut buf).at(path)?;
        if k == 0 {
            break;
        }
        h.update(&buf[..k]);
    }
    Ok(hex(h.digest()))
}

/// The temporary name a file is written under before it is renamed.
pub fn temp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

/// Writes `bytes` to `path` through a temporary file: write, fsync, rename,
/// fsync the folder. On failure the temporary file is removed and `path` is
/// left as it was.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), PathError> {
    write_atomic_with(path, bytes.len() as u64, |start, buf| {
        let start = start as usize;
        buf.copy_from_slice(&bytes[start..start + buf.len()]);
    })
    .map(|_| ())
}

/// Like [`write_atomic`] for `len` bytes produced piecewise by `fill(start,
/// buf)`; returns the checksum of what was written.
pub fn write_atomic_with(
    path: &Path,
    len: u64,
    mut fill: impl FnMut(u64, &mut [u8]),
) -> Result<String, PathError> {
    write_atomic_try(path, len, |start, buf| {
        fill(start, buf);
        Ok(())
    })
}

/// Like [`write_atomic_with`] for a `fill` that can fail; on failure
/// nothing is put in place.
pub fn write_atomic_try(
    path: &Path,
    len: u64,
    fill: impl FnMut(u64, &mut [u8]) -> Result<(), PathError>,
) -> Result<String, PathError> {
    match write_atomic_inner(path, len, None, fill) {
        Ok(sum) => Ok(sum),
        Err(CheckedWriteError::Io(e)) => Err(e),
        Err(CheckedWriteError::Checksum(_)) => unreachable!("no checksum was expected"),
    }
}

/// Why [`write_atomic_checked`] did not put a file in place.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckedWriteError {
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] PathError),
    /// What was written does not have the expected checksum; the file was
    /// not renamed into place.
    #[error(transparent)]
    Checksum(ChecksumMismatch),
}

/// Like [`write_atomic_with`], but `path` is replaced only when the bytes
/// written have the checksum `expected` (as [`crate::format::checksum`] writes it);
/// otherwise the temporary file is removed and `path` is left as it was.
pub fn write_atomic_checked(
    path: &Path,
    len: u64,
    expected: &str,
    mut fill: impl FnMut(u64, &mut [u8]),
) -> Result<(), CheckedWriteError> {
    write_atomic_inner(path, len, Some(expected), |start, buf| {
        fill(start, buf);
        Ok(())
    })
    .map(|_| ())
}

fn write_atomic_inner(
    path: &Path,
    len: u64,
    expected: Option<&str>,
    mut fill: impl FnMut(u64, &mut [u8]) -> Result<(), PathError>,
) -> Result<String, CheckedWriteError> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = File::create(&tmp).at(&tmp)?;
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let mut buf = vec![0u8; (len as usize).min(1 << 24)];
        let mut start = 0u64;
        while start < len {
            let k = (len - start).min(buf.len() as u64) as usize;
            fill(start, &mut buf[..k])?;
            h.update(&buf[..k]);
            f.write_all(&buf[..k]).at(&tmp)?;
            start += k as u64;
        }
        let sum = hex(h.digest());
        if let Some(expected) = expected {
            if sum != expected {
                return Err(CheckedWriteError::Checksum(ChecksumMismatch {
                    path: path.to_path_buf(),
                    what: "the bytes written, against the manifest's checksum; the file was not written",
                    expected: expected.to_string(),
                    found: sum,
                }));
            }
        }
        f.sync_all().at(&tmp)?;
        drop(f);
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        crate::fault::point("before-rename", &name);
        fs::rename(&tmp, path).at(path)?;
        sync_dir(path.parent().unwrap_or(Path::new(".")))?;
        crate::fault::point("after-rename", &name);
        Ok(sum)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Makes a rename in `dir` durable.
pub fn sync_dir(dir: &Path) -> Result<(), PathError> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    File::open(dir).and_then(|d| d.sync_all()).at(dir)
}

/// A table file mapped read-only.
///
/// Safety contract of the mapping: the file must not be truncated or
/// modified while mapped (a truncated mapping turns reads into SIGBUS). The
/// builder holds the folder's lock while it maps its own files, and every
/// opener checks the size against the layer before mapping.
pub struct Mapped {
    map: memmap2::Mmap,
}

impl Mapped {
    /// Maps `path`, which must be exactly `expected` bytes long.
    pub fn open(path: &Path, expected: u64) -> Result<Mapped, MapError> {
        let f = File::open(path).at(path)?;
        let len = f.metadata().at(path)?.len();
        if len != expected {
            return Err(MapError::Size {
                path: path.to_path_buf(),
                expected,
                found: len,
            });
        }
        // SAFETY: see the type's contract; the size was checked just above.
        let map = unsafe { memmap2::Mmap::map(&f) }.at(path)?;
        #[cfg(unix)]
        {
            let _ = map.advise(memmap2::Advice::Random);
        }
        Ok(Mapped { map })
    }
}

impl Mapped {
    /// Drops the mapping's resident pages from the process (they stay in the
    /// page cache and come back on the next access), so they no longer
    /// count as the process's memory.
    pub fn release(&self) {
        self.release_range(0, self.map.len());
    }

    /// [`Mapped::release`] for the bytes `start..start + len` only (a pass
    /// over a large table releases each window once it is done with it,
    /// so the pass never holds more than a window).
    pub fn release_range(&self, start: usize, len: usize) {
        let start = start.min(self.map.len());
        let len = len.min(self.map.len() - start);
        if len == 0 {
            return;
        }
        #[cfg(unix)]
        // SAFETY: the mapping is read-only and shared with the file, so
        // dropping its pages loses nothing: the next access reads the same
        // bytes from the page cache or the file.
        unsafe {
            let _ = self
                .map
                .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, len);
        }
    }
}

impl std::ops::Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl MapError {
    /// Whether the file is damaged (the wrong size, or missing), as opposed
    /// to other I/O trouble.
    pub fn is_damage(&self) -> bool {
        match self {
            MapError::Size { .. } => true,
            MapError::Io(e) => e.source.kind() == io::ErrorKind::NotFound,
        }
    }
}

/// Why a table cannot be mapped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MapError {
    /// Opening or mapping failed.
    #[error(transparent)]
    Io(#[from] PathError),
    /// The file has the wrong size for its layer.
    #[error("{}: {found} bytes, but the layer has {expected} positions", path.display())]
    Size {
        /// The file.
        path: PathBuf,
        /// Bytes it should hold.
        expected: u64,
        /// Bytes it holds.
        found: u64,
    },
}

/// Holds a folder's `build.lock` (taken by `build`, `compress`,
/// `decompress` and `recover`, which rewrite the folder) until dropped.
pub struct FolderLock {
    file: File,
    path: PathBuf,
    /// What the lock file said when it was taken: the layer a build was
    /// working on when it stopped, if it stopped in the middle of one.
    previous: String,
}

/// Why a folder's lock was not taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// The lock file cannot be made.
    #[error(transparent)]
    Io(#[from] PathError),
    /// Another process holds it.
    #[error("{}: another build, compress or recover is running in this folder (it holds build.lock)", .0.display())]
    Locked(PathBuf),
}

impl FolderLock {
    /// Takes the lock of `dir`; [`LockError::Locked`] when another process
    /// holds it. A lock released a moment ago can still be held by a
    /// process this one forked (until it execs), so a few short retries
    /// come first.
    pub fn acquire(dir: &Path) -> Result<FolderLock, LockError> {
        let path = dir.join("build.lock");
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .at(&path)?;
        #[cfg(unix)]
        {
            use std::os::unix::io::AsRawFd;
            for attempt in 0.. {
                // SAFETY: flock on a descriptor we own; released when it is closed.
                let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
                if r == 0 {
                    break;
                }
                if attempt == 20 {
                    return Err(LockError::Locked(dir.to_path_buf()));
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
        let mut previous = String::new();
        let _ = (&file).read_to_string(&mut previous);
        Ok(FolderLock {
            file,
            path,
            previous,
        })
    }

    /// The layer a build was working on when it stopped without finishing
    /// it (killed, or one of its ranks was), as the lock file recorded it.
    pub fn interrupted_layer(&self) -> Option<u32> {
        self.previous
            .trim()
            .strip_prefix("building layer ")?
            .parse()
            .ok()
    }

    /// Records in the lock file what the holder is doing (`building layer
    /// N`, or nothing once done), for the next holder (or the other ranks
    /// of a build) to read; synced, so other machines see it too.
    pub fn record(&self, what: &str) -> Result<(), PathError> {
        use std::os::unix::fs::FileExt;
        self.file.set_len(0).at(&self.path)?;
        self.file.write_all_at(what.as_bytes(), 0).at(&self.path)?;
        self.file.sync_data().at(&self.path)
    }
}

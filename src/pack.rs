//! Folder operations on compressed tables: `awari compress` and `awari
//! decompress` ([`compress_folder`], [`decompress_folder`]), which lock one
//! of our folders, write and verify `.zst` files beside the raw tables and
//! record them in the manifest ([`crate::store::CompressedEntry`]).
//!
//! The file format is in [`crate::codec`]. Every file written is verified
//! before anything relies on it: a compressed file is decompressed and
//! compared with the raw table before it is renamed into place, and a raw
//! table written back has the manifest's checksum before it is.

use crate::codec::{encode_steps, file_name, CompressedTable, Settings};
use crate::error::{AtPath, Error, Result, SizeOf};
use crate::format::Kind;
use crate::rules::Rules;
use crate::store::{
    self, CompressedEntry, FileEntry, FolderLock, LayerEntry, Manifest, Mapped, Stored,
};
use std::fs::{self, File};
use std::io;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What [`compress_folder`] and [`decompress_folder`] report as they work.
pub trait PackObserver: Sync {
    /// Work on a file starts: `blocks` units of progress follow.
    fn start(&self, _name: &str, _blocks: u64) {}
    /// Blocks done (compressed, verified or decompressed).
    fn advance(&self, _blocks: u64) {}
    /// A file is finished (or was found finished).
    fn done(&self, _file: &PackedFile) {}
    /// A raw or compressed file was removed.
    fn removed(&self, _name: &str) {}
    /// Something the user should know; the work goes on.
    fn warning(&self, _message: &str) {}
}

/// Reports nothing.
pub struct Quiet;
impl PackObserver for Quiet {}

/// What happened to one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Compressed (and verified) now.
    Compressed,
    /// Its compressed file was there with these settings, and verified.
    AlreadyCompressed,
    /// Decompressed (and verified) now.
    Decompressed,
    /// Its raw file was there and matched its checksum.
    AlreadyRaw,
}

/// One table handled by [`compress_folder`] or [`decompress_folder`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct PackedFile {
    /// Seeds of the layer.
    pub layer: u32,
    /// The raw table's name.
    pub raw: String,
    /// The compressed file's name.
    pub name: String,
    /// What was done.
    pub action: Action,
    /// Bytes of the raw table.
    pub raw_bytes: u64,
    /// Bytes of the compressed file.
    pub bytes: u64,
    /// Seconds spent.
    pub seconds: f64,
}

impl PackedFile {
    /// Raw bytes per compressed byte.
    pub fn ratio(&self) -> f64 {
        self.raw_bytes as f64 / self.bytes.max(1) as f64
    }
}

/// The result of [`compress_folder`] or [`decompress_folder`].
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct PackReport {
    /// The tables handled, in order.
    pub files: Vec<PackedFile>,
    /// Files removed.
    pub removed: Vec<String>,
}

/// What [`compress_folder`] does.
#[derive(Clone, Debug)]
pub struct CompressOptions {
    /// Level and block size.
    pub settings: Settings,
    /// The layers to compress (those of them that are built).
    pub layers: RangeInclusive<u32>,
    /// Remove each raw table once every table of its layer is compressed
    /// and verified.
    pub remove_raw: bool,
}

/// What [`decompress_folder`] does.
#[derive(Clone, Debug)]
pub struct DecompressOptions {
    /// The layers to decompress.
    pub layers: RangeInclusive<u32>,
    /// Remove each compressed file (and forget it in the manifest) once its
    /// raw table is in place and verified.
    pub remove_compressed: bool,
}

/// Locks one of our folders (refusing a foreign one before writing the lock
/// file), and reads its manifest under the lock with the entries of `layers`.
fn open_locked(
    dir: &Path,
    layers: &RangeInclusive<u32>,
) -> Result<(FolderLock, Manifest, Vec<LayerEntry>)> {
    Manifest::load_ours(dir)?;
    let lock = FolderLock::acquire(dir)?;
    let manifest = Manifest::load_ours(dir)?;
    let chosen = manifest
        .layers
        .iter()
        .filter(|l| layers.contains(&l.seeds))
        .cloned()
        .collect();
    Ok((lock, manifest, chosen))
}

/// Opens the compressed copy `c` of the raw table `raw` (table `kind`)
/// that the manifest of `dir` lists, mapped (the caller holds the folder's
/// lock): size, header and block index, the table it holds, and with
/// `check_file` the checksum of the whole file against the manifest.
fn open_listed(
    dir: &Path,
    rules: &Rules,
    c: &CompressedEntry,
    kind: Kind,
    raw: &FileEntry,
    check_file: bool,
) -> Result<(CompressedTable<Mapped>, PathBuf)> {
    let path = dir.join(&c.name);
    let stored = Stored::Compressed {
        path: path.clone(),
        listed: Some((c.clone(), raw.clone())),
    };
    if check_file {
        let what = "the manifest's checksum of the compressed file";
        if let Some(damage) = store::check_file(&stored, c.seeds, &c.xxh3, what)? {
            return Err(damage);
        }
    }
    // SAFETY: the caller holds the folder's lock, which every writer of
    // the folder takes (see `store::map`).
    let map = unsafe { Mapped::open(&path, c.bytes, SizeOf::Recorded)? };
    let t = store::open_compressed(map, rules, &path, c.seeds, kind, stored_listed(&stored))?;
    Ok((t, path))
}

fn stored_listed(s: &Stored) -> Option<&(CompressedEntry, FileEntry)> {
    match s {
        Stored::Compressed { listed, .. } => listed.as_ref(),
        Stored::Raw(_) => None,
    }
}

/// A raw table listed in the manifest as `f`, mapped (the caller holds the
/// folder's lock). Its checksum is checked against the manifest's by the
/// encoder, which hashes the table as it compresses it
/// ([`write_compressed`]).
fn open_raw(dir: &Path, f: &FileEntry) -> Result<(Mapped, PathBuf)> {
    let path = dir.join(&f.name);
    // SAFETY: as in `open_listed`.
    Ok((
        unsafe { Mapped::open(&path, f.bytes, SizeOf::Layer)? },
        path,
    ))
}

/// Compresses the tables of our folder `dir` into `.zst` files beside
/// them, verifies each file written (every block decompressed and compared
/// with the raw table) before recording it in the manifest, and with
/// `remove_raw` removes a layer's raw tables once all of its tables are
/// compressed and verified. A table already compressed with the same
/// settings is verified and kept. Blocks are (de)compressed in parallel on
/// the rayon pool.
pub fn compress_folder(
    dir: &Path,
    opts: &CompressOptions,
    obs: &dyn PackObserver,
) -> Result<PackReport> {
    check_settings(opts.settings)?;
    let (_lock, mut manifest, layers) = open_locked(dir, &opts.layers)?;
    compress_layers(dir, &mut manifest, &layers, opts, obs)
}

/// Compression settings checked, as an [`Error::Setting`].
pub(crate) fn check_settings(s: Settings) -> Result<()> {
    s.check()
        .map_err(|(name, reason)| Error::Setting { name, reason })
}

/// The work of [`compress_folder`] on the entries `layers` of `manifest`,
/// for a caller that holds the folder's lock (the builder, with
/// `--compress-finished`); the settings must be checked.
pub(crate) fn compress_layers(
    dir: &Path,
    manifest: &mut Manifest,
    layers: &[LayerEntry],
    opts: &CompressOptions,
    obs: &dyn PackObserver,
) -> Result<PackReport> {
    let s = opts.settings;
    let rules = manifest.rules();
    let mut report = PackReport::default();
    for l in layers {
        let v3 = s.version == 3;
        if v3 {
            compress_layer_v3(dir, manifest, l, s, obs, &mut report)?;
        }
        for (kind, f) in l.files().filter(|_| !v3) {
            let t0 = Instant::now();
            let name = file_name(&f.name);
            let path = dir.join(&name);
            let raw_path = dir.join(&f.name);
            let raw_present = raw_path.exists();
            let blocks = l.positions.div_ceil(s.block_size as u64);
            // A compressed file already there with these settings: verify it.
            if let Some(c) = manifest.compressed(&f.name).cloned() {
                if c.block_size == s.block_size
                    && c.level == s.level
                    && c.dictionary == s.dictionary
                {
                    obs.start(&c.name, l.positions.div_ceil(c.block_size as u64));
                    let checked =
                        open_listed(dir, &rules, &c, kind, f, true).and_then(|(t, path)| {
                            t.verify(None, &|k| obs.advance(k))
                                .map_err(|e| Error::compressed(path, e))
                        });
                    match checked {
                        Ok(()) => {
                            let done = PackedFile {
                                layer: l.seeds,
                                raw: f.name.clone(),
                                name: c.name.clone(),
                                action: Action::AlreadyCompressed,
                                raw_bytes: f.bytes,
                                bytes: c.bytes,
                                seconds: t0.elapsed().as_secs_f64(),
                            };
                            obs.done(&done);
                            report.files.push(done);
                            continue;
                        }
                        Err(e) if raw_present => {
                            obs.warning(&format!("{e}; compressing {} again", f.name))
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
            // The bytes to compress: the raw table, else the compressed
            // copy made with other settings.
            obs.start(&name, 2 * blocks);
            let bytes = if raw_present {
                let (map, raw_path) = open_raw(dir, f)?;
                let raw = Source::Mapped(&map, &raw_path, &f.xxh3);
                write_compressed(&path, raw, &rules, kind, l.seeds, s, obs)?
            } else if let Some(c) = manifest.compressed(&f.name) {
                let (old, path_old) = open_listed(dir, &rules, c, kind, f, true)?;
                let raw = old
                    .decompress_all()
                    .map_err(|e| Error::compressed(path_old, e))?;
                write_compressed(&path, Source::Bytes(&raw), &rules, kind, l.seeds, s, obs)?
            } else {
                return Err(Error::Missing(raw_path));
            };
            let entry = CompressedEntry {
                seeds: l.seeds,
                raw: f.name.clone(),
                name: name.clone(),
                bytes,
                xxh3: store::checksum_file(&path)?,
                block_size: s.block_size,
                level: s.level,
                dictionary: s.dictionary,
                version: 0,
            };
            let old = manifest.compressed(&f.name).map(|c| c.name.clone());
            manifest.put_compressed(entry);
            manifest.store(dir)?;
            remove_unlisted(dir, manifest, old, obs, &mut report)?;
            let done = PackedFile {
                layer: l.seeds,
                raw: f.name.clone(),
                name,
                action: Action::Compressed,
                raw_bytes: f.bytes,
                bytes,
                seconds: t0.elapsed().as_secs_f64(),
            };
            obs.done(&done);
            report.files.push(done);
        }
        if opts.remove_raw {
            // (The scores-only form leaves the envelope's tables as they
            // are.)
            for (_, f) in l
                .files()
                .filter(|(_, f)| manifest.compressed(&f.name).is_some())
            {
                let p = dir.join(&f.name);
                if p.exists() {
                    fs::remove_file(&p).at(&p)?;
                    obs.removed(&f.name);
                    report.removed.push(f.name.clone());
                }
            }
            store::sync_dir(dir)?;
        }
    }
    Ok(report)
}

/// Compresses the raw table `f` (table `kind` of layer `layer`, in `dir`,
/// checked against `f`'s checksum first) into its compressed file, written
/// through a verified temporary file, and removes the raw table. The
/// manifest is not touched: the caller lists the returned entry (the
/// builder, once the layer is finished; a compressed file that no manifest
/// lists is written again by the next build).
pub(crate) fn compress_and_remove_raw(
    dir: &Path,
    rules: &Rules,
    layer: u32,
    kind: Kind,
    f: &FileEntry,
    s: Settings,
) -> Result<CompressedEntry> {
    let name = file_name(&f.name);
    let path = dir.join(&name);
    let bytes = {
        let (map, raw_path) = open_raw(dir, f)?;
        let raw = Source::Mapped(&map, &raw_path, &f.xxh3);
        write_compressed(&path, raw, rules, kind, layer, s, &Quiet)?
    };
    let entry = CompressedEntry {
        seeds: layer,
        raw: f.name.clone(),
        name,
        bytes,
        xxh3: store::checksum_file(&path)?,
        block_size: s.block_size,
        level: s.level,
        dictionary: s.dictionary,
        version: 0,
    };
    let raw_path = dir.join(&f.name);
    fs::remove_file(&raw_path).at(&raw_path)?;
    store::sync_dir(dir)?;
    Ok(entry)
}

/// The bytes a compressed file is made from.
#[derive(Clone, Copy)]
enum Source<'a> {
    /// A raw table (its path and the manifest's checksum of it), mapped:
    /// each pass releases the windows it is done with, so compressing a
    /// table larger than memory does not make the process's resident set
    /// grow to its size.
    Mapped(&'a Mapped, &'a Path, &'a str),
    /// Bytes in memory.
    Bytes(&'a [u8]),
}

impl Source<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Source::Mapped(m, ..) => m,
            Source::Bytes(b) => b,
        }
    }
    fn release(&self, start: usize, len: usize) {
        if let Source::Mapped(m, ..) = self {
            m.release_range(start, len);
        }
    }
}

/// Writes the compressed file through a temporary file that is verified
/// (a mapped raw table's checksum against the manifest's, then every block
/// decompressed and compared with the raw bytes) before it is renamed
/// into place. Returns its size. Neither pass keeps more than a step of a
/// mapped table, nor of the mapped temporary file, resident.
fn write_compressed(
    path: &Path,
    source: Source<'_>,
    rules: &Rules,
    kind: Kind,
    layer: u32,
    s: Settings,
    obs: &dyn PackObserver,
) -> Result<u64> {
    let tmp = store::temp_path(path);
    let raw = source.bytes();
    let result = (|| -> Result<u64> {
        let file = File::create(&tmp).at(&tmp)?;
        let mut w = io::BufWriter::with_capacity(1 << 20, file);
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let half = (raw.len() as u64).div_ceil(s.block_size as u64) / 2;
        let done = std::sync::atomic::AtomicU64::new(0);
        let progress = |k: u64| {
            obs.advance(k);
            let before = done.fetch_add(k, std::sync::atomic::Ordering::Relaxed);
            if before < half && before + k >= half {
                crate::fault::point("mid-compress", &name);
            }
        };
        let bytes = encode_steps(raw, rules, kind, layer, s, &mut w, &progress, &|at, k| {
            source.release(at, k)
        })
        .at(&tmp)?;
        let file = w.into_inner().map_err(|e| e.into_error()).at(&tmp)?;
        file.sync_all().at(&tmp)?;
        drop(file);
        // SAFETY: the temporary file is this process's own.
        let written =
            CompressedTable::parse(unsafe { Mapped::open(&tmp, bytes, SizeOf::Recorded)? });
        if let (Ok(t), Source::Mapped(_, raw_path, expected)) = (&written, source) {
            let found = t.header().raw_checksum();
            if found != expected {
                return Err(Error::Checksum {
                    path: raw_path.to_path_buf(),
                    what: "the manifest's checksum of the table",
                    expected: expected.to_string(),
                    found,
                });
            }
        }
        written
            .and_then(|t| {
                t.verify_steps(Some(raw), &|k| obs.advance(k), &|at, k| {
                    source.release(at, k);
                    // Only this step's blocks are resident; releasing the
                    // rest of the mapping, not resident, costs little.
                    t.source().release();
                })
            })
            .map_err(|e| Error::compressed(&tmp, e))?;
        fs::rename(&tmp, path).at(path)?;
        store::sync_dir(path.parent().unwrap_or(Path::new(".")))?;
        Ok(bytes)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Removes the compressed file `old` (the name an entry had before it was
/// replaced or forgotten) once no entry of the stored manifest lists it.
fn remove_unlisted(
    dir: &Path,
    manifest: &Manifest,
    old: Option<String>,
    obs: &dyn PackObserver,
    report: &mut PackReport,
) -> Result<()> {
    let Some(old) = old else { return Ok(()) };
    if manifest.compressed.iter().any(|c| c.name == old) {
        return Ok(());
    }
    let p = dir.join(&old);
    if p.exists() {
        fs::remove_file(&p).at(&p)?;
        store::sync_dir(dir)?;
    }
    obs.removed(&old);
    report.removed.push(old);
    Ok(())
}

/// [`compress_layers`]' work on layer `l` in format 3: one file for the
/// layer's three tables (`tables.n.zst`), or for its scores alone
/// (`scores.n.zst`) with [`Settings::scores_only`] or a layer without
/// the envelope. The file is written through a temporary file, and each
/// table it holds is decompressed and compared with the raw table (whose
/// checksum must be the manifest's) before it is renamed into place and
/// listed once per table.
fn compress_layer_v3(
    dir: &Path,
    manifest: &mut Manifest,
    l: &LayerEntry,
    s: Settings,
    obs: &dyn PackObserver,
    report: &mut PackReport,
) -> Result<()> {
    let t0 = Instant::now();
    let rules = manifest.rules();
    let full = !s.scores_only && l.lower.is_some() && l.upper.is_some();
    let files: Vec<(Kind, FileEntry)> = l
        .files()
        .filter(|(k, _)| full || *k == Kind::Score)
        .map(|(k, f)| (k, f.clone()))
        .collect();
    let name = if full {
        crate::codec::layer_file_name(l.seeds)
    } else {
        file_name(&Kind::Score.file_name(l.seeds))
    };
    let path = dir.join(&name);
    let raw_names = files
        .iter()
        .map(|(_, f)| f.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let raw_bytes: u64 = files.iter().map(|(_, f)| f.bytes).sum();
    let blocks = l.positions.div_ceil(s.block_size as u64);
    // Already there with these settings: verify it.
    let listed: Vec<Option<CompressedEntry>> = files
        .iter()
        .map(|(_, f)| manifest.compressed(&f.name).cloned())
        .collect();
    let same = listed.iter().all(|c| {
        c.as_ref()
            .is_some_and(|c| c.version == 3 && c.name == name && c.block_size == s.block_size)
    });
    let raw_present = files.iter().all(|(_, f)| dir.join(&f.name).exists());
    if same {
        obs.start(&name, blocks * files.len() as u64);
        let checked = files.iter().zip(&listed).try_for_each(|((kind, f), c)| {
            let c = c.as_ref().expect("listed");
            let (t, path) = open_listed(dir, &rules, c, *kind, f, *kind == files[0].0)?;
            t.verify(None, &|k| obs.advance(k))
                .map_err(|e| Error::compressed(path, e))
        });
        match checked {
            Ok(()) => {
                let c = listed[0].as_ref().expect("listed");
                let done = PackedFile {
                    layer: l.seeds,
                    raw: raw_names,
                    name: name.clone(),
                    action: Action::AlreadyCompressed,
                    raw_bytes,
                    bytes: c.bytes,
                    seconds: t0.elapsed().as_secs_f64(),
                };
                obs.done(&done);
                report.files.push(done);
                return Ok(());
            }
            Err(e) if raw_present => {
                obs.warning(&format!("{e}; compressing layer {} again", l.seeds))
            }
            Err(e) => return Err(e),
        }
    }
    // The tables to code: raw (mapped), else decompressed from the copies
    // listed.
    enum Held {
        Mapped(Mapped),
        Bytes(Vec<u8>),
    }
    let mut held = Vec::new();
    for ((kind, f), c) in files.iter().zip(&listed) {
        let raw_path = dir.join(&f.name);
        if raw_path.exists() {
            held.push(Held::Mapped(open_raw(dir, f)?.0));
        } else if let Some(c) = c {
            let (old, path_old) = open_listed(dir, &rules, c, *kind, f, true)?;
            let bytes = old
                .decompress_all()
                .map_err(|e| Error::compressed(path_old, e))?;
            held.push(Held::Bytes(bytes));
        } else {
            return Err(Error::Missing(raw_path));
        }
    }
    let table = |k: usize| -> &[u8] {
        match &held[k] {
            Held::Mapped(m) => m,
            Held::Bytes(b) => b,
        }
    };
    let release = |start: usize, len: usize| {
        for h in &held {
            if let Held::Mapped(m) = h {
                m.release_range(start, len);
            }
        }
    };
    let tables = crate::codec::v3::TableSet {
        scores: table(0),
        envelope: full.then(|| (table(1), table(2))),
    };
    obs.start(&name, blocks * (2 + files.len() as u64));
    let tmp = store::temp_path(&path);
    let result = (|| -> Result<u64> {
        let file = File::create(&tmp).at(&tmp)?;
        let mut w = io::BufWriter::with_capacity(1 << 20, file);
        let bytes = crate::codec::v3::encode_to(
            tables,
            &rules,
            l.seeds,
            s.block_size,
            &mut w,
            &|k| obs.advance(k),
            &release,
        )
        .at(&tmp)?;
        let file = w.into_inner().map_err(|e| e.into_error()).at(&tmp)?;
        file.sync_all().at(&tmp)?;
        drop(file);
        crate::fault::point("mid-compress", &name);
        for (k, (kind, f)) in files.iter().enumerate() {
            // SAFETY: the temporary file is this process's own.
            let map = unsafe { Mapped::open(&tmp, bytes, SizeOf::Recorded)? };
            let mut t = CompressedTable::parse(map).map_err(|e| Error::compressed(&tmp, e))?;
            t.serve(*kind).map_err(|e| Error::compressed(&tmp, e))?;
            let found = t.header().raw_checksum();
            if found != f.xxh3 {
                return Err(Error::Checksum {
                    path: dir.join(&f.name),
                    what: "the manifest's checksum of the table",
                    expected: f.xxh3.clone(),
                    found,
                });
            }
            t.verify_steps(Some(table(k)), &|b| obs.advance(b), &|at, len| {
                release(at, len);
                t.source().release();
            })
            .map_err(|e| Error::compressed(&tmp, e))?;
        }
        fs::rename(&tmp, &path).at(&path)?;
        store::sync_dir(dir)?;
        Ok(bytes)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    let bytes = result?;
    let xxh3 = store::checksum_file(&path)?;
    let mut old = Vec::new();
    for (_, f) in &files {
        old.push(manifest.compressed(&f.name).map(|c| c.name.clone()));
        manifest.put_compressed(CompressedEntry {
            seeds: l.seeds,
            raw: f.name.clone(),
            name: name.clone(),
            bytes,
            xxh3: xxh3.clone(),
            block_size: s.block_size,
            level: 0,
            dictionary: 0,
            version: 3,
        });
    }
    manifest.store(dir)?;
    for o in old {
        if o.as_deref() != Some(name.as_str()) {
            remove_unlisted(dir, manifest, o, obs, report)?;
        }
    }
    let done = PackedFile {
        layer: l.seeds,
        raw: raw_names,
        name,
        action: Action::Compressed,
        raw_bytes,
        bytes,
        seconds: t0.elapsed().as_secs_f64(),
    };
    obs.done(&done);
    report.files.push(done);
    Ok(())
}

/// Writes back the raw tables of our folder `dir` from their compressed
/// copies, where a raw table is missing or does not match its checksum;
/// each is written to a temporary file and renamed into place only when it
/// has the manifest's checksum. With `remove_compressed`, the compressed
/// files are removed (and forgotten) once their raw tables are in place.
pub fn decompress_folder(
    dir: &Path,
    opts: &DecompressOptions,
    obs: &dyn PackObserver,
) -> Result<PackReport> {
    let (_lock, mut manifest, layers) = open_locked(dir, &opts.layers)?;
    let mut report = PackReport::default();
    for l in &layers {
        decompress_layer(
            dir,
            &mut manifest,
            l,
            opts.remove_compressed,
            obs,
            &mut report,
        )?;
    }
    Ok(report)
}

/// [`decompress_folder`]'s work on one layer, for a caller that holds the
/// folder's lock and its manifest (the builder, which reads lower layers
/// raw).
pub(crate) fn decompress_layer(
    dir: &Path,
    manifest: &mut Manifest,
    l: &LayerEntry,
    remove_compressed: bool,
    obs: &dyn PackObserver,
    report: &mut PackReport,
) -> Result<()> {
    let rules = manifest.rules();
    for (kind, f) in l.files() {
        let Some(c) = manifest.compressed(&f.name).cloned() else {
            continue;
        };
        let t0 = Instant::now();
        let raw_path = dir.join(&f.name);
        let raw_ok = raw_path.exists()
            && fs::metadata(&raw_path).at(&raw_path)?.len() == f.bytes
            && store::checksum_file(&raw_path)? == f.xxh3;
        let action = if raw_ok {
            Action::AlreadyRaw
        } else {
            if raw_path.exists() {
                obs.warning(&format!(
                    "{} does not match its checksum; writing it again from {}",
                    f.name, c.name
                ));
            }
            let (t, zst) = open_listed(dir, &rules, &c, kind, f, true)?;
            obs.start(&f.name, t.blocks());
            let mut failed = None;
            store::write_atomic_checked(&raw_path, f.bytes, &f.xxh3, |start, buf| {
                if failed.is_some() {
                    return;
                }
                match t.decompress_range(start, buf) {
                    Ok(()) => obs.advance((buf.len() as u64).div_ceil(c.block_size as u64)),
                    Err(e) => failed = Some(e),
                }
            })
            .map_err(|e| match (e, failed.clone()) {
                (Error::Checksum { .. }, Some(source)) => Error::compressed(zst, source),
                (e, _) => e,
            })?;
            Action::Decompressed
        };
        let done = PackedFile {
            layer: l.seeds,
            raw: f.name.clone(),
            name: c.name.clone(),
            action,
            raw_bytes: f.bytes,
            bytes: c.bytes,
            seconds: t0.elapsed().as_secs_f64(),
        };
        obs.done(&done);
        report.files.push(done);
        if remove_compressed {
            manifest.remove_compressed(&f.name);
            manifest.store(dir)?;
            remove_unlisted(dir, manifest, Some(c.name.clone()), obs, report)?;
        }
    }
    Ok(())
}

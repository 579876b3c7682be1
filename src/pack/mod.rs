//! Folder operations on compressed tables: `awari compress` and `awari
//! decompress` ([`compress_folder`], [`decompress_folder`]), which lock one
//! of our folders, write and verify `.zst` files beside the raw tables and
//! record them in the manifest ([`crate::store::CompressedEntry`]).
//!
//! # Example
//!
//! The tables an engine ships: scores alone, in small blocks for probes
//! (format 4), the raw tables removed; the scores read back unchanged.
//!
//! ```
//! use awari_egdb::build::{build, BuildOptions, Silent};
//! use awari_egdb::codec::Settings;
//! use awari_egdb::pack::{compress_folder, CompressOptions, Quiet};
//! use awari_egdb::{probe::Database, Position};
//! # fn main() -> awari_egdb::Result<()> {
//! let dir = tempfile::tempdir().unwrap();
//! build(&BuildOptions { max_seeds: 8, ..BuildOptions::new(dir.path()) }, &Silent)?;
//! let p = Position::indexable([3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2])?;
//! let before = Database::open(dir.path())?.score(&p)?;
//! let settings = Settings { scores_only: true, ..Settings::random_access() };
//! let opts = CompressOptions { settings, layers: 0..=8, remove_raw: true };
//! compress_folder(dir.path(), &opts, &Quiet)?;
//! assert!(!dir.path().join("scores.5").exists());
//! assert_eq!(Database::open(dir.path())?.score(&p)?, before);
//! # Ok(()) }
//! ```
//!
//! The file format is in [`crate::codec`]. Every file written is verified
//! before anything relies on it: a compressed file is decompressed and
//! compared with the raw table before it is renamed into place, and a raw
//! table written back has the manifest's checksum before it is.
//!
//! Tables are opened by [`StoredTable`] and compressed files written
//! through [`store::AtomicFile`], the store's atomic write.
//!
//! The files: this one the options, the report and the observer, and the
//! opening of a locked folder's tables that both directions share;
//! `compress.rs` compressing a layer into one format 4 file,
//! `decompress.rs` writing raw tables back, `scores_only.rs` the same in a
//! folder of scores without manifest (which then gets one, naming the rule
//! set the compressed files' headers name); `dont_care.rs` the best exits
//! of a layer and its don't-care file.

mod error;
pub use error::PackError;
mod compress;
mod decompress;
#[doc(hidden)]
pub mod dont_care;
mod scores_only;

pub use compress::compress_folder;
pub(crate) use compress::{check_settings, compress_layers};
pub use decompress::decompress_folder;
pub(crate) use decompress::decompress_layer;

use crate::codec::{CompressedTable, Settings};
use crate::error::Result;
use crate::format::Kind;
use crate::rules::Rules;
use crate::store::{
    self, Access, CompressedEntry, FileEntry, FolderLock, LayerEntry, Manifest, Mapped, Stored,
    StoredTable, TableFile,
};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

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
    /// The form (full or scores alone) and the block layout.
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
/// lock), through [`StoredTable::open`]: size, header and block index,
/// the table it holds, and with `check_file` the checksum of the whole
/// file against the manifest.
fn open_listed(
    dir: &Path,
    rules: &Rules,
    c: &CompressedEntry,
    kind: Kind,
    raw: &FileEntry,
    check_file: bool,
) -> Result<(CompressedTable<TableFile>, PathBuf)> {
    let path = dir.join(&c.name);
    let stored = Stored::Compressed {
        path: path.clone(),
        listed: Some((c.clone(), raw.clone())),
    };
    if check_file {
        let what = "the manifest's checksum of the compressed file";
        if let Some(damage) = store::check_file(&stored, c.seeds, c.xxh3, what)? {
            return Err(damage);
        }
    }
    let t = StoredTable::open(&stored, c.seeds, kind, Some(rules), locked())?;
    let t = t.into_compressed().expect("a compressed copy");
    Ok((t, path))
}

/// How a locked folder's tables are read: mapped.
fn locked() -> Access {
    // SAFETY: the callers hold the folder's lock, which every writer of
    // the folder takes (see `store::map`).
    unsafe { Access::mapped() }
}

/// The raw table `kind` of layer `n` listed in the manifest as `f`,
/// mapped (the caller holds the folder's lock), through
/// [`StoredTable::open`]. Its checksum is checked against the manifest's
/// once the file made from it is written (the header carries the
/// checksum the encoder computed), before the file is renamed into place.
fn open_raw(dir: &Path, n: u32, kind: Kind, f: &FileEntry) -> Result<(Mapped, PathBuf)> {
    let raw = store::raw_file_required(dir, &f.name)?;
    let t = StoredTable::open(&raw, n, kind, None, locked())?;
    Ok((
        t.into_mapped().expect("a raw table, mapped"),
        raw.path().to_path_buf(),
    ))
}

/// Opens the compressed file just written to `tmp` (this process's own),
/// mapped, to verify it before it is renamed into place.
fn open_written(tmp: &Path, n: u32, kind: Kind) -> Result<CompressedTable<TableFile>> {
    let stored = Stored::Compressed {
        path: tmp.to_path_buf(),
        listed: None,
    };
    let t = StoredTable::open(&stored, n, kind, None, locked())?;
    Ok(t.into_compressed().expect("a compressed copy"))
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
    if manifest.lists(&old) {
        return Ok(());
    }
    store::remove_unlisted(dir, manifest, std::slice::from_ref(&old))?;
    obs.removed(&old);
    report.removed.push(old);
    Ok(())
}

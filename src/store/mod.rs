//! The folder of tables: what it holds, and the one opener and the one
//! writer of its table files. Every table file is opened here
//! ([`StoredTable`]) and written here (the atomic writes of [`write`](mod@write)).
//!
//! A database folder holds, per layer `n`, `scores.n` (the VU format: one
//! signed byte per Goedel index, no header) and, with the envelope,
//! `lower.n` and `upper.n` in the same format, and unless built without it
//! `dist.n` (one unsigned byte per Goedel index, [`crate::solve::distance`]);
//! any of the first three may be kept as a compressed copy `NAME.zst`
//! instead ([`crate::codec`]); `dist.n` is kept raw. One
//! `manifest.json` ([`Manifest`]) lists the finished layers and the
//! compressed copies, with their checksums. A VU dataset folder holds
//! `scores.n` files and nothing else.
//!
//! * [`manifest`]: the manifest's schema, loading (every field checked)
//!   and storing.
//! * [`write`](mod@write): atomic writes (temporary name, sync, rename, sync of the
//!   folder, with the fault points `before-rename` and `after-rename`):
//!   bytes at hand, a stream ([`AtomicFile`], the compressed files that
//!   `pack` writes), one table by several ranks ([`write_parts`]).
//! * `open`: [`StoredTable`], the one opener of a table: [`locate`]d,
//!   its size checked (a raw table the layer's, a listed compressed copy
//!   the manifest's) and a compressed copy's header (rule set, layer, the
//!   table held); random access, ranges, steps in order, checksum of the
//!   raw bytes. The probe, the builder's lower layers, the verifier,
//!   compress/decompress and recover all open tables through it.
//! * [`map`]: reading a file's bytes with `pread`, or mapped, with the
//!   mapping contract ([`Access`] chooses, mapping an `unsafe` opt-in).
//! * [`lock`]: `build.lock`, which every writer of a folder holds.
//! * `folder`: the folder's other file operations: creating it, the
//!   files of a layer ([`layer_files`]) and the refusal to build over
//!   unlisted ones ([`check_unlisted`]), whether a raw table is there
//!   ([`raw_file`], [`raw_file_required`]), removing the files the manifest
//!   no longer lists ([`remove_unlisted`]) and raw tables it lists a
//!   compressed copy of ([`remove_raw_with_copies`]), and setting files
//!   aside under a free name ([`set_aside`], [`set_aside_damaged_manifest`]).
//!   No other room creates, renames or deletes a folder's files, asks
//!   whether one is there, nor decides which may go: the store checks the
//!   manifest first.
//! * `rules_of`: the folder's rule set and where it was found
//!   ([`rules_of()`]): its manifest's, else the one its compressed files'
//!   headers name, else the caller's or, for raw tables that name none,
//!   awari's assumed ([`RulesFrom`]).
//! * this module: [`locate`], the single resolver of "the raw table, else
//!   its compressed copy" (and [`unlisted_copies`], the copies it searches
//!   in a folder without manifest), and [`check_layer`], which checks a
//!   recorded layer's files against the manifest.

mod error;
pub use error::StoreError;
mod folder;
pub mod lock;
pub mod manifest;
pub mod map;
mod open;
mod rules_of;
pub mod write;

pub use folder::{
    check_unlisted, create_folder, damaged_manifest_text, file_len, has_manifest, layer_files,
    raw_file, raw_file_required, remove_raw_with_copies, remove_unlisted, set_aside,
    set_aside_damaged_manifest,
};
pub use lock::FolderLock;
pub use manifest::{
    CompressedEntry, FileEntry, IoFigures, LayerEntry, Manifest, ManifestFault, PhaseSeconds,
    FORMAT, MANIFEST, VERSION,
};
pub use map::{FileTable, Mapped};
pub use open::{Access, StoredTable, TableFile};
pub use rules_of::{headers_rules, rules_of, FolderRules, RulesFrom};
pub use write::{
    checksum_file, sync_dir, temp_path, write_atomic, write_atomic_checked, write_parts, AtomicFile,
};

use crate::codec::{self, Bytes, CompressedTable, Expected};
use crate::error::{AtPath, Error, Result, SizeOf};
use crate::format::{Checksum, Kind};
use crate::index::layer_size;
use crate::rules::{Rules, MAX_SEEDS};
use std::fs;
use std::path::{Path, PathBuf};

/// Checks that `dir` is an existing folder.
pub fn check_folder(dir: &Path) -> Result<()> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(StoreError::NotAFolder(dir.to_path_buf()).into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(StoreError::NoSuchFolder(dir.to_path_buf()).into())
        }
        Err(e) => Err(e).at(dir),
    }
}

/// What kind of folder `dir` is, judged from its files.
#[derive(Debug)]
pub enum Folder {
    /// One of ours, with its manifest.
    Ours(Manifest),
    /// Score tables without manifest: a VU dataset folder (`scores.N`
    /// files), or the scores-only form an engine ships (`scores.N.zst`,
    /// whose headers name their rule set, [`rules_of()`]).
    Vu,
    /// No tables and no manifest.
    Empty,
}

/// Reads the folder `dir` (which must exist): ours (its manifest loaded
/// and checked), a VU dataset folder, or empty. A folder with our
/// envelope tables but no manifest is one of ours that lost it
/// ([`StoreError::LostManifest`]).
pub fn read_folder(dir: &Path) -> Result<Folder> {
    check_folder(dir)?;
    if let Some(m) = Manifest::load(dir)? {
        return Ok(Folder::Ours(m));
    }
    let ours = (0..=MAX_SEEDS)
        .flat_map(|n| {
            [Kind::Lower, Kind::Upper]
                .map(|k| k.file_name(n))
                .into_iter()
                .chain([codec::layer_file_name(n)])
        })
        .find(|f| dir.join(f).exists() || dir.join(codec::file_name(f)).exists());
    if let Some(file) = ours {
        return Err(StoreError::LostManifest {
            dir: dir.to_path_buf(),
            file,
        }
        .into());
    }
    // A VU dataset folder, or the scores-only form an engine ships
    // (`scores.n.zst` files and nothing else).
    let vu = (0..=MAX_SEEDS).any(|n| {
        let f = Kind::Score.file_name(n);
        dir.join(&f).exists() || dir.join(codec::file_name(&f)).exists()
    });
    Ok(if vu { Folder::Vu } else { Folder::Empty })
}

/// The manifest of a folder the builder may write tables of `rules` to:
/// ours of the same rule set, or a new one for an empty folder. Refuses a
/// folder of another rule set, and a folder of tables without a manifest
/// (another tool's, a VU dataset, or ours that lost its manifest).
pub fn manifest_to_write(dir: &Path, rules: &Rules) -> Result<Manifest> {
    match read_folder(dir)? {
        Folder::Ours(m) => {
            rules_agree(dir, &m.rules(), rules, "; use another folder (--db)")?;
            Ok(m)
        }
        Folder::Empty => Ok(Manifest::new(rules)),
        Folder::Vu => Err(foreign_folder(dir)),
    }
}

/// The refusal to write to `dir`, a folder of score tables without a
/// manifest or envelope tables (a VU dataset or another tool's folder),
/// naming a table found there.
pub fn foreign_folder(dir: &Path) -> Error {
    let file = (0..=MAX_SEEDS)
        .map(|n| Kind::Score.file_name(n))
        .flat_map(|f| [codec::file_name(&f), f])
        .find(|f| dir.join(f).exists())
        .unwrap_or_default();
    StoreError::ForeignFolder {
        dir: dir.to_path_buf(),
        file,
    }
    .into()
}

/// Refuses to work on `dir`, whose tables follow `folder`, with `asked`
/// unless both give the same tables ([`Rules::same_tables`]); `hint` says
/// what to do instead.
pub fn rules_agree(dir: &Path, folder: &Rules, asked: &Rules, hint: &'static str) -> Result<()> {
    if folder.same_tables(asked) {
        return Ok(());
    }
    Err(StoreError::RulesDiffer {
        dir: dir.to_path_buf(),
        folder: folder.name,
        asked: asked.name,
        hint,
    }
    .into())
}

/// Where one table is kept.
#[derive(Clone, Debug)]
pub enum Stored {
    /// The raw table (one byte per position of its layer).
    Raw(PathBuf),
    /// Only its compressed copy is there.
    Compressed {
        /// The `.zst` file.
        path: PathBuf,
        /// Its manifest entry and the raw table's, in a folder of ours
        /// (`None` in a folder without manifest).
        listed: Option<(CompressedEntry, FileEntry)>,
    },
}

impl Stored {
    /// The file.
    pub fn path(&self) -> &Path {
        match self {
            Stored::Raw(p) | Stored::Compressed { path: p, .. } => p,
        }
    }

    /// Whether it is the compressed copy.
    pub fn is_compressed(&self) -> bool {
        matches!(self, Stored::Compressed { .. })
    }
}

/// The one resolver of a folder's tables: where table `kind` of layer `n`
/// is kept in `dir`, whose manifest is `m` (`None` for a folder without
/// one). The raw table if its file is there, else its compressed copy.
///
/// `Ok(None)` when the folder does not hold the table: a layer the
/// manifest does not list (or, without manifest, no such file), or an
/// envelope table of a layer built without the envelope. A table the
/// manifest lists whose raw file is absent and which has no listed
/// compressed copy is damage ([`StoreError::Missing`]).
pub fn locate(dir: &Path, m: Option<&Manifest>, n: u32, kind: Kind) -> Result<Option<Stored>> {
    let Some(m) = m else {
        return Ok(
            raw_file(dir, &kind.file_name(n)).or_else(|| unlisted_copies(dir, n, kind).next())
        );
    };
    let Some(f) = m
        .layer(n)
        .and_then(|e| e.files().find(|(k, _)| *k == kind).map(|(_, f)| f))
    else {
        return Ok(None);
    };
    if let Some(raw) = raw_file(dir, &f.name) {
        return Ok(Some(raw));
    }
    match m.compressed(&f.name) {
        Some(c) => Ok(Some(Stored::Compressed {
            path: dir.join(&c.name),
            listed: Some((c.clone(), f.clone())),
        })),
        None => Err(StoreError::Missing(dir.join(&f.name)).into()),
    }
}

/// The compressed copies of table `kind` of layer `n` in `dir` that no
/// manifest lists, in the order [`locate`] searches a folder without
/// manifest ([`codec::copy_names`]): those whose file exists. A distance
/// table has none (it is kept raw).
pub fn unlisted_copies(dir: &Path, n: u32, kind: Kind) -> impl Iterator<Item = Stored> + '_ {
    codec::copy_names(kind, n)
        .into_iter()
        .filter(move |_| kind != Kind::Distance)
        .map(|c| dir.join(c))
        .filter(|p| p.exists())
        .map(|path| Stored::Compressed { path, listed: None })
}

/// Opens the compressed file `path` over `bytes` and checks that it holds
/// table `kind` of layer `n`: header and block index (against the
/// checksum the header carries), and, when listed, the checksum of the
/// raw table the manifest records. The size was checked by whoever made
/// `bytes`.
fn open_compressed<B: Bytes>(
    bytes: B,
    rules: &Rules,
    path: &Path,
    n: u32,
    kind: Kind,
    listed: Option<&(CompressedEntry, FileEntry)>,
) -> Result<CompressedTable<B>> {
    let damaged = |source| StoreError::compressed(path, source);
    let mut t = CompressedTable::parse(bytes).map_err(damaged)?;
    let raw_xxh3 = match listed {
        Some((_, raw)) => raw.xxh3,
        None => t
            .header()
            .raw_checksum_of(kind)
            .unwrap_or_else(|| t.header().raw_checksum()),
    };
    t.check_table(&Expected {
        rules: *rules,
        kind,
        layer: n,
        raw_xxh3,
    })
    .map_err(damaged)?;
    Ok(t)
}

/// The size a stored table's file must have: a raw table one byte per
/// position, a listed compressed file the size the manifest records (an
/// unlisted one whatever it has).
pub fn expected_size(stored: &Stored, n: u32) -> Result<(u64, SizeOf)> {
    Ok(match stored {
        Stored::Raw(_) => (layer_size(n), SizeOf::Layer),
        Stored::Compressed {
            listed: Some((c, _)),
            ..
        } => (c.bytes, SizeOf::Recorded),
        Stored::Compressed { path, listed: None } => {
            (fs::metadata(path).at(path)?.len(), SizeOf::Opened)
        }
    })
}

/// Checks the files of the recorded layer `e` against the manifest `m`:
/// sizes, then checksums (a table kept only compressed has its compressed
/// file checked). `Ok(None)` when they all match; else the damage found
/// (an [`ErrorKind::Damaged`](crate::error::ErrorKind::Damaged) error, or
/// [`StoreError::NoEnvelope`] when `envelope` is asked for and the layer lacks
/// it). Reads every table the layer lists, whole.
pub fn check_layer(
    dir: &Path,
    m: &Manifest,
    e: &LayerEntry,
    envelope: bool,
) -> Result<Option<Error>> {
    if envelope && (e.lower.is_none() || e.upper.is_none()) {
        return Ok(Some(
            StoreError::NoEnvelope {
                dir: dir.to_path_buf(),
                layer: e.seeds,
            }
            .into(),
        ));
    }
    for (kind, f) in e.files() {
        let stored = match locate(dir, Some(m), e.seeds, kind) {
            Ok(Some(s)) => s,
            Ok(None) => unreachable!("the manifest lists {}", f.name),
            Err(err) if err.is_damage() => return Ok(Some(err)),
            Err(err) => return Err(err),
        };
        let (want, what) = match &stored {
            Stored::Compressed {
                listed: Some((c, _)),
                ..
            } => (c.xxh3, "the manifest's checksum of the compressed file"),
            _ => (f.xxh3, "the manifest's checksum of the table"),
        };
        if let Some(damage) = check_file(&stored, e.seeds, want, what)? {
            return Ok(Some(damage));
        }
    }
    Ok(None)
}

/// Checks a stored file's size and checksum: `Ok(Some(damage))` when
/// either differs.
pub fn check_file(
    stored: &Stored,
    n: u32,
    want: Checksum,
    what: &'static str,
) -> Result<Option<Error>> {
    let path = stored.path();
    let (expected, of) = expected_size(stored, n)?;
    let found = fs::metadata(path).at(path)?.len();
    if found != expected {
        return Ok(Some(
            StoreError::Size {
                path: path.to_path_buf(),
                expected,
                found,
                of,
            }
            .into(),
        ));
    }
    let sum = checksum_file(path)?;
    Ok((sum != want).then(|| {
        StoreError::Checksum {
            path: path.to_path_buf(),
            what,
            expected: want,
            found: sum,
        }
        .into()
    }))
}

//! The store's error: a folder, its manifest and its tables.

use super::ManifestFault;
use crate::codec::CompressError;
use crate::error::{mixed, Cause, Error, ErrorKind, SizeOf};
use crate::format::Checksum;
use std::io;
use std::path::{Path, PathBuf};

/// What a folder of tables holds that a call cannot use: a layer, folder or file missing, a manifest not ours or of other rules, a table damaged (the wrong size or checksum, values no score takes, a compressed file's fault with its path), the folder locked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The folder (or the tables given in memory) lacks the layer.
    #[error("layer {layer} is not in {}", dir.display())]
    MissingLayer {
        /// The layer.
        layer: u32,
        /// The folder (`(memory)` for tables given in memory).
        dir: PathBuf,
        /// Whether the folder is a VU dataset folder.
        vu: bool,
    },
    /// A table handed over in memory has the wrong size.
    #[error(
        "layer {layer}: {table} table of {found} bytes, but the layer has {expected} positions"
    )]
    TableSize {
        /// The layer.
        layer: u32,
        /// `scores`, `lower` or `upper`.
        table: &'static str,
        /// Positions of the layer.
        expected: u64,
        /// Bytes given.
        found: u64,
    },
    /// The folder does not exist.
    #[error("{}: no such folder", .0.display())]
    NoSuchFolder(PathBuf),
    /// The path exists and is not a folder.
    #[error("{}: not a folder", .0.display())]
    NotAFolder(PathBuf),
    /// The folder holds no tables at all.
    #[error("{}: not a folder of tables (no manifest.json and no scores.N files)", .0.display())]
    NoTables(PathBuf),
    /// The folder has no manifest, so it is not one of ours.
    #[error("{}: no manifest.json: not a database folder of this library", .0.display())]
    NotOurs(PathBuf),
    /// The manifest is not one of ours, or is not valid.
    #[error("{}: not an awari-egdb manifest ({reason})", path.display())]
    ForeignManifest {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        reason: ManifestFault,
    },
    /// The manifest is ours, but for other rules or another format version.
    #[error("{}: built for {found}, not for {expected}", path.display())]
    OtherRules {
        /// The file.
        path: PathBuf,
        /// What it says.
        found: String,
        /// What this library builds.
        expected: String,
    },
    /// A folder's tables follow one rule set and the command asked for
    /// another.
    #[error("{}: its tables follow the {folder} rules, not {asked}{hint}", dir.display())]
    RulesDiffer {
        /// The folder.
        dir: PathBuf,
        /// The folder's rule set.
        folder: &'static str,
        /// The rule set asked for.
        asked: &'static str,
        /// What to do instead.
        hint: &'static str,
    },
    /// A folder without manifest whose compressed files name different
    /// rule sets in their headers.
    #[error(
        "{}: its compressed files name different rule sets ({}); a folder holds the tables of \
         one rule set", dir.display(), mixed(files)
    )]
    RulesMixed {
        /// The folder.
        dir: PathBuf,
        /// Each file that names one, and the rule set it names.
        files: Vec<(String, &'static str)>,
    },
    /// A folder that has our envelope tables (`lower.N`, `upper.N`) but no
    /// `manifest.json`: one of ours whose manifest was lost.
    #[error("{}: holds {file} but no manifest.json: a folder of ours whose manifest was lost", dir.display())]
    LostManifest {
        /// The folder.
        dir: PathBuf,
        /// An envelope table found there.
        file: String,
    },
    /// Tables of layers to build that the folder's manifest does not list.
    #[error(
        "{}: holds {} but its manifest does not list {}; a build does not replace tables it did \
         not write: `awari recover` lists them if they can be trusted, else move them out of \
         the folder",
        dir.display(), files.join(", "), if files.len() == 1 { "it" } else { "them" }
    )]
    Unlisted {
        /// The folder.
        dir: PathBuf,
        /// The files.
        files: Vec<String>,
    },
    /// The folder holds tables but no manifest, and none of our envelope
    /// tables: a VU dataset or another tool's folder; nothing is written
    /// there.
    #[error("{}: holds {file} but no manifest.json (a VU dataset or another tool's folder); refusing to write there", dir.display())]
    ForeignFolder {
        /// The folder.
        dir: PathBuf,
        /// A table file found there.
        file: String,
    },
    /// A layer was built without the envelope, which the call needs.
    #[error("{}: layer {layer} was built without the envelope (lower.{layer}, upper.{layer})", dir.display())]
    NoEnvelope {
        /// The folder.
        dir: PathBuf,
        /// The layer.
        layer: u32,
    },

    /// A table file has the wrong size.
    #[error("{}: {found} bytes, {}", path.display(), match of {
        SizeOf::Layer => format!("but the layer has {expected} positions"),
        SizeOf::Recorded => format!("but the manifest records {expected}"),
        SizeOf::Opened => format!("but it had {expected} when it was opened"),
    })]
    Size {
        /// The file.
        path: PathBuf,
        /// Bytes it should hold.
        expected: u64,
        /// Bytes it holds.
        found: u64,
        /// Where the expected size comes from.
        of: SizeOf,
    },
    /// A table the manifest lists is absent, and no compressed copy of it
    /// is listed either.
    #[error("{}: missing (the manifest lists it, and no compressed copy of it)", .0.display())]
    Missing(PathBuf),
    /// A file does not have the checksum it must have.
    #[error("{}: checksum {found}, expected {expected} ({what})", path.display())]
    Checksum {
        /// The file.
        path: PathBuf,
        /// What was checked, against what.
        what: &'static str,
        /// The checksum it must have.
        expected: Checksum,
        /// The checksum of what is there.
        found: Checksum,
    },
    /// A format 4 file that leaves "don't care" entries, read as a
    /// table: only a probe resolves its values to scores.
    #[error(
        "{}: the file leaves \"don't care\" entries, which only a probe resolves to scores (awari query)",
        .0.display()
    )]
    DontCare(PathBuf),
    /// A compressed file is damaged or holds another table.
    #[error("{}: {source}", path.display())]
    Compressed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: CompressError,
    },
    /// A table holds a value no score of its layer can take.
    #[error("{}: entry {index} holds {value}, outside -{layer}..={layer}", path.display())]
    BadValue {
        /// The table (its file, or `(memory)`).
        path: PathBuf,
        /// Its layer.
        layer: u32,
        /// The entry.
        index: u64,
        /// The value found.
        value: i8,
    },
    /// Another process holds the folder's lock.
    #[error("{}: another build, compress or recover is running in this folder (it holds build.lock)", .0.display())]
    Locked(PathBuf),
}

impl Cause for StoreError {
    fn kind(&self) -> ErrorKind {
        use StoreError::*;
        match self {
            Compressed {
                source: CompressError::Read(k),
                ..
            } if *k != io::ErrorKind::UnexpectedEof => ErrorKind::Io,
            Size { .. } | Missing(_) | Checksum { .. } | Compressed { .. } | BadValue { .. } => {
                ErrorKind::Damaged
            }
            Locked(_) => ErrorKind::Busy,
            _ => ErrorKind::Input,
        }
    }

    fn path(&self) -> Option<&Path> {
        use StoreError::*;
        match self {
            Size { path, .. }
            | Checksum { path, .. }
            | Compressed { path, .. }
            | BadValue { path, .. }
            | ForeignManifest { path, .. }
            | OtherRules { path, .. } => Some(path),
            Missing(p) | NoSuchFolder(p) | NotAFolder(p) | NoTables(p) | NotOurs(p) | Locked(p)
            | DontCare(p) => Some(p),
            MissingLayer { dir, .. }
            | RulesDiffer { dir, .. }
            | RulesMixed { dir, .. }
            | LostManifest { dir, .. }
            | Unlisted { dir, .. }
            | ForeignFolder { dir, .. }
            | NoEnvelope { dir, .. } => Some(dir),
            _ => None,
        }
    }
}

impl StoreError {
    /// A compressed file's fault at `path`, as the library's error.
    pub fn compressed(path: impl Into<PathBuf>, source: CompressError) -> Error {
        StoreError::Compressed {
            path: path.into(),
            source,
        }
        .into()
    }
}

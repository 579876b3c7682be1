//! The folder's file operations other than opening and writing tables:
//! creating the folder, the files of a layer, removing a file the
//! manifest no longer lists, and setting files aside under a free name.
//! The builder, `pack` and `recover` ask for these; none of them touches
//! a folder's files itself.

use super::{lock, Manifest, MANIFEST};
use crate::codec;
use crate::error::{AtPath, Result};
use crate::format::Kind;
use crate::store::StoreError;
use std::fs;
use std::path::{Path, PathBuf};

/// Creates the folder `dir` (and its parents) if it does not exist.
pub fn create_folder(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).at(dir)
}

/// The files of layer `n` in `dir`, listed or not: its raw tables and
/// their compressed copies, by name.
pub fn layer_files(dir: &Path, n: u32) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for kind in [Kind::Score, Kind::Lower, Kind::Upper] {
        let [copy, shared] = codec::copy_names(kind, n);
        for name in [kind.file_name(n), copy, shared] {
            if !names.contains(&name) && dir.join(&name).exists() {
                names.push(name);
            }
        }
    }
    names
}

/// Refuses to build the layers `todo` of `dir` (whose manifest is `m`)
/// over tables the folder holds but its manifest does not list
/// ([`StoreError::Unlisted`]): they were not written by a build of this folder
/// (or `awari recover` could not trust them), and a build never replaces
/// what it did not write. The layer a build stopped in the middle of
/// (the lock file says which) is its own and may be written again.
pub fn check_unlisted(dir: &Path, m: &Manifest, todo: &[u32]) -> Result<()> {
    let own = lock::interrupted_layer(dir);
    let files: Vec<String> = todo
        .iter()
        .filter(|&&n| m.layer(n).is_none() && Some(n) != own)
        .flat_map(|&n| layer_files(dir, n))
        .collect();
    if files.is_empty() {
        return Ok(());
    }
    Err(StoreError::Unlisted {
        dir: dir.to_path_buf(),
        files,
    }
    .into())
}

/// Moves the file `name` of `dir` aside to `NAME.untrusted` (or
/// `NAME.untrusted.1`, ... if taken), keeping its bytes; the new name.
pub fn set_aside(dir: &Path, name: &str) -> Result<String> {
    let aside = (0..)
        .map(|i| match i {
            0 => format!("{name}.untrusted"),
            i => format!("{name}.untrusted.{i}"),
        })
        .find(|a| !dir.join(a).exists())
        .expect("a free name");
    let to = dir.join(&aside);
    fs::rename(dir.join(name), &to).at(&to)?;
    Ok(aside)
}

/// The length of the file at `path` (a table of another folder, an
/// oracle's, say, before it is opened with the length it must have).
pub fn file_len(path: &Path) -> std::io::Result<u64> {
    fs::metadata(path).map(|m| m.len())
}

/// Removes the file `name` of `dir` if it is there; whether it was. The
/// caller syncs the folder ([`super::sync_dir`]) once it has removed what
/// it removes.
pub fn remove_file(dir: &Path, name: &str) -> Result<bool> {
    let p = dir.join(name);
    if !p.exists() {
        return Ok(false);
    }
    fs::remove_file(&p).at(&p)?;
    Ok(true)
}

/// Moves a damaged `manifest.json` aside to `manifest.json.damaged` (or
/// `.damaged.1`, ... if taken), keeping its bytes; the new path.
pub fn set_aside_damaged_manifest(dir: &Path) -> Result<PathBuf> {
    let to = (0..)
        .map(|i| match i {
            0 => dir.join(format!("{MANIFEST}.damaged")),
            i => dir.join(format!("{MANIFEST}.damaged.{i}")),
        })
        .find(|p| !p.exists())
        .expect("a free name");
    fs::rename(dir.join(MANIFEST), &to).at(&to)?;
    Ok(to)
}

/// The text of `dir`'s manifest as it is on disk, unchecked (for what can
/// still be read from a damaged one), if it can be read.
pub fn damaged_manifest_text(dir: &Path) -> Option<String> {
    fs::read_to_string(dir.join(MANIFEST)).ok()
}

//! The folder's file operations other than opening and writing tables:
//! creating the folder, the files of a layer, whether a raw table is
//! there, removing the files the manifest no longer lists (or the raw
//! tables it lists a compressed copy of), and setting files aside under a
//! free name.
//! The builder, `pack` and `recover` ask for these; none of them touches
//! a folder's files itself.

use super::{lock, Manifest, Stored, MANIFEST};
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
    for kind in [Kind::Score, Kind::Lower, Kind::Upper, Kind::Distance] {
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

/// Removes the file `name` of `dir` if it is there; whether it was.
fn remove(dir: &Path, name: &str) -> Result<bool> {
    let p = dir.join(name);
    if !p.exists() {
        return Ok(false);
    }
    fs::remove_file(&p).at(&p)?;
    Ok(true)
}

/// Removes those of the files `names` of `dir` that its manifest `m`, as
/// stored, no longer lists (the compressed copies of a layer that is
/// rebuilt, or of a copy replaced), and syncs the folder; the names
/// removed. A name `m` still lists stays.
pub fn remove_unlisted(dir: &Path, m: &Manifest, names: &[String]) -> Result<Vec<String>> {
    let mut removed = Vec::new();
    for name in names.iter().filter(|name| !m.lists(name)) {
        if remove(dir, name)? {
            removed.push(name.clone());
        }
    }
    if !removed.is_empty() {
        super::sync_dir(dir)?;
    }
    Ok(removed)
}

/// Removes the raw tables of layer `n` of `dir` whose compressed copy its
/// manifest `m`, as stored, lists (`awari pack --remove-raw`), and syncs
/// the folder; the names removed. A table without a listed copy stays.
pub fn remove_raw_with_copies(dir: &Path, m: &Manifest, n: u32) -> Result<Vec<String>> {
    let mut removed = Vec::new();
    let Some(l) = m.layer(n) else {
        return Ok(removed);
    };
    for (_, f) in l.files().filter(|(_, f)| m.compressed(&f.name).is_some()) {
        if remove(dir, &f.name)? {
            removed.push(f.name.clone());
        }
    }
    super::sync_dir(dir)?;
    Ok(removed)
}

/// The raw table `name` of `dir` (a table's file name, as
/// [`Kind::file_name`] gives it), when a file of that name is there.
pub fn raw_file(dir: &Path, name: &str) -> Option<Stored> {
    let path = dir.join(name);
    path.exists().then_some(Stored::Raw(path))
}

/// The raw table `name` of `dir`, which must be there
/// ([`StoreError::Missing`] when it is not).
pub fn raw_file_required(dir: &Path, name: &str) -> Result<Stored> {
    raw_file(dir, name).ok_or_else(|| StoreError::Missing(dir.join(name)).into())
}

/// Whether `dir` holds a manifest (readable or not).
pub fn has_manifest(dir: &Path) -> bool {
    dir.join(MANIFEST).exists()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::AWARI;
    use crate::store::{CompressedEntry, FileEntry, LayerEntry};

    /// A folder holding layer 3's scores and a copy of them, listed or not.
    fn folder(copy_listed: bool) -> (tempfile::TempDir, Manifest) {
        let dir = tempfile::tempdir().unwrap();
        let mut m = Manifest::new(&AWARI);
        let file = FileEntry {
            name: "scores.3".into(),
            bytes: 364,
            xxh3: crate::format::Checksum(1),
        };
        m.put(LayerEntry::from_tables(3, file, "test"));
        if copy_listed {
            m.put_compressed(CompressedEntry {
                seeds: 3,
                raw: "scores.3".into(),
                name: "scores.3.zst".into(),
                bytes: 10,
                xxh3: crate::format::Checksum(2),
                block_size: 64,
                level: 0,
                dictionary: 0,
                version: 4,
                block_bytes: 0,
            });
        }
        for name in ["scores.3", "scores.3.zst", "tables.5.zst"] {
            fs::write(dir.path().join(name), b"x").unwrap();
        }
        (dir, m)
    }

    #[test]
    fn only_what_the_manifest_does_not_list_is_removed() {
        let (dir, m) = folder(true);
        let names: Vec<String> = ["scores.3", "scores.3.zst", "tables.5.zst", "absent.zst"]
            .map(String::from)
            .into();
        let removed = remove_unlisted(dir.path(), &m, &names).unwrap();
        assert_eq!(removed, ["tables.5.zst"]);
        assert!(dir.path().join("scores.3").exists());
        assert!(dir.path().join("scores.3.zst").exists());
        assert!(!dir.path().join("tables.5.zst").exists());
    }

    #[test]
    fn a_raw_table_goes_only_when_its_copy_is_listed() {
        let (dir, m) = folder(false);
        assert!(remove_raw_with_copies(dir.path(), &m, 3)
            .unwrap()
            .is_empty());
        assert!(dir.path().join("scores.3").exists());
        let (dir, m) = folder(true);
        assert_eq!(
            remove_raw_with_copies(dir.path(), &m, 3).unwrap(),
            ["scores.3"]
        );
        assert!(!dir.path().join("scores.3").exists());
        assert!(remove_raw_with_copies(dir.path(), &m, 4)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn a_raw_table_is_found_only_when_its_file_is_there() {
        let (dir, _) = folder(false);
        let found = raw_file(dir.path(), "scores.3").expect("there");
        assert!(!found.is_compressed());
        assert_eq!(found.path(), dir.path().join("scores.3"));
        assert!(raw_file(dir.path(), "scores.4").is_none());
        let e = raw_file_required(dir.path(), "scores.4").unwrap_err();
        assert!(
            matches!(e.cause(), Some(StoreError::Missing(p)) if p.ends_with("scores.4")),
            "{e}"
        );
    }
}

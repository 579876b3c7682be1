//! Opening a layer's tables from a folder, where [`store::locate`] finds
//! them (ours: the raw table, else its compressed copy; a VU folder:
//! `scores.n`), and checking their checksums against the manifest.

use super::tables::{Layer, ProbeTable};
use super::{Database, Source};
use crate::error::Result;
use crate::format::Kind;
use crate::index::IndexError;
use crate::rules::{Rules, MAX_SEEDS};
use crate::store::StoreError;
use crate::store::{self, Access, Manifest, Stored, StoredTable};
use std::path::Path;
use std::sync::OnceLock;

impl Database {
    /// Opens every available layer now and verifies the checksums of our
    /// tables ([`verify_layer`](Self::verify_layer)); returns the layers
    /// checked.
    pub fn verify(&self) -> Result<Vec<u32>> {
        let layers = self.layers();
        for &n in &layers {
            self.verify_layer(n)?;
        }
        Ok(layers)
    }

    /// Opens layer `n` and, in a folder of ours, reads each of its tables
    /// whole and compares its checksum with the manifest's: a raw table's
    /// bytes, or a compressed table's file (whose header carries the raw
    /// table's checksum, checked on opening). Returns whether there were
    /// checksums to verify (`false` for a VU folder or tables in memory).
    pub fn verify_layer(&self, n: u32) -> Result<bool> {
        if n > MAX_SEEDS {
            return Err(IndexError::NoSuchLayer(n).into());
        }
        self.layer(n)?;
        let Source::Ours { dir, manifest } = &self.source else {
            return Ok(false);
        };
        let Some(e) = manifest.layer(n) else {
            return Ok(false);
        };
        match store::check_layer(dir, manifest, e, false)? {
            Some(damage) => Err(damage),
            None => Ok(true),
        }
    }

    pub(super) fn load(&self, n: u32) -> Result<Layer> {
        let missing = |dir: &Path, vu| StoreError::MissingLayer {
            layer: n,
            dir: dir.to_path_buf(),
            vu,
        };
        let (dir, manifest) = match &self.source {
            Source::Ours { dir, manifest } => {
                manifest.layer(n).ok_or_else(|| missing(dir, false))?;
                (dir, Some(manifest))
            }
            Source::Vu { dir } => (dir, None),
            Source::Memory => return Err(missing(Path::new("(memory)"), false).into()),
        };
        let open = |kind| {
            open_table(
                dir,
                manifest,
                &self.rules,
                n,
                kind,
                self.mapped,
                self.verify_on_load,
            )
        };
        let score = open(Kind::Score)?.ok_or_else(|| missing(dir, manifest.is_none()))?;
        let envelope = match (open(Kind::Lower)?, open(Kind::Upper)?) {
            (Some(lo), Some(hi)) => Some((lo, hi)),
            _ => None,
        };
        // A folder without manifest is read for its scores alone.
        let dist = match manifest {
            Some(_) => open(Kind::Distance)?,
            None => None,
        };
        Ok(Layer {
            score,
            envelope,
            dist,
        })
    }
}

/// Opens table `kind` of layer `n` of `dir` (manifest `m`, none for a VU
/// folder) through [`StoredTable::find`]: mapped with `mapped` (the
/// caller's promise, see [`Database::open_mapped`]), else read with
/// `pread`. Sizes and compressed headers are checked; with `verify`, the
/// checksum of the file against the manifest too. `Ok(None)` where the
/// folder does not hold the table.
#[allow(clippy::too_many_arguments)]
fn open_table(
    dir: &Path,
    m: Option<&Manifest>,
    rules: &Rules,
    n: u32,
    kind: Kind,
    mapped: bool,
    verify: bool,
) -> Result<Option<ProbeTable>> {
    if let (true, Some(m)) = (verify, m) {
        let Some(stored) = store::locate(dir, Some(m), n, kind)? else {
            return Ok(None);
        };
        let f = m
            .layer(n)
            .and_then(|e| e.files().find(|(k, _)| *k == kind).map(|(_, f)| f.clone()))
            .expect("located in the manifest");
        let (want, what) = match &stored {
            Stored::Compressed {
                listed: Some((c, _)),
                ..
            } => (c.xxh3, "the manifest's checksum of the compressed file"),
            _ => (f.xxh3, "the manifest's checksum of the table"),
        };
        if let Some(damage) = store::check_file(&stored, n, want, what)? {
            return Err(damage);
        }
    }
    let access = if mapped {
        // SAFETY: `mapped` is set only by `open_mapped`, whose caller
        // promised that the folder's files are not truncated meanwhile.
        unsafe { Access::mapped() }
    } else {
        Access::READ
    };
    let Some(table) = StoredTable::find(dir, m, n, kind, Some(rules), access)? else {
        return Ok(None);
    };
    Ok(Some(match table.into_mapped() {
        Ok(map) => ProbeTable::Raw(Box::new(map)),
        Err(table) => ProbeTable::Stored {
            table,
            whole: OnceLock::new(),
        },
    }))
}

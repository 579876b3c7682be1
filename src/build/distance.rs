//! The distance table of a recorded layer ([`crate::solve::distance`]):
//! computed from the layer's scores and its lower layers' (raw tables
//! mapped, compressed ones read block by block), written atomically as
//! `dist.n`, and its entry for the manifest.

use super::BuildObserver;
use crate::error::Result;
use crate::format::Kind;
use crate::index::layer_size;
use crate::rules::Rules;
use crate::solve::distance::{solve_distance, Scores};
use crate::store::{self, FileEntry, Manifest, StoredTable};
use std::path::Path;
use std::time::Instant;

/// The score tables of layers `0..=n` as the distance pass reads them.
struct Tables(Vec<Option<StoredTable>>);

impl Scores for Tables {
    #[inline]
    fn score(&self, k: u32, g: u64) -> Result<i8> {
        match &self.0[k as usize] {
            Some(t) => t.get(g),
            None => unreachable!("layer {k} is opened before the pass"),
        }
    }
    #[inline]
    fn prefetch(&self, k: u32, g: u64) {
        if let Some(m) = self.0[k as usize].as_ref().and_then(|t| t.mapped()) {
            crate::mem::prefetch(&m[g as usize]);
        }
    }
}

/// Computes and writes `dist.n` for layer `n` of `dir`, whose scores and
/// lower layers `m` lists (the caller holds the folder's lock); its file
/// entry and the seconds it took.
pub(super) fn write_distance(
    dir: &Path,
    m: &Manifest,
    n: u32,
    rules: &Rules,
    obs: &dyn BuildObserver,
) -> Result<(FileEntry, f64)> {
    let t0 = Instant::now();
    obs.phase("distance");
    // SAFETY: the builder holds the folder's lock, which every writer of
    // the folder takes, so no one truncates its tables meanwhile (see the
    // mapping contract in `store::map`).
    let access = unsafe { store::Access::mapped() };
    let mut tables = Vec::new();
    for k in 0..=n {
        tables.push(if k == 47 {
            None
        } else {
            StoredTable::find(dir, Some(m), k, Kind::Score, Some(rules), access)?
        });
    }
    if let Some(k) = (0..=n).find(|&k| k != 47 && tables[k as usize].is_none()) {
        return Err(store::StoreError::MissingLayer {
            layer: k,
            dir: dir.to_path_buf(),
            vu: false,
        }
        .into());
    }
    let table = solve_distance(n, rules, &Tables(tables), obs)?;
    let name = Kind::Distance.file_name(n);
    let path = dir.join(&name);
    store::write_atomic(&path, &table)?;
    Ok((
        FileEntry {
            name,
            bytes: layer_size(n),
            xxh3: crate::format::Checksum::of(&table),
        },
        t0.elapsed().as_secs_f64(),
    ))
}

//! [`decompress_folder`](super::decompress_folder) on a folder of scores
//! without manifest (the `scores.n.zst` files an engine ships): each
//! `scores.n` kept only compressed written back, checked against the raw
//! table's checksum its compressed file's header carries; then a
//! manifest that names the rule set the headers name and lists every
//! layer of the folder (the raw tables name no rule set of their own).

use super::{Action, DecompressOptions, PackObserver, PackReport, PackedFile};
use crate::error::Result;
use crate::format::{Checksum, Kind};
use crate::index::layer_size;
use crate::rules::MAX_SEEDS;
use crate::store::StoreError;
use crate::store::{
    self, Access, CompressedEntry, FileEntry, FolderLock, LayerEntry, Manifest, StoredTable,
};
use std::path::Path;
use std::time::Instant;

/// Tables are read with `pread`.
const READ: Access = Access::READ;

/// How a layer written back from its compressed copy was trusted (the
/// manifest's `recovered`).
const FROM_HEADER: &str = "the checksum in its compressed file's header (awari decompress)";

/// How a raw table found without a compressed copy was listed.
const UNCHECKED: &str =
    "none: found without a compressed copy, listed by awari decompress with the checksum of its bytes";

/// Writes back every `scores.n` of `opts.layers` that the folder `dir`
/// (without manifest) keeps only compressed, or whose raw file does not
/// match the checksum in its compressed file's header; then writes the
/// manifest: the rule set the headers name (files that name several are
/// refused before anything is written, [`StoreError::RulesMixed`]), every
/// layer the folder holds, and the compressed files kept. With
/// `remove_compressed`, the compressed files of the layers written back
/// are removed once the manifest is stored.
pub(super) fn decompress_scores_only(
    dir: &Path,
    opts: &DecompressOptions,
    obs: &dyn PackObserver,
) -> Result<PackReport> {
    // A VU dataset folder (raw scores only) is not written to at all, not
    // even the lock.
    let any = (0..=MAX_SEEDS).any(|n| store::unlisted_copies(dir, n, Kind::Score).next().is_some());
    if !any {
        return Err(StoreError::NotOurs(dir.to_path_buf()).into());
    }
    // No header that names a rule set: opening the files says why.
    let rules = store::headers_rules(dir)?.unwrap_or_default();
    let _lock = FolderLock::acquire(dir)?;
    let mut manifest = Manifest::new(&rules);
    let mut report = PackReport::default();
    let mut remove = Vec::new();
    for n in 0..=MAX_SEEDS {
        let raw = Kind::Score.file_name(n);
        let Some(copy) = store::unlisted_copies(dir, n, Kind::Score).next() else {
            if let Some(stored) = store::raw_file(dir, &raw) {
                let t = StoredTable::open(&stored, n, Kind::Score, None, READ)?;
                let (xxh3, histogram) = summed(&t, n)?;
                obs.warning(&format!(
                    "{raw} has no compressed copy to check it against: listed with the checksum \
                     of its bytes"
                ));
                let file = FileEntry {
                    name: raw,
                    bytes: layer_size(n),
                    xxh3,
                };
                manifest.put(LayerEntry {
                    score_histogram: histogram,
                    ..LayerEntry::from_tables(n, file, UNCHECKED)
                });
            }
            continue;
        };
        // Checked as a table of the rule set the headers name: that it
        // holds the scores of layer n.
        let t = StoredTable::open(&copy, n, Kind::Score, Some(&rules), READ)?;
        let header = t.header().expect("a compressed copy");
        let want = header
            .raw_checksum_of(Kind::Score)
            .unwrap_or_else(|| header.raw_checksum());
        let zst = t.path().to_path_buf();
        let name = file_name(&zst);
        let t0 = Instant::now();
        let asked = opts.layers.contains(&n);
        let (action, histogram) = write_back(dir, &raw, n, &t, want, asked, obs)?;
        let file = FileEntry {
            name: raw.clone(),
            bytes: layer_size(n),
            xxh3: want,
        };
        manifest.put(LayerEntry {
            score_histogram: histogram,
            ..LayerEntry::from_tables(n, file, FROM_HEADER)
        });
        if asked && opts.remove_compressed {
            remove.push(name.clone());
        } else {
            let sum = store::checksum_file(&zst)?;
            let len = t.file_len();
            manifest.put_compressed(CompressedEntry::from_header(
                n, &raw, &name, len, sum, header,
            ));
        }
        if let Some(action) = action {
            let done = PackedFile {
                layer: n,
                raw,
                name,
                action,
                raw_bytes: layer_size(n),
                bytes: t.file_len(),
                seconds: t0.elapsed().as_secs_f64(),
            };
            obs.done(&done);
            report.files.push(done);
        }
    }
    // Every raw table is in place: the manifest, then the compressed files
    // it no longer lists.
    manifest.store(dir)?;
    store::remove_unlisted(dir, &manifest, &remove)?;
    for name in remove {
        obs.removed(&name);
        report.removed.push(name);
    }
    Ok(report)
}

/// The raw table `name` of `dir` (layer `n`) against the compressed copy `t`,
/// whose header says its checksum is `want`: left as it is when it
/// matches; else, when `asked` (its layer is to be decompressed), written
/// again from `t` (atomically, checked against `want`). What was done
/// (`None`: not asked, nothing written) and the layer's score histogram
/// (empty where the raw table was neither read nor written).
fn write_back(
    dir: &Path,
    name: &str,
    n: u32,
    t: &StoredTable,
    want: Checksum,
    asked: bool,
    obs: &dyn PackObserver,
) -> Result<(Option<Action>, Vec<u64>)> {
    if let Some(stored) = store::raw_file(dir, name) {
        // A raw table of the wrong size or with a value outside -n..=n
        // does not match.
        let found =
            StoredTable::open(&stored, n, Kind::Score, None, READ).and_then(|r| summed(&r, n));
        let found = match found {
            Ok(f) => Some(f),
            Err(e)
                if matches!(
                    e.cause(),
                    Some(StoreError::Size { .. } | StoreError::BadValue { .. })
                ) =>
            {
                None
            }
            Err(e) => return Err(e),
        };
        match found {
            Some((sum, histogram)) if sum == want => {
                return Ok((asked.then_some(Action::AlreadyRaw), histogram))
            }
            _ if asked => obs.warning(&format!(
                "{name} does not match the checksum in {}'s header; writing it again from it",
                file_name(t.path())
            )),
            _ => {
                obs.warning(&format!(
                    "{name} does not match the checksum in {}'s header (its layer is not \
                     decompressed now)",
                    file_name(t.path())
                ));
                return Ok((None, Vec::new()));
            }
        }
    }
    if !asked {
        return Ok((None, Vec::new()));
    }
    let raw = &dir.join(name);
    obs.start(name, t.compressed().map_or(0, |c| c.blocks()));
    let mut histogram = vec![0u64; 2 * n as usize + 1];
    let mut failed = None;
    store::write_atomic_checked(raw, layer_size(n), want, |start, buf| {
        if failed.is_some() {
            return;
        }
        let counted = t
            .read_at(start, buf)
            .and_then(|()| crate::stats::histogram(n, buf, start, raw));
        match counted {
            Ok(h) => histogram.iter_mut().zip(h).for_each(|(x, y)| *x += y),
            Err(e) => failed = Some(e),
        }
    })
    .map_err(|e| match (e.cause(), failed) {
        (Some(StoreError::Checksum { .. }), Some(source)) => source,
        _ => e,
    })?;
    Ok((Some(Action::Decompressed), histogram))
}

/// The checksum of a raw table of layer `n` and its score histogram, read
/// in steps.
fn summed(t: &StoredTable, n: u32) -> Result<(Checksum, Vec<u64>)> {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut histogram = vec![0u64; 2 * n as usize + 1];
    t.read_steps(crate::codec::STEP, |start, b| {
        h.update(b);
        let part = crate::stats::histogram(n, b, start, t.path())?;
        histogram.iter_mut().zip(part).for_each(|(x, y)| *x += y);
        Ok(())
    })?;
    Ok((Checksum(h.digest()), histogram))
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default()
}

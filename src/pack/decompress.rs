//! Writing a folder's raw tables back from their compressed copies:
//! [`decompress_folder`], and the builder's entry to the same work.

use super::{
    open_listed, open_locked, remove_unlisted, Action, DecompressOptions, PackObserver, PackReport,
    PackedFile,
};
use crate::error::Result;
use crate::store::StoreError;
use crate::store::{self, Access, LayerEntry, Manifest, StoredTable};
use std::path::Path;
use std::time::Instant;

/// Raw tables are checked with `pread`.
const READ: Access = Access::READ;

/// Writes back the raw tables of our folder `dir` from their compressed
/// copies, where a raw table is missing or does not match its checksum;
/// each is written to a temporary file and renamed into place only when it
/// has the manifest's checksum. With `remove_compressed`, the compressed
/// files are removed (and forgotten) once their raw tables are in place.
///
/// A folder of scores only without manifest (the `scores.n.zst` files an
/// engine ships) has each `scores.n` kept only compressed written back,
/// checked against the raw table's checksum its compressed file's header
/// carries, and gets a manifest that names the rule set the headers name
/// and lists its layers (see `scores_only.rs`).
pub fn decompress_folder(
    dir: &Path,
    opts: &DecompressOptions,
    obs: &dyn PackObserver,
) -> Result<PackReport> {
    if matches!(store::read_folder(dir)?, store::Folder::Vu) {
        return super::scores_only::decompress_scores_only(dir, opts, obs);
    }
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
        let raw = store::raw_file(dir, &f.name);
        let raw_ok = match &raw {
            None => false,
            Some(raw) => match StoredTable::open(raw, l.seeds, kind, None, READ) {
                Ok(t) => t.len() == f.bytes && t.checksum()? == f.xxh3,
                Err(e) if matches!(e.cause(), Some(StoreError::Size { .. })) => false,
                Err(e) => return Err(e),
            },
        };
        let raw_path = dir.join(&f.name);
        let action = if raw_ok {
            Action::AlreadyRaw
        } else {
            if raw.is_some() {
                obs.warning(&format!(
                    "{} does not match its checksum; writing it again from {}",
                    f.name, c.name
                ));
            }
            let (t, zst) = open_listed(dir, &rules, &c, kind, f, true)?;
            obs.start(&f.name, t.blocks());
            // A file with don't-care entries: its scores resolved.
            let resolved = match t.header().is_dont_care() {
                true => Some(super::dont_care::resolved_scores(dir, l.seeds)?),
                false => None,
            };
            let mut failed = None;
            store::write_atomic_checked(&raw_path, f.bytes, f.xxh3, |start, buf| {
                if failed.is_some() {
                    return;
                }
                if let Some(r) = &resolved {
                    buf.copy_from_slice(&r[start as usize..start as usize + buf.len()]);
                    return;
                }
                match t.decompress_range(start, buf) {
                    Ok(()) => obs.advance((buf.len() as u64).div_ceil(c.block_size as u64)),
                    Err(e) => failed = Some(e),
                }
            })
            .map_err(|e| match (e.cause(), failed.clone()) {
                (Some(StoreError::Checksum { .. }), Some(source)) => {
                    StoreError::compressed(zst, source)
                }
                _ => e,
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

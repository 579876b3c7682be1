//! Compressing a folder's tables a file per table (formats 1 and 2), or
//! a layer at a time through [`compress_v3`](super::compress_v3) (format
//! 3): [`compress_folder`], and the builder's entries to the same work.

use super::compress_v3::compress_layer_models;
use super::{
    open_listed, open_locked, open_raw, open_written, remove_unlisted, Action, CompressOptions,
    PackObserver, PackReport, PackedFile, Quiet,
};
use crate::codec::{encode_steps, file_name, Settings};
use crate::error::{AtPath, Error, Result};
use crate::format::{Checksum, Kind};
use crate::rules::Rules;
use crate::store::{self, CompressedEntry, FileEntry, LayerEntry, Manifest, Mapped};
use std::fs;
use std::path::Path;
use std::time::Instant;

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
        let v3 = s.version >= 3;
        if v3 {
            compress_layer_models(dir, manifest, l, s, obs, &mut report)?;
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
                let (map, raw_path) = open_raw(dir, l.seeds, kind, f)?;
                let raw = Source::Mapped(&map, &raw_path, f.xxh3);
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
                block_bytes: 0,
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
        let (map, raw_path) = open_raw(dir, layer, kind, f)?;
        let raw = Source::Mapped(&map, &raw_path, f.xxh3);
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
        block_bytes: 0,
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
    Mapped(&'a Mapped, &'a Path, Checksum),
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

/// Writes the compressed file through the store's [`store::AtomicFile`],
/// whose temporary file is verified
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
    let raw = source.bytes();
    let mut w = store::AtomicFile::create(path)?;
    let tmp = w.temp_path().to_path_buf();
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
    w.sync()?;
    let written = open_written(&tmp, layer, kind);
    if let (Ok(t), Source::Mapped(_, raw_path, expected)) = (&written, source) {
        let found = t.header().raw_checksum();
        if found != expected {
            return Err(Error::Checksum {
                path: raw_path.to_path_buf(),
                what: "the manifest's checksum of the table",
                expected,
                found,
            });
        }
    }
    let t = written?;
    t.verify_steps(Some(raw), &|k| obs.advance(k), &|at, k| {
        source.release(at, k);
        // Only this step's blocks are resident; releasing the rest of the
        // mapping, not resident, costs little.
        t.source().release();
    })
    .map_err(|e| Error::compressed(&tmp, e))?;
    w.commit()?;
    Ok(bytes)
}

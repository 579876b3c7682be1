//! Compressing a folder's tables, a layer at a time: [`compress_folder`],
//! and the builder's entry to the same work. Each layer's three tables
//! (or its scores alone) go into one format 4 file, written through
//! [`store::AtomicFile`] and verified table by table before it is renamed
//! into place and listed in the manifest.

use super::{
    open_listed, open_locked, open_raw, open_written, remove_unlisted, Action, CompressOptions,
    PackObserver, PackReport, PackedFile,
};
use crate::codec::v4::{self, V4Settings};
use crate::codec::{file_name, Settings, FORMAT_VERSION};
use crate::error::{AtPath, Result};
use crate::format::{Checksum, Kind};
use crate::pack::PackError;
use crate::store::StoreError;
use crate::store::{self, CompressedEntry, FileEntry, LayerEntry, Manifest, Mapped};
use std::io;
use std::path::Path;
use std::time::Instant;

/// Compresses the tables of our folder `dir` into `.zst` files beside
/// them (format 4: a layer's three tables in `tables.n.zst`, or its scores
/// alone in `scores.n.zst`), verifies each file written (every block
/// decoded and compared with the raw tables) before recording it in the
/// manifest, and with `remove_raw` removes a layer's raw tables once its
/// file is written and verified. A layer already compressed with the same
/// settings is verified and kept; a copy in another form or with other
/// settings is replaced (and removed once no entry lists it). Blocks are
/// coded and checked in parallel on the rayon pool.
pub fn compress_folder(
    dir: &Path,
    opts: &CompressOptions,
    obs: &dyn PackObserver,
) -> Result<PackReport> {
    check_settings(opts.settings)?;
    let (_lock, mut manifest, layers) = open_locked(dir, &opts.layers)?;
    compress_layers(dir, &mut manifest, &layers, opts, obs)
}

/// Compression settings checked, as an [`PackError::Setting`].
pub(crate) fn check_settings(s: Settings) -> Result<()> {
    s.check()
        .map_err(|(name, reason)| PackError::Setting { name, reason }.into())
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
    let mut report = PackReport::default();
    for l in layers {
        compress_layer(dir, manifest, l, opts.settings, obs, &mut report)?;
        if opts.remove_raw {
            // (The scores-only form leaves the envelope's tables as they
            // are.)
            for name in store::remove_raw_with_copies(dir, manifest, l.seeds)? {
                obs.removed(&name);
                report.removed.push(name);
            }
        }
    }
    Ok(report)
}

/// [`compress_layers`]' work on layer `l`: one file for the layer's three
/// tables (`tables.n.zst`, the full form), or for its scores alone
/// (`scores.n.zst`) with [`Settings::scores_only`] or a layer without the
/// envelope. The file is written through a temporary file, and each
/// table it holds is decompressed and compared with the raw table (whose
/// checksum must be the manifest's) before it is renamed into place and
/// listed once per table.
fn compress_layer(
    dir: &Path,
    manifest: &mut Manifest,
    l: &LayerEntry,
    s: Settings,
    obs: &dyn PackObserver,
    report: &mut PackReport,
) -> Result<()> {
    let t0 = Instant::now();
    let rules = manifest.rules();
    let full = !s.scores_only && l.lower.is_some() && l.upper.is_some();
    let files: Vec<(Kind, FileEntry)> = l
        .files()
        .filter(|(k, _)| *k != Kind::Distance && (full || *k == Kind::Score))
        .map(|(k, f)| (k, f.clone()))
        .collect();
    // A table whose checksum is not the manifest's is damaged, named so.
    let as_listed = |f: &FileEntry, found: Checksum| -> Result<()> {
        if found == f.xxh3 {
            return Ok(());
        }
        Err(StoreError::Checksum {
            path: dir.join(&f.name),
            what: "the manifest's checksum of the table",
            expected: f.xxh3,
            found,
        }
        .into())
    };
    let name = if full {
        crate::codec::layer_file_name(l.seeds)
    } else {
        file_name(&Kind::Score.file_name(l.seeds))
    };
    let path = dir.join(&name);
    let raw_names = files
        .iter()
        .map(|(_, f)| f.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let raw_bytes: u64 = files.iter().map(|(_, f)| f.bytes).sum();
    let blocks = l.positions.div_ceil(s.block_size as u64);
    // Already there with these settings: verify it.
    let listed: Vec<Option<CompressedEntry>> = files
        .iter()
        .map(|(_, f)| manifest.compressed(&f.name).cloned())
        .collect();
    let same = listed.iter().all(|c| {
        c.as_ref().is_some_and(|c| {
            c.version == FORMAT_VERSION
                && c.name == name
                && c.block_size == s.block_size
                && c.block_bytes == s.block_bytes
        })
    });
    // The same only in the same form (don't care or not).
    let same = same
        && open_listed(
            dir,
            &rules,
            listed[0].as_ref().expect("listed"),
            Kind::Score,
            &files[0].1,
            false,
        )
        .is_ok_and(|(t, _)| t.header().is_dont_care() == s.dont_care);
    // Which of the layer's raw tables are there, asked once.
    let raw: Vec<bool> = files
        .iter()
        .map(|(_, f)| store::raw_file(dir, &f.name).is_some())
        .collect();
    let raw_present = raw.iter().all(|&r| r);
    if same {
        obs.start(&name, blocks * files.len() as u64);
        let checked = files.iter().zip(&listed).try_for_each(|((kind, f), c)| {
            let c = c.as_ref().expect("listed");
            let (t, path) = open_listed(dir, &rules, c, *kind, f, *kind == files[0].0)?;
            t.verify(None, &|k| obs.advance(k))
                .map_err(|e| StoreError::compressed(path, e))
        });
        match checked {
            Ok(()) => {
                let c = listed[0].as_ref().expect("listed");
                let done = PackedFile {
                    layer: l.seeds,
                    raw: raw_names,
                    name: name.clone(),
                    action: Action::AlreadyCompressed,
                    raw_bytes,
                    bytes: c.bytes,
                    seconds: t0.elapsed().as_secs_f64(),
                };
                obs.done(&done);
                report.files.push(done);
                return Ok(());
            }
            Err(e) if raw_present => {
                obs.warning(&format!("{e}; compressing layer {} again", l.seeds))
            }
            Err(e) => return Err(e),
        }
    }
    // The tables to code: raw (mapped), else decompressed from the copies
    // listed.
    enum Held {
        Mapped(Mapped),
        Bytes(Vec<u8>),
    }
    let mut held = Vec::new();
    for (((kind, f), c), &raw) in files.iter().zip(&listed).zip(&raw) {
        // The raw table when it is there or no copy is listed (then it is
        // missing, which `open_raw` says).
        let copy = c.as_ref().filter(|_| !raw);
        if let Some(c) = copy {
            let (old, path_old) = open_listed(dir, &rules, c, *kind, f, true)?;
            let bytes = if old.header().is_dont_care() {
                super::dont_care::resolved_scores(dir, l.seeds)?
            } else {
                old.decompress_all()
                    .map_err(|e| StoreError::compressed(path_old, e))?
            };
            held.push(Held::Bytes(bytes));
        } else {
            held.push(Held::Mapped(open_raw(dir, l.seeds, *kind, f)?.0));
        }
    }
    let table = |k: usize| -> &[u8] {
        match &held[k] {
            Held::Mapped(m) => m,
            Held::Bytes(b) => b,
        }
    };
    let release = |start: usize, len: usize| {
        for h in &held {
            if let Held::Mapped(m) = h {
                m.release_range(start, len);
            }
        }
    };
    obs.start(&name, blocks * (2 + files.len() as u64));
    let mut w = store::AtomicFile::create(&path)?;
    let tmp = w.temp_path().to_path_buf();
    // The values a don't-care file stores (what decoding it gives).
    let mut stored: Option<Vec<u8>> = None;
    let v4 = V4Settings {
        block_bytes: s.block_bytes,
        block_cap: s.block_size,
        ..Default::default()
    };
    let file = if s.dont_care {
        let (file, values) =
            super::dont_care::encode_layer(dir, &rules, l.seeds, table(0), v4, &tmp)?;
        stored = Some(values);
        file
    } else {
        let coded = if full {
            let env_bytes = v4::envelope_block_bytes(s.block_bytes);
            v4::encode_full(table(0), table(1), table(2), &rules, l.seeds, v4, env_bytes)
        } else {
            v4::encode_scores(table(0), &rules, l.seeds, v4)
        };
        match coded {
            Ok(file) => file,
            // Values no table of the layer holds: a table that differs from
            // the manifest's is damaged, and named as such.
            Err(e) => {
                for (k, (_, f)) in files.iter().enumerate() {
                    as_listed(f, Checksum::of(table(k)))?;
                }
                return Err(e).at(&tmp);
            }
        }
    };
    obs.advance(2 * blocks);
    io::Write::write_all(&mut w, &file).at(&tmp)?;
    let bytes = file.len() as u64;
    drop(file);
    w.sync()?;
    crate::fault::point("mid-compress", &name);
    for (k, (kind, f)) in files.iter().enumerate() {
        let mut t = open_written(&tmp, l.seeds, *kind)?;
        t.serve(*kind)
            .map_err(|e| StoreError::compressed(&tmp, e))?;
        as_listed(f, t.header().raw_checksum())?;
        let values = stored.as_deref().unwrap_or(table(k));
        t.verify_steps(Some(values), &|b| obs.advance(b), &|at, len| {
            release(at, len);
            t.source().release();
        })
        .map_err(|e| StoreError::compressed(&tmp, e))?;
    }
    w.commit()?;
    let xxh3 = store::checksum_file(&path)?;
    let mut old = Vec::new();
    for (_, f) in &files {
        old.push(manifest.compressed(&f.name).map(|c| c.name.clone()));
        manifest.put_compressed(CompressedEntry {
            seeds: l.seeds,
            raw: f.name.clone(),
            name: name.clone(),
            bytes,
            xxh3,
            block_size: s.block_size,
            level: 0,
            dictionary: 0,
            version: FORMAT_VERSION,
            block_bytes: s.block_bytes,
        });
    }
    manifest.store(dir)?;
    for o in old {
        if o.as_deref() != Some(name.as_str()) {
            remove_unlisted(dir, manifest, o, obs, report)?;
        }
    }
    let done = PackedFile {
        layer: l.seeds,
        raw: raw_names,
        name,
        action: Action::Compressed,
        raw_bytes,
        bytes,
        seconds: t0.elapsed().as_secs_f64(),
    };
    obs.done(&done);
    report.files.push(done);
    Ok(())
}

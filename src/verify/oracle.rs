//! The oracle comparison: our `scores.n` against another folder's (the VU
//! dataset), on pinned positions, both streamed; our tables are
//! checksummed on the way.

use super::STEP;
use crate::error::{Result, SizeOf};
use crate::format::Kind;
use crate::index::layer_size;
use crate::rules::MAX_SEEDS;
use crate::store::StoreError;
use crate::store::{self, Access, FileEntry, FileTable, Manifest, StoredTable};
use rayon::prelude::*;
use serde::Serialize;
use std::ops::RangeInclusive;
use std::path::Path;

/// One position where two tables differ.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Disagreement {
    /// Seeds.
    pub seeds: u32,
    /// Goedel index.
    pub index: u64,
    /// The board.
    pub pits: [u8; 12],
    /// Our value.
    pub ours: i8,
    /// The oracle's value.
    pub theirs: i8,
}

/// The outcome of comparing one layer with the oracle.
#[derive(Clone, Debug, Serialize)]
pub struct LayerVerdict {
    /// Seeds.
    pub seeds: u32,
    /// Positions in the layer.
    pub positions: u64,
    /// Set when the layer could not be compared (missing or wrong-size
    /// oracle file, layer not built by us); the counts are then zero.
    pub skipped: Option<String>,
    /// Whether we built the layer (a layer we did not build is skipped).
    pub built: bool,
    /// Pinned positions compared.
    pub pinned: u64,
    /// Pinned positions where both agree.
    pub pinned_agree: u64,
    /// Pinned positions where they differ: a real disagreement.
    pub pinned_disagree: u64,
    /// Unpinned positions (for information: they show how the oracle scores
    /// endless play).
    pub unpinned: u64,
    /// Unpinned positions where both agree.
    pub unpinned_agree: u64,
    /// The first pinned disagreements.
    pub first_disagreements: Vec<Disagreement>,
    /// Whether our files matched their checksums while streamed.
    pub checksums_ok: bool,
}

/// Compares our `scores.n` with the oracle's (the VU dataset: awari
/// folders only), on pinned positions, for every
/// layer in `layers` that we built (47 is skipped). Both are streamed
/// sequentially; our files are checksummed on the way. A table of ours
/// whose raw file is absent is streamed from its compressed copy, block by
/// block, and the decompressed bytes are checksummed.
pub fn compare_with_oracle(
    ours: &Path,
    oracle: &Path,
    layers: RangeInclusive<u32>,
    max_listed: usize,
) -> Result<Vec<LayerVerdict>> {
    let manifest = Manifest::load_ours(ours)?;
    super::awari_only(ours, &manifest.rules(), "verify --oracle")?;
    // The oracle is the VU database: a folder of ours of another rule set
    // is no oracle.
    let named = match Manifest::load(oracle) {
        Ok(Some(m)) => Some(m.rules()),
        _ => crate::store::headers_rules(oracle).ok().flatten(),
    };
    if let Some(r) = named {
        super::awari_only(oracle, &r, "verify --oracle")?;
    }
    let mut out = Vec::new();
    for n in layers {
        if n == 47 || n > MAX_SEEDS {
            continue;
        }
        let positions = layer_size(n);
        let mut v = LayerVerdict {
            seeds: n,
            positions,
            skipped: None,
            built: true,
            pinned: 0,
            pinned_agree: 0,
            pinned_disagree: 0,
            unpinned: 0,
            unpinned_agree: 0,
            first_disagreements: Vec::new(),
            checksums_ok: true,
        };
        let Some(entry) = manifest.layer(n) else {
            v.built = false;
            v.skipped = Some(format!("layer {n} is not built in {}", ours.display()));
            out.push(v);
            continue;
        };
        let (Some(lo_e), Some(hi_e)) = (&entry.lower, &entry.upper) else {
            return Err(StoreError::NoEnvelope {
                dir: ours.to_path_buf(),
                layer: n,
            }
            .into());
        };
        let theirs = oracle.join(Kind::Score.file_name(n));
        let their_len = match store::file_len(&theirs) {
            Ok(len) => len,
            Err(e) => {
                v.skipped = Some(format!("{}: {e}", theirs.display()));
                out.push(v);
                continue;
            }
        };
        // The dataset's scores.48 may hold the initial position as one more
        // entry; it is never compared.
        if their_len != positions && !(n == 48 && their_len == positions + 1) {
            v.skipped = Some(format!(
                "{}: {their_len} bytes, but layer {n} has {positions} positions",
                theirs.display()
            ));
            out.push(v);
            continue;
        }
        compare_layer(
            ours,
            &manifest,
            &theirs,
            [
                (Kind::Score, &entry.scores),
                (Kind::Lower, lo_e),
                (Kind::Upper, hi_e),
            ],
            &mut v,
            max_listed,
        )?;
        out.push(v);
    }
    Ok(out)
}

/// One of our tables, opened where [`crate::store::locate`] finds it.
fn open_ours(dir: &Path, manifest: &Manifest, n: u32, kind: Kind) -> Result<StoredTable> {
    let rules = manifest.rules();
    let found = StoredTable::find(dir, Some(manifest), n, kind, Some(&rules), Access::READ)?;
    Ok(found.ok_or(StoreError::NoEnvelope {
        dir: dir.to_path_buf(),
        layer: n,
    })?)
}

fn compare_layer(
    dir: &Path,
    manifest: &Manifest,
    theirs: &Path,
    files: [(Kind, &FileEntry); 3],
    v: &mut LayerVerdict,
    max_listed: usize,
) -> Result<()> {
    let n = v.seeds;
    let mut ours = Vec::new();
    for (kind, _) in files {
        ours.push(open_ours(dir, manifest, n, kind)?);
    }
    let their_len = store::file_len(theirs).unwrap_or(0);
    let oracle = FileTable::open(theirs, their_len, SizeOf::Opened)?;
    let files = files.map(|(_, f)| f);
    let mut bufs = vec![vec![0u8; STEP]; 4];
    let mut hashers: Vec<_> = (0..3).map(|_| xxhash_rust::xxh3::Xxh3::new()).collect();
    let mut start = 0u64;
    while start < v.positions {
        let want = (v.positions - start).min(STEP as u64) as usize;
        for (t, buf) in ours.iter().zip(&mut bufs) {
            t.read_at(start, &mut buf[..want])?;
        }
        oracle.read_at(start, &mut bufs[3][..want])?;
        bufs[..3]
            .par_iter()
            .zip(hashers.par_iter_mut())
            .for_each(|(b, h)| h.update(&b[..want]));
        let (sc, lo, hi, th) = (&bufs[0], &bufs[1], &bufs[2], &bufs[3]);
        let counts = (0..want)
            .into_par_iter()
            .with_min_len(1 << 16)
            .fold(
                || [0u64; 4],
                |mut c, i| {
                    if lo[i] == hi[i] {
                        c[0] += 1;
                        c[1] += u64::from(sc[i] == th[i]);
                    } else {
                        c[2] += 1;
                        c[3] += u64::from(sc[i] == th[i]);
                    }
                    c
                },
            )
            .reduce(|| [0u64; 4], |a, b| std::array::from_fn(|k| a[k] + b[k]));
        v.pinned += counts[0];
        v.pinned_agree += counts[1];
        v.unpinned += counts[2];
        v.unpinned_agree += counts[3];
        if counts[1] < counts[0] && v.first_disagreements.len() < max_listed {
            // This step holds disagreements: list the first ones in order.
            let found = (0..want).filter(|&i| lo[i] == hi[i] && sc[i] != th[i]);
            for i in found.take(max_listed - v.first_disagreements.len()) {
                let g = start + i as u64;
                v.first_disagreements.push(Disagreement {
                    seeds: n,
                    index: g,
                    pits: crate::index::unrank_unchecked(n, g).0,
                    ours: sc[i] as i8,
                    theirs: th[i] as i8,
                });
            }
        }
        start += want as u64;
    }
    v.pinned_disagree = v.pinned - v.pinned_agree;
    v.checksums_ok = files
        .iter()
        .zip(&hashers)
        .all(|(f, h)| crate::format::Checksum(h.digest()) == f.xxh3);
    Ok(())
}

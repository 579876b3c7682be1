//! What a layer looks like: its positions won, drawn and lost for the side
//! to move, the score histogram, the pinned share and the build figures
//! (`awari stats`).
//!
//! In our folders the histogram and pinned count come from the manifest
//! (the builder records them; `awari recover` computes them from the
//! tables); in a folder of scores only (a VU dataset folder, or the
//! scores-only `scores.N.zst` files an engine ships) the histogram is
//! counted from the scores, streamed a window at a time
//! ([`count_layer`]), and the pinned count, which needs the envelope, is
//! absent.

use crate::error::Result;
use crate::format::Kind;
use crate::index::layer_size;
use crate::probe::Database;
use crate::store::StoreError;
use rayon::prelude::*;
use serde::Serialize;

/// Build figures of a layer, as the manifest records them.
#[derive(Clone, Debug, Serialize)]
pub struct BuildFigures {
    /// Wall time of the layer's build.
    pub wall_seconds: f64,
    /// Positions per second.
    pub positions_per_second: f64,
    /// Peak resident memory while it was built.
    pub peak_rss_bytes: u64,
    /// Settlements per position.
    pub settlements_per_position: f64,
    /// Threads used.
    pub threads: usize,
}

/// The figures of one layer.
#[derive(Clone, Debug, Serialize)]
pub struct LayerStats {
    /// Seeds.
    pub seeds: u32,
    /// Positions.
    pub positions: u64,
    /// Positions whose score is above 0 (the side to move wins more seeds
    /// than it loses from here on).
    pub won: u64,
    /// Positions whose score is 0.
    pub drawn: u64,
    /// Positions whose score is below 0.
    pub lost: u64,
    /// Positions per score, from `-seeds` to `seeds`.
    pub histogram: Vec<u64>,
    /// Positions whose score does not depend on the cycle rule, when known.
    pub pinned: Option<u64>,
    /// Build figures, for a layer we built (not a recovered one).
    pub build: Option<BuildFigures>,
}

impl LayerStats {
    fn from_histogram(n: u32, histogram: Vec<u64>) -> LayerStats {
        let mid = n as usize;
        LayerStats {
            seeds: n,
            positions: layer_size(n),
            won: histogram[mid + 1..].iter().sum(),
            drawn: histogram[mid],
            lost: histogram[..mid].iter().sum(),
            histogram,
            pinned: None,
            build: None,
        }
    }

    /// A share of the layer's positions.
    pub fn share(&self, count: u64) -> f64 {
        count as f64 / self.positions as f64
    }
}

/// Counts the scores of entries `first..` of a table of layer `n`
/// (positions per score, from `-n` to `n`); a value outside `-n..=n` is
/// an [`StoreError::BadValue`] of the table at `path`.
pub(crate) fn histogram(
    n: u32,
    table: &[u8],
    first: u64,
    path: &std::path::Path,
) -> Result<Vec<u64>> {
    const CHUNK: usize = 1 << 20;
    let w = 2 * n as usize + 1;
    table
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(k, c)| {
            let mut h = vec![0u64; w];
            for (i, &b) in c.iter().enumerate() {
                let v = b as i8;
                match usize::try_from(v as i32 + n as i32).ok().filter(|&j| j < w) {
                    Some(j) => h[j] += 1,
                    None => {
                        return Err(StoreError::BadValue {
                            path: path.to_path_buf(),
                            layer: n,
                            index: first + (k * CHUNK + i) as u64,
                            value: v,
                        }
                        .into())
                    }
                }
            }
            Ok(h)
        })
        .try_reduce(
            || vec![0u64; w],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                Ok(a)
            },
        )
}

/// The figures of layer `n` of `db` (which must hold it).
pub fn layer_stats(db: &Database, n: u32) -> Result<LayerStats> {
    if let Some(e) = db.manifest().and_then(|m| m.layer(n)) {
        if e.score_histogram.len() == 2 * n as usize + 1 {
            let mut s = LayerStats::from_histogram(n, e.score_histogram.clone());
            s.pinned = e.pinned;
            s.build = e.recovered.is_none().then_some(BuildFigures {
                wall_seconds: e.wall_seconds,
                positions_per_second: e.positions_per_second,
                peak_rss_bytes: e.peak_rss_bytes,
                settlements_per_position: e.settlements_per_position,
                threads: e.threads,
            });
            return Ok(s);
        }
    }
    let (h, pinned) = count_layer(db, n)?;
    let mut s = LayerStats::from_histogram(n, h);
    s.pinned = pinned;
    Ok(s)
}

/// Bytes of each table [`count_layer`] reads at a time.
pub const STREAM_WINDOW: u64 = 1 << 24;

/// The score histogram of layer `n` of `db` (positions per score, from
/// `-n` to `n`) and, with the envelope, its pinned count (`lower ==
/// upper`), counted from the tables streamed [`STREAM_WINDOW`] entries at
/// a time: nothing of them is kept. A score outside `-n..=n` is an
/// [`StoreError::BadValue`].
pub fn count_layer(db: &Database, n: u32) -> Result<(Vec<u64>, Option<u64>)> {
    let dir = db.dir().unwrap_or(std::path::Path::new("(memory)"));
    let path = match db.dir() {
        Some(d) => d.join(Kind::Score.file_name(n)),
        None => Kind::Score.file_name(n).into(),
    };
    let size = layer_size(n);
    let envelope = db.has_envelope(n)?;
    let window = STREAM_WINDOW.min(size) as usize;
    let mut bufs = vec![vec![0u8; window]; if envelope { 3 } else { 1 }];
    let mut h = vec![0u64; 2 * n as usize + 1];
    let mut pinned = envelope.then_some(0u64);
    let mut at = 0;
    while at < size {
        let k = (size - at).min(window as u64) as usize;
        for (b, kind) in bufs.iter_mut().zip([Kind::Score, Kind::Lower, Kind::Upper]) {
            if !db.read_range(n, kind, at, &mut b[..k])? {
                return Err(StoreError::MissingLayer {
                    layer: n,
                    dir: dir.into(),
                    vu: db.is_vu(),
                }
                .into());
            }
        }
        let part = histogram(n, &bufs[0][..k], at, &path)?;
        h.iter_mut().zip(part).for_each(|(x, y)| *x += y);
        if let (Some(p), [_, lo, hi]) = (pinned.as_mut(), &bufs[..]) {
            *p += lo[..k]
                .par_chunks(1 << 20)
                .zip(hi[..k].par_chunks(1 << 20))
                .map(|(a, b)| a.iter().zip(b).filter(|(x, y)| x == y).count() as u64)
                .sum::<u64>();
        }
        at += k as u64;
    }
    Ok((h, pinned))
}

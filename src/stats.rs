//! What a layer looks like: its positions won, drawn and lost for the side
//! to move, the score histogram, the pinned share and the build figures
//! (`awari stats`).
//!
//! In our folders the histogram and pinned count come from the manifest
//! (the builder records them; `awari recover` computes them from the
//! tables); in a VU dataset folder the histogram is counted from
//! `scores.N` (read whole) and the pinned count is unknown.

use crate::error::{Error, Result};
use crate::format::Kind;
use crate::index::layer_size;
use crate::probe::Database;
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

/// Counts the scores of a table of layer `n` (positions per score, from
/// `-n` to `n`); a value outside `-n..=n` is an [`Error::BadValue`] of
/// the table at `path`.
pub(crate) fn histogram(n: u32, table: &[u8], path: &std::path::Path) -> Result<Vec<u64>> {
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
                        return Err(Error::BadValue {
                            path: path.to_path_buf(),
                            layer: n,
                            index: (k * CHUNK + i) as u64,
                            value: v,
                        })
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
    let dir = db.dir().unwrap_or(std::path::Path::new("(memory)"));
    let table = db.table(n, Kind::Score)?.ok_or(Error::MissingLayer {
        layer: n,
        dir: dir.into(),
        vu: db.is_vu(),
    })?;
    // A VU scores.48 may hold one more byte (the initial position).
    let table = &table[..table.len().min(layer_size(n) as usize)];
    let h = histogram(n, table, &dir.join(Kind::Score.file_name(n)))?;
    Ok(LayerStats::from_histogram(n, h))
}

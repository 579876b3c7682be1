//! The best exit of every position of a layer, from the exact scores of
//! the layers below: what a "don't care" format 4 file
//! ([`crate::codec::v4::dont_care`]) is filled from.

use crate::codec::v4::dont_care::{encode_dont_care, NO_EXIT};
use crate::codec::v4::V4Settings;
use crate::error::{AtPath, Result};
use crate::format::Kind;
use crate::index::{layer_size, rank, LayerIter};
use crate::probe::Database;
use crate::rules::Rules;
use crate::store::StoreError;
use rayon::prelude::*;
use std::path::Path;

/// Positions handled by one task.
const CHUNK: u64 = 1 << 16;

/// The best exit of every position of layer `n` under `rules`
/// ([`NO_EXIT`] where it has none), each capture's child valued by
/// `below(layer, index)`, the exact score of a lower layer.
pub fn best_exits(n: u32, rules: &Rules, below: &(dyn Fn(u32, u64) -> i8 + Sync)) -> Vec<i8> {
    let size = layer_size(n);
    let mut out = vec![NO_EXIT; size as usize];
    out.par_chunks_mut(CHUNK as usize)
        .enumerate()
        .for_each(|(c, o)| {
            let start = c as u64 * CHUNK;
            for (g, p) in LayerIter::range(n, start, start + o.len() as u64) {
                let e = p.exits(rules);
                let best: Result<_, ()> = e.best(n, |k, q| Ok(below(k, rank(q)) as i32));
                if let Ok(Some(b)) = best {
                    o[(g - start) as usize] = b as i8;
                }
            }
        });
    out
}

/// The don't-care format 4 file of layer `n` of the folder `dir` (whose
/// lock the caller holds) from its raw scores `scores`, and the values it
/// stores: each position's best exit valued with the exact scores of the
/// layers below, read through a [`Database`] of the folder (a lower
/// layer in a don't-care file is resolved whole; every lower table is
/// held in memory or mapped while the layer is coded).
pub(super) fn encode_layer(
    dir: &Path,
    rules: &Rules,
    n: u32,
    scores: &[u8],
    v4: V4Settings,
    tmp: &Path,
) -> Result<(Vec<u8>, Vec<u8>)> {
    // SAFETY: the caller holds the folder's lock, which every writer of
    // the folder takes (see `store::map`).
    let db = unsafe { Database::open_mapped(dir)? };
    let mut below: Vec<&[u8]> = Vec::new();
    for k in 0..n {
        below.push(match k {
            47 => &[],
            _ => db
                .table(k, Kind::Score)?
                .ok_or_else(|| StoreError::MissingLayer {
                    layer: k,
                    dir: dir.to_path_buf(),
                    vu: false,
                })?,
        });
    }
    let exits = best_exits(n, rules, &|k, g| below[k as usize][g as usize] as i8);
    encode_dont_care(scores, &exits, rules, n, v4).at(tmp)
}

/// The scores of layer `n` of the folder `dir` (whose lock the caller
/// holds) whose compressed file leaves don't-care entries, resolved.
pub(super) fn resolved_scores(dir: &Path, n: u32) -> Result<Vec<u8>> {
    // SAFETY: as in `encode_layer`.
    let db = unsafe { Database::open_mapped(dir)? };
    Ok(db
        .table(n, Kind::Score)?
        .map(<[u8]>::to_vec)
        .unwrap_or_default())
}

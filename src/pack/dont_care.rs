//! The best exit of every position of a layer, from the exact scores of
//! the layers below: what a "don't care" format 4 file
//! ([`crate::codec::v4::dont_care`]) is filled from.

use crate::codec::v4::dont_care::NO_EXIT;
use crate::index::{layer_size, rank, LayerIter};
use crate::rules::Rules;
use rayon::prelude::*;

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
                let best: Result<_, ()> =
                    e.best(n, |k, q| Ok(below(k, rank(q)) as i32));
                if let Ok(Some(b)) = best {
                    o[(g - start) as usize] = b as i8;
                }
            }
        });
    out
}

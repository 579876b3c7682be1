//! The forward Bellman check: every stored score and envelope bound of a
//! layer recomputed from its children and compared.

use crate::error::Result;
use crate::format::Kind;
use crate::index::{layer_size, rank, LayerIter};
use crate::probe::Database;
use crate::rules::{Position, Rules};
use rayon::prelude::*;
use serde::Serialize;
use std::sync::Mutex;

/// One stored value that its children contradict.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct BellmanMismatch {
    /// Seeds.
    pub seeds: u32,
    /// Goedel index.
    pub index: u64,
    /// The board.
    pub pits: [u8; 12],
    /// `scores`, `lower` or `upper`.
    pub table: &'static str,
    /// What is stored.
    pub stored: i8,
    /// What the children give.
    pub recomputed: i8,
}

/// The Bellman check of one layer.
#[derive(Clone, Debug, Serialize)]
pub struct BellmanVerdict {
    /// Seeds.
    pub seeds: u32,
    /// Positions checked.
    pub positions: u64,
    /// Whether the envelope was checked too.
    pub envelope: bool,
    /// Mismatching values.
    pub mismatches: u64,
    /// The first of them.
    pub first_mismatches: Vec<BellmanMismatch>,
}

/// Recomputes every stored score (and envelope bound) of layer `n` forward
/// from its children and compares: `score(P) = max over legal moves of
/// (captures - score(child))` (`-n` without a move; a child whose mover has
/// no seeds scores minus its seeds), and likewise `lower` from the
/// children's `upper` and `upper` from their `lower`.
pub fn bellman_check(db: &Database, n: u32, max_listed: usize) -> Result<BellmanVerdict> {
    let size = layer_size(n);
    // Every layer the check reads, mapped (and checksummed) up front.
    let mut tables: Vec<[Option<&[u8]>; 3]> = Vec::new();
    for k in 0..=n {
        tables.push(if k == 47 {
            [None; 3]
        } else {
            [
                db.table(k, Kind::Score)?,
                db.table(k, Kind::Lower)?,
                db.table(k, Kind::Upper)?,
            ]
        });
    }
    let envelope = tables[n as usize][1].is_some() && tables[n as usize][2].is_some();
    let get = |k: u32, t: usize, g: u64| -> i32 {
        tables[k as usize][t].map_or(0, |b| b[g as usize] as i8 as i32)
    };
    let listed = Mutex::new(Vec::new());
    let chunk = 1u64 << 16;
    let mismatches: u64 = (0..size.div_ceil(chunk))
        .into_par_iter()
        .map(|c| {
            let mut bad = 0u64;
            for (g, p) in LayerIter::range(n, c * chunk, (c + 1) * chunk) {
                let want = forward(&p, db.rules(), envelope, &get);
                for (t, name) in ["scores", "lower", "upper"].iter().enumerate() {
                    if t > 0 && !envelope {
                        continue;
                    }
                    let stored = get(n, t, g);
                    if stored != want[t] {
                        bad += 1;
                        let mut l = listed.lock().expect("list lock");
                        if l.len() < max_listed {
                            l.push(BellmanMismatch {
                                seeds: n,
                                index: g,
                                pits: p.0,
                                table: name,
                                stored: stored as i8,
                                recomputed: want[t] as i8,
                            });
                        }
                    }
                }
            }
            bad
        })
        .sum();
    let mut first = listed.into_inner().expect("list lock");
    first.sort_by_key(|m| (m.index, m.table));
    Ok(BellmanVerdict {
        seeds: n,
        positions: size,
        envelope,
        mismatches,
        first_mismatches: first,
    })
}

/// Score, lower and upper of `p` recomputed from its children, read with
/// `get(layer, table, index)` (table 0 score, 1 lower, 2 upper).
/// A position without a legal move ends the game, each side taking its
/// own row ([`Position::final_score`]).
fn forward(
    p: &Position,
    rules: &Rules,
    envelope: bool,
    get: &impl Fn(u32, usize, u64) -> i32,
) -> [i32; 3] {
    let n = p.seeds() as i32;
    let mut best = [i32::MIN; 3];
    let mut any = false;
    for m in p.moves(rules).legal() {
        any = true;
        let c = m.captured as i32;
        let left = n - c;
        let child = if m.child.mover_seeds() == 0 {
            [-left; 3]
        } else {
            let g = rank(&m.child);
            let s = get(left as u32, 0, g);
            if envelope {
                [s, get(left as u32, 1, g), get(left as u32, 2, g)]
            } else {
                [s; 3]
            }
        };
        best[0] = best[0].max(c - child[0]);
        best[1] = best[1].max(c - child[2]);
        best[2] = best[2].max(c - child[1]);
    }
    if !any {
        return [p.final_score(); 3];
    }
    best
}

//! The score of a position whose table leaves "don't care" entries
//! ([`crate::codec::v4::dont_care`]): the larger of the stored value and
//! the position's best exit, each capture's child probed in its own layer
//! (and resolved the same way if that layer's table is a don't-care one).
//!
//! The children are searched with a bound, like alpha-beta: a child's
//! stored value is a lower bound on its score, so a capture worth at most
//! `c - stored` that cannot beat the best found so far is not resolved;
//! one that can is resolved only as far as the bound it must beat.

use super::tables::ProbeTable;
use super::Database;
use crate::error::Result;
use crate::format::Kind;
use crate::index::{rank, LayerIter};
use crate::rules::{Position, Rules};
use crate::store::StoreError;
use rayon::prelude::*;

/// One entry of a table as a probe reads it: the value stored, and
/// whether the table leaves don't-care entries (the score is then
/// `max(value, best exit)`, else it is the value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The value stored.
    pub value: i8,
    /// Whether the value is only a lower bound, met where it is below
    /// the best exit.
    pub dont_care: bool,
}

/// `min(score(p), beta)` for position `p` whose entry is `entry`, reading
/// the entries of capture children with `read(layer, child)`.
pub fn resolve<E>(
    rules: &Rules,
    p: &Position,
    entry: Entry,
    beta: i32,
    read: &mut impl FnMut(u32, &Position) -> std::result::Result<Entry, E>,
) -> std::result::Result<i32, E> {
    let mut best = entry.value as i32;
    if !entry.dont_care || best >= beta {
        return Ok(best.min(beta));
    }
    let n = p.seeds();
    let exits = p.exits(rules);
    if let Some(k) = exits.known {
        best = best.max(k);
    }
    // Each capture's bound `c - stored`, exact when the child's table is.
    let mut open = [(
        0i32,
        0u8,
        0usize,
        Entry {
            value: 0,
            dont_care: false,
        },
    ); 6];
    let mut m = 0;
    for (i, &(c, ref q)) in exits.captures().iter().enumerate() {
        let e = read(n - c as u32, q)?;
        let bound = c as i32 - e.value as i32;
        if e.dont_care {
            open[m] = (bound, c, i, e);
            m += 1;
        } else {
            best = best.max(bound);
        }
    }
    let open = &mut open[..m];
    open.sort_unstable_by_key(|b| std::cmp::Reverse(b.0));
    for &(bound, c, i, e) in open.iter() {
        if best >= beta || bound <= best {
            break;
        }
        let q = &exits.captures()[i].1;
        let c = c as i32;
        // c - min(score(q), c - best) = max(c - score(q), best).
        best = c - resolve(rules, q, e, c - best, read)?;
    }
    Ok(best.min(beta))
}

impl Database {
    /// The score at index `g` of layer `n`, position `p`: the entry, or
    /// for a don't-care table the entry resolved through `p`'s exits.
    #[inline]
    pub(super) fn score_entry(&self, n: u32, g: u64, p: &Position) -> Result<i8> {
        let t = &self.layer(n)?.score;
        if !t.is_dont_care() {
            let v = t.get(g)?;
            return self.checked(n, Kind::Score, g, v);
        }
        self.resolved(n, g, p)
    }

    /// The score at index `g` of layer `n`, position `p`, whose table
    /// leaves don't-care entries.
    fn resolved(&self, n: u32, g: u64, p: &Position) -> Result<i8> {
        let e = self.entry(n, g)?;
        let v = resolve(&self.rules, p, e, n as i32 + 1, &mut |k, q| {
            self.entry(k, rank(q))
        })?;
        Ok(v as i8)
    }

    /// Entry `g` of layer `n`'s scores, checked to be in `-n..=n`.
    fn entry(&self, n: u32, g: u64) -> Result<Entry> {
        let t = &self.layer(n)?.score;
        let dont_care = t.is_dont_care();
        let v = t.stored(g)?;
        Ok(Entry {
            value: self.checked(n, Kind::Score, g, v)?,
            dont_care,
        })
    }

    /// The scores of layer `n` whose table `t` leaves don't-care entries,
    /// every entry resolved with the exact tables of the layers below
    /// (resolved the same way where needed), and checked against the
    /// checksum of the raw scores in the file's header.
    pub(super) fn resolve_whole<'a>(&'a self, n: u32, t: &'a ProbeTable) -> Result<&'a [u8]> {
        let ProbeTable::Stored { table, whole } = t else {
            return t.whole();
        };
        if let Some(w) = whole.get() {
            return Ok(w);
        }
        let mut v = table.read_stored()?;
        let mut below: Vec<&[u8]> = Vec::new();
        for k in 0..n {
            below.push(if k == 47 {
                &[]
            } else {
                self.table(k, Kind::Score)?.unwrap_or(&[])
            });
        }
        let rules = self.rules;
        let chunk = 1usize << 16;
        v.par_chunks_mut(chunk).enumerate().for_each(|(c, out)| {
            let start = (c * chunk) as u64;
            for (g, p) in LayerIter::range(n, start, start + out.len() as u64) {
                let o = &mut out[(g - start) as usize];
                if *o as i8 as i32 >= n as i32 {
                    continue;
                }
                let best: std::result::Result<_, ()> = p.exits(&rules).best(n, |k, q| {
                    let b = below[k as usize];
                    Ok(b.get(rank(q) as usize).map_or(0, |&x| x as i8 as i32))
                });
                if let Ok(Some(b)) = best {
                    *o = (*o as i8).max(b as i8) as u8;
                }
            }
        });
        let found = crate::format::Checksum::of(&v);
        let h = table.header().expect("a compressed table");
        if found != h.raw_checksum() {
            return Err(StoreError::Checksum {
                path: table.path().to_path_buf(),
                what: "the header's checksum of the scores the don't-care file resolves to",
                expected: h.raw_checksum(),
                found,
            }
            .into());
        }
        let _ = whole.set(v);
        Ok(whole.get().expect("just set"))
    }
}

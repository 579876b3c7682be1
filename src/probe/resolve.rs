//! The score of a position whose table leaves "don't care" entries
//! ([`crate::codec::v4::dont_care`]): the larger of the stored value and
//! the position's best exit, each capture's child probed in its own layer
//! (and resolved the same way if that layer's table is a don't-care one).
//!
//! The children are searched with a bound, like alpha-beta: a child's
//! stored value is a lower bound on its score, so a capture worth at most
//! `c - stored` that cannot beat the best found so far is not resolved;
//! one that can is resolved only as far as the bound it must beat.

use crate::rules::{Position, Rules};

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
    read: &mut impl FnMut(u32, &Position) -> Result<Entry, E>,
) -> Result<i32, E> {
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
    let mut open = [(0i32, 0u8, 0usize, Entry { value: 0, dont_care: false }); 6];
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
    open.sort_unstable_by(|a, b| b.0.cmp(&a.0));
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

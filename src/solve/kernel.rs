//! The propagation kernel both solvers share: a settled position's
//! predecessors are visited a batch at a time, their state located (and
//! prefetched) for the whole batch before any is touched, so the cache
//! misses of a batch overlap. Each solver says how to locate a
//! predecessor's state and what a settlement does to it.

use crate::index::rank_packed;
use crate::rules::{Position, Rules};

/// A settlement whose predecessors are still to visit.
#[derive(Clone, Copy)]
pub struct Item {
    /// The settled position.
    pub pos: Position,
    /// Settled on the `<= -t` side.
    pub lose: bool,
}

/// Settlements handled together: their predecessors' state bytes are
/// prefetched before any is touched, so the cache misses overlap.
pub const BATCH: usize = 32;

/// A worker's scratch space for [`drain`].
#[derive(Default)]
pub struct Work {
    /// Settled positions whose predecessors are not yet visited.
    pub stack: Vec<Item>,
    /// Predecessors of a batch: state offset, position (packed), whether
    /// they were reached from a `<= -t` settlement.
    preds: Vec<(usize, u128, bool)>,
}

/// Propagates the settlements on `work`'s stack to closure under `rules`,
/// a batch at a time: the kernel ranks each predecessor as the un-moves
/// make it (packed), `locate(g)` gives the state offset of the one whose
/// Goedel number is `g` (and prefetches its state), so a batch's cache
/// misses overlap before `visit(offset, p, from_lose, stack)` updates each
/// predecessor and pushes what settles. Returns the settlements whose
/// predecessors were visited.
#[inline]
pub fn drain(
    work: &mut Work,
    rules: &Rules,
    locate: impl Fn(u64) -> usize,
    mut visit: impl FnMut(usize, Position, bool, &mut Vec<Item>),
) -> u64 {
    let Work { stack, preds } = work;
    let mut count = 0;
    while !stack.is_empty() {
        let from = stack.len().saturating_sub(BATCH);
        count += (stack.len() - from) as u64;
        preds.clear();
        for it in stack.drain(from..) {
            it.pos.for_each_predecessor_packed(rules, |p| {
                preds.push((locate(rank_packed(p)), p, it.lose))
            });
        }
        for &(i, p, from_lose) in preds.iter() {
            visit(i, Position::from_packed(p), from_lose, stack);
        }
    }
    count
}

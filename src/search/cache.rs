//! The search's cache of table scores read from compressed tables: a
//! position probed once is answered from here the next time (iterative
//! deepening reaches the same leaves again and again), not decoded again.
//!
//! One entry per slot, shared by the threads without locks. The key is
//! the position itself (twelve pits of 6 bits), not a hash, so a hit is
//! always the position asked for; an entry is two words, the first xor
//! the second, so a slot torn by two writers reads as another position
//! and misses.

use crate::rules::Position;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Bytes a slot.
pub(super) const SLOT_BYTES: usize = 16;

/// The cache: a power of two of slots.
pub(super) struct ScoreCache {
    slots: Vec<[AtomicU64; 2]>,
    mask: u64,
}

/// The position's pits packed 6 bits each: pits 0..10 in the first word
/// (66 bits, pit 10's top bits dropped), pit 10's top bits and pit 11 in
/// the second's low byte and a bit above it.
#[inline]
fn pack(p: &Position) -> (u64, u64) {
    let mut lo = 0u64;
    for (i, &s) in p.0[..10].iter().enumerate() {
        lo |= (s as u64) << (6 * i);
    }
    lo |= (p.0[10] as u64 & 0xf) << 60;
    let hi = (p.0[10] as u64 >> 4) | (p.0[11] as u64) << 2;
    (lo, hi)
}

impl ScoreCache {
    /// A cache of about `bytes` (at least 1,024 slots).
    pub fn new(bytes: usize) -> ScoreCache {
        let n = (bytes / SLOT_BYTES).max(1024);
        let n = if n.is_power_of_two() {
            n
        } else {
            n.next_power_of_two() / 2
        };
        ScoreCache {
            slots: (0..n)
                .map(|_| [AtomicU64::new(0), AtomicU64::new(0)])
                .collect(),
            mask: n as u64 - 1,
        }
    }

    /// The score of `p` (key `key`), if cached.
    #[inline]
    pub fn get(&self, p: &Position, key: u64) -> Option<i8> {
        let s = &self.slots[(key & self.mask) as usize];
        let data = s[1].load(Relaxed);
        let lo = s[0].load(Relaxed) ^ data;
        let (want_lo, want_hi) = pack(p);
        // Bit 16 marks a slot in use.
        (data & 0x1_00ff == (1 << 16 | want_hi) && lo == want_lo).then_some((data >> 8) as u8 as i8)
    }

    /// Caches the score `v` of `p` (key `key`).
    #[inline]
    pub fn put(&self, p: &Position, key: u64, v: i8) {
        let s = &self.slots[(key & self.mask) as usize];
        let (lo, hi) = pack(p);
        let data = 1 << 16 | (v as u8 as u64) << 8 | hi;
        s[0].store(lo ^ data, Relaxed);
        s[1].store(data, Relaxed);
    }

    /// Empties the cache.
    pub fn clear(&self) {
        for s in &self.slots {
            s[0].store(0, Relaxed);
            s[1].store(0, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_only_the_position_cached() {
        let c = ScoreCache::new(0);
        let p = Position([4, 0, 3, 1, 0, 0, 2, 0, 0, 5, 17, 48]);
        let mut q = p;
        q.0[11] = 47;
        c.put(&p, 7, -5);
        assert_eq!(c.get(&p, 7), Some(-5));
        // Same slot, another position: a miss.
        assert_eq!(c.get(&q, 7), None);
        // Pit 10's high bits count too.
        let mut r = p;
        r.0[10] = 1;
        assert_eq!(c.get(&r, 7), None);
        c.put(&q, 7, 3);
        assert_eq!(c.get(&p, 7), None);
        assert_eq!(c.get(&q, 7), Some(3));
        c.clear();
        assert_eq!(c.get(&q, 7), None);
    }
}

//! The transposition table: one entry per slot, shared by every search
//! thread without locks (the "xor trick": an entry is two words, the key
//! xor the data and the data, so a slot torn by two writers reads as a
//! different key and is ignored).

use crate::rules::Position;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What a stored value says about the position's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Bound {
    /// The value itself.
    Exact,
    /// At least the value (the search failed high).
    Lower,
    /// At most the value (the search failed low).
    Upper,
}

/// An entry read back.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub value: i32,
    pub depth: u32,
    pub bound: Bound,
    /// Whether the value rests on table values and rule ends alone (no
    /// position scored by the search's horizon): then it holds at any depth.
    pub proven: bool,
    /// The best (or refuting) pit, if one was found.
    pub pit: Option<u8>,
}

/// The table: a power of two of two-word slots.
pub(super) struct TranspositionTable {
    slots: Vec<[AtomicU64; 2]>,
    mask: u64,
}

/// The position's key: a 64-bit hash of its twelve pits.
#[inline]
pub(super) fn key(p: &Position) -> u64 {
    let b = p.0;
    let lo = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    let hi = u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as u64;
    mix(lo ^ mix(hi ^ 0x9e37_79b9_7f4a_7c15))
}

/// A 64-bit finalizer (the one of MurmurHash3).
#[inline]
fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

impl TranspositionTable {
    /// A table of about `bytes` (at least one slot; 16 bytes a slot).
    pub fn new(bytes: usize) -> TranspositionTable {
        let n = (bytes / 16).max(1).next_power_of_two();
        let n = if n * 16 > bytes.max(16) { n / 2 } else { n }.max(1);
        TranspositionTable {
            slots: (0..n)
                .map(|_| [AtomicU64::new(0), AtomicU64::new(0)])
                .collect(),
            mask: n as u64 - 1,
        }
    }

    /// Empties every slot.
    pub fn clear(&self) {
        for s in &self.slots {
            s[0].store(0, Relaxed);
            s[1].store(0, Relaxed);
        }
    }

    #[inline]
    fn slot(&self, key: u64) -> &[AtomicU64; 2] {
        &self.slots[(key & self.mask) as usize]
    }

    /// The entry of `key`, if the table holds one.
    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let s = self.slot(key);
        let data = s[1].load(Relaxed);
        if data == 0 || s[0].load(Relaxed) ^ data != key {
            return None;
        }
        Some(unpack(data))
    }

    /// Stores an entry for `key`, unless the slot holds a deeper or proven
    /// entry of the same key that this one does not improve on.
    #[inline]
    pub fn store(&self, key: u64, e: Entry) {
        let s = self.slot(key);
        if let Some(old) = self.probe(key) {
            if old.proven && !e.proven {
                return;
            }
            if !e.proven && old.depth > e.depth && old.bound == Bound::Exact {
                return;
            }
        }
        let data = pack(e);
        s[0].store(key ^ data, Relaxed);
        s[1].store(data, Relaxed);
    }
}

// data: value + 512 (10 bits) | depth (8) | bound (2) | proven (1) | pit + 1 (3) | 1 (a set bit so that no entry is 0)
fn pack(e: Entry) -> u64 {
    let v = (e.value + 512).clamp(0, 1023) as u64;
    let b = match e.bound {
        Bound::Exact => 0,
        Bound::Lower => 1,
        Bound::Upper => 2,
    };
    let pit = e.pit.map_or(0, |p| p as u64 + 1);
    v | (e.depth.min(255) as u64) << 10 | b << 18 | (e.proven as u64) << 20 | pit << 21 | 1 << 24
}

fn unpack(d: u64) -> Entry {
    Entry {
        value: (d & 1023) as i32 - 512,
        depth: ((d >> 10) & 255) as u32,
        bound: match (d >> 18) & 3 {
            0 => Bound::Exact,
            1 => Bound::Lower,
            _ => Bound::Upper,
        },
        proven: (d >> 20) & 1 == 1,
        pit: match (d >> 21) & 7 {
            0 => None,
            p => Some(p as u8 - 1),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_keys_differ() {
        let t = TranspositionTable::new(1 << 12);
        assert_eq!(t.slots.len() * 16, 1 << 12);
        let p = Position([4; 12]);
        let mut q = p;
        q.0[11] = 5;
        assert_ne!(key(&p), key(&q));
        for (value, bound, pit) in [(-48, Bound::Upper, None), (37, Bound::Lower, Some(5))] {
            let e = Entry {
                value,
                depth: 17,
                bound,
                proven: pit.is_some(),
                pit,
            };
            t.store(key(&p), e);
            let r = t.probe(key(&p)).expect("stored");
            assert_eq!(
                (r.value, r.depth, r.bound, r.proven, r.pit),
                (value, 17, bound, pit.is_some(), pit)
            );
        }
        assert!(t.probe(key(&q)).is_none() || key(&q) & t.mask == key(&p) & t.mask);
        t.clear();
        assert!(t.probe(key(&p)).is_none());
    }
}

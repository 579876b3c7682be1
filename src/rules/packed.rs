//! A board packed little-endian into a `u128`, and sowing on it by table:
//! the move generator's and the un-moves' arithmetic (see
//! [`crate::rules`]).

use super::{MAX_SEEDS, PITS};

/// A board packed little-endian into a `u128`: pit `k` in byte `k`, bytes
/// 12..15 zero. Sowing is then one subtraction and one addition (no pit
/// exceeds 48, so bytes never carry into each other).
#[inline(always)]
pub(super) fn pack(p: &[u8; PITS]) -> u128 {
    let mut b = [0u8; 16];
    b[..PITS].copy_from_slice(p);
    u128::from_le_bytes(b)
}

#[inline(always)]
pub(super) fn unpack(x: u128) -> [u8; PITS] {
    let b = x.to_le_bytes();
    let mut p = [0u8; PITS];
    p.copy_from_slice(&b[..PITS]);
    p
}

pub(super) const LOW48: u128 = (1 << 48) - 1;
/// The high bit of each of the 12 pit bytes.
pub(super) const HIGH_BITS: u128 = 0x8080_8080_8080_8080_8080_8080;

#[inline(always)]
pub(super) fn mirror_packed(x: u128) -> u128 {
    (x >> 48) | ((x & LOW48) << 48)
}

/// Whether some byte of `v` is zero.
#[inline(always)]
pub(super) fn has_zero_byte(v: u64) -> bool {
    v.wrapping_sub(0x0101_0101_0101_0101) & !v & 0x8080_8080_8080_8080 != 0
}

/// `SOWN[i][s]`: the seeds that sowing `s` from pit `i` puts in each pit
/// (the origin, skipped on every lap, gets none).
pub(super) static SOWN: [[u128; MAX_SEEDS as usize + 1]; 6] = build_sown();
/// `LAST[i][s]`: the pit the last of `s` seeds sown from `i` lands in.
pub(super) static LAST: [[u8; MAX_SEEDS as usize + 1]; 6] = build_last();

const fn build_sown() -> [[u128; MAX_SEEDS as usize + 1]; 6] {
    let mut t = [[0u128; MAX_SEEDS as usize + 1]; 6];
    let mut i = 0;
    while i < 6 {
        let mut s = 1;
        while s <= MAX_SEEDS as usize {
            let d = (s - 1) % 11 + 1;
            let k = (i + d) % PITS;
            t[i][s] = t[i][s - 1] + (1u128 << (8 * k));
            s += 1;
        }
        i += 1;
    }
    t
}

const fn build_last() -> [[u8; MAX_SEEDS as usize + 1]; 6] {
    let mut t = [[0u8; MAX_SEEDS as usize + 1]; 6];
    let mut i = 0;
    while i < 6 {
        let mut s = 1;
        while s <= MAX_SEEDS as usize {
            t[i][s] = ((i + (s - 1) % 11 + 1) % PITS) as u8;
            s += 1;
        }
        i += 1;
    }
    t
}

/// Sows `s` seeds from `pit` of the packed board `x` and captures.
#[inline(always)]
pub(super) fn sow_packed(x: u128, pit: usize, s: usize) -> (u128, u8) {
    let mut b = x - ((s as u128) << (8 * pit)) + SOWN[pit][s];
    let mut captured = 0u8;
    let mut k = LAST[pit][s] as usize;
    while k >= 6 {
        let v = (b >> (8 * k)) as u8;
        if v != 2 && v != 3 {
            break;
        }
        captured += v;
        b &= !(0xffu128 << (8 * k));
        k -= 1;
    }
    (b, captured)
}

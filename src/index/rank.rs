//! Ranking: a position's Goedel number from the prefix sums of its pits,
//! twelve table lookups and no branch.
//!
//! The walk of the [module docs](super) adds, at pit `k` holding `s_k`
//! seeds with `M_k` seeds in pits `0..=k`, the completions
//! `W(k+1, M_k) - W(k+1, M_k - s_k)` (`W(k, m)` the ways to put `m`
//! seeds into `k` pits); `M_k - s_k` is `M_{k-1}`. Grouped by prefix sum
//! instead of by pit, the sum telescopes to one term per prefix sum:
//!
//! ```text
//! rank = W(12, n) + sum over k in 0..=10 of A_k(M_k),
//! A_0(x) = -W(2, x),   A_k(x) = -W(k+2, x-1) for k >= 1
//! ```
//!
//! The validity rule subtracts, for each pit `k` of the run of non-empty
//! opponent pits that starts at pit 11 and ends above the highest empty
//! opponent pit `j`, the completions in which the remaining opponent pits
//! hold seeds too. Grouped the same way:
//!
//! ```text
//! minus W(12, n-6) plus sum over k in j+1..=10 of W(k+2, M_k-k+4)
//!                  plus W(j+2, M_j-j+5)            (j <= 10)
//! nothing                                           (j = 11)
//! ```
//!
//! So a rank is the layer's constant `W(12, n) - W(12, n-6)`, one term per
//! prefix sum `M_0..=M_10` (pits `6..=10` read from one of two rows by
//! whether they lie in the run), and one term at `j` (whose row for
//! `j = 11` gives back the `W(12, n-6)`). The prefix sums come from one
//! multiplication of the packed board, and `j` from its zero bytes.

use super::ways_c as w;
use crate::rules::{Position, MAX_SEEDS};

/// Columns of [`TERMS`]: a prefix sum `0..=48`, padded.
const X: usize = 64;
/// First row of the pits `6..=10` inside the run.
const RUN: usize = 11;
/// First row of the term of the pit that ends the run (`6..=11`).
const END: usize = 16;
/// Rows `0..=10`: `A_k`; rows `RUN + k - 6`: `A_k` plus the run's term of
/// pit `k`; rows `END + j - 6`: the term of the empty pit `j`.
static TERMS: [[u64; X]; 22] = build_terms();
/// `W(12, n) - W(12, n - 6)`, the rank's constant in layer `n`.
static BASE: [u64; X] = build_base();

const fn build_terms() -> [[u64; X]; 22] {
    let mut t = [[0u64; X]; 22];
    let mut x = 0;
    while x <= MAX_SEEDS as usize {
        let xi = x as i32;
        t[0][x] = 0u64.wrapping_sub(w(2, xi));
        let mut k = 1;
        while k <= 10 {
            t[k][x] = 0u64.wrapping_sub(w(k + 2, xi - 1));
            k += 1;
        }
        let mut k = 6;
        while k <= 10 {
            t[RUN + k - 6][x] = t[k][x].wrapping_add(w(k + 2, xi - k as i32 + 4));
            k += 1;
        }
        let mut j = 6;
        while j <= 10 {
            t[END + j - 6][x] = w(j + 2, xi - j as i32 + 5);
            j += 1;
        }
        t[END + 5][x] = w(12, xi - 6);
        x += 1;
    }
    t
}

const fn build_base() -> [u64; X] {
    let mut b = [0u64; X];
    let mut n = 0;
    while n <= MAX_SEEDS as usize {
        b[n] = w(12, n as i32).wrapping_sub(w(12, n as i32 - 6));
        n += 1;
    }
    b
}

/// The Goedel number of a board packed as [`Position::packed`] packs it,
/// indexable (at most 48 seeds, some opponent pit empty); the result is
/// meaningless otherwise (but the call is safe).
#[inline(always)]
pub fn rank_packed(x: u128) -> u64 {
    let lo = x as u64;
    let hi = (x >> 64) as u64 & 0xffff_ffff;
    // Byte k of `ps` is M_k, the seeds in pits 0..=k (at most 48: no carry).
    let ps_lo = lo.wrapping_mul(0x0101_0101_0101_0101);
    let ps_hi = hi
        .wrapping_mul(0x0101_0101)
        .wrapping_add((ps_lo >> 56).wrapping_mul(0x0101_0101));
    let ps: [u8; 16] = bytemuck::cast([ps_lo, ps_hi]);
    // j: the highest empty opponent pit (0x80 in the zero bytes of pits
    // 6..=11; `| 1` keeps a board without one in bounds).
    let opp = (x >> 48) as u64 & 0xffff_ffff_ffff;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f;
    let zeros = !(((opp & LOW7) + LOW7) | opp | LOW7) & 0x8080_8080_8080;
    let j = 6 + (63 - (zeros | 1).leading_zeros() as usize) / 8;
    let term = |row: usize, k: usize| TERMS[row][ps[k] as usize & (X - 1)];
    // Pits 6..=10 inside the run read the row RUN - 6 further on.
    let run = |k: usize| k + (RUN - 6) * (k > j) as usize;
    let mut r = BASE[ps[11] as usize & (X - 1)];
    r = r
        .wrapping_add(term(0, 0))
        .wrapping_add(term(1, 1))
        .wrapping_add(term(2, 2))
        .wrapping_add(term(3, 3))
        .wrapping_add(term(4, 4))
        .wrapping_add(term(5, 5));
    r = r
        .wrapping_add(term(run(6), 6))
        .wrapping_add(term(run(7), 7))
        .wrapping_add(term(run(8), 8))
        .wrapping_add(term(run(9), 9))
        .wrapping_add(term(run(10), 10));
    r.wrapping_add(term(END + j - 6, j))
}

/// The Goedel number of an indexable position (see
/// [`Position::is_indexable`]); the result is meaningless otherwise.
#[inline]
pub fn rank(p: &Position) -> u64 {
    rank_packed(p.packed())
}

//! The VU Goedel numbering (`spec/INDEXING.md`).
//!
//! Layer `n` holds every distribution of `n` seeds over 12 pits whose opponent
//! pits 6..11 are not all non-empty, ordered colexicographically (pit 11 most
//! significant). A position's Goedel number is its rank in that order.

use crate::rules::{Position, PositionError, MAX_SEEDS, PITS};

/// Offset that lets the count table be indexed by negative seed counts
/// (which have no completions).
const OFF: usize = 64;
const COLS: usize = OFF + MAX_SEEDS as usize + 1;

/// `WAYS[k][OFF + m]`: ways to put `m` seeds into `k` pits, 0 for `m < 0`.
/// Computed at compile time from the recurrence
/// `W(k, m) = W(k, m - 1) + W(k - 1, m)`.
static WAYS: [[u64; COLS]; PITS + 2] = build_ways();

const fn build_ways() -> [[u64; COLS]; PITS + 2] {
    let mut t = [[0u64; COLS]; PITS + 2];
    t[0][OFF] = 1;
    let mut k = 1;
    while k < PITS + 2 {
        let mut m = OFF;
        while m < COLS {
            t[k][m] = t[k][m - 1] + t[k - 1][m];
            m += 1;
        }
        k += 1;
    }
    t
}

#[inline(always)]
fn ways(k: usize, m: i32) -> u64 {
    WAYS[k][(OFF as i32 + m) as usize]
}

/// Why a Goedel number cannot be turned into a position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// The layer does not exist.
    #[error("layer {0} does not exist: layers have 0 to 48 seeds")]
    NoSuchLayer(u32),
    /// The index is not below the layer's size.
    #[error("index {index} is outside layer {seeds}, which holds {size} positions (0..={last})", last = size - 1)]
    OutOfRange {
        /// Seeds of the layer.
        seeds: u32,
        /// The index asked for.
        index: u64,
        /// The layer's size.
        size: u64,
    },
}

/// Number of positions in layer `n`: `C(n+11, 11) - C(n+5, 11)`.
/// (Layer 47 has this many index slots too, though no game reaches it.)
#[inline]
pub fn layer_size(n: u32) -> u64 {
    assert!(n <= MAX_SEEDS, "layer {n} out of range");
    ways(12, n as i32) - ways(12, n as i32 - 6)
}

/// Number of seed distributions over 12 pits without the validity rule.
pub fn distributions(n: u32) -> u64 {
    assert!(n <= MAX_SEEDS, "layer {n} out of range");
    ways(12, n as i32)
}

/// The Goedel number of a position, checking that it has one.
pub fn goedel(p: &Position) -> Result<u64, PositionError> {
    let p = Position::indexable(p.0)?;
    Ok(rank(&p))
}

/// The Goedel number of an indexable position (see
/// [`Position::is_indexable`]); the result is meaningless otherwise.
#[inline]
pub fn rank(p: &Position) -> u64 {
    let b = &p.0;
    let mut m = p.seeds() as i32;
    let mut r: u64 = 0;
    // Opponent pits 11..6: while all of them so far hold seeds, completions
    // in which the rest of the opponent pits hold seeds too are not counted.
    let mut full = true;
    for k in (6..PITS).rev() {
        let s = b[k] as i32;
        r += ways(k + 1, m) - ways(k + 1, m - s);
        if full {
            if s == 0 {
                full = false;
            } else {
                let o = k as i32 - 6;
                r -= ways(k + 1, m - o - 1) - ways(k + 1, m - o - s);
            }
        }
        m -= s;
    }
    for k in (1..6).rev() {
        let s = b[k] as i32;
        r += ways(k + 1, m) - ways(k + 1, m - s);
        m -= s;
    }
    r
}

/// The position with Goedel number `g` in layer `n`.
pub fn unrank(n: u32, g: u64) -> Result<Position, IndexError> {
    if n > MAX_SEEDS {
        return Err(IndexError::NoSuchLayer(n));
    }
    let size = layer_size(n);
    if g >= size {
        return Err(IndexError::OutOfRange {
            seeds: n,
            index: g,
            size,
        });
    }
    Ok(unrank_unchecked(n, g))
}

/// [`unrank`] without the range check; `n <= 48` and `g < layer_size(n)`.
///
/// Works with `t`, the number of positions at or after the wanted one among
/// those that agree with it on the pits already placed (so `t >= 1`). With `m`
/// seeds left for pits `0..=k`, the positions whose pit `k` holds fewer than
/// `s` seeds are, by the hockey-stick identity, `f(m) - f(m - s)` for a
/// monotone row `f` (see [`row_value`]); so `x = m - s`, the seeds left for
/// the pits below, is the first `x` with `f(x) >= t`, and `t` becomes
/// `t - f(x - 1)`. That insertion point is read from a table indexed by the
/// leading bits of `t` ([`search`]), and costs no unpredictable branch.
#[inline]
pub fn unrank_unchecked(n: u32, g: u64) -> Position {
    let mut b = [0u8; PITS];
    let mut m = n as usize;
    let mut t = layer_size(n) - g;
    // Opponent pits 11..6: while every pit so far holds seeds, the rows count
    // only completions in which some opponent pit below is empty.
    let mut full = true;
    for k in (6..PITS).rev() {
        let row = k + if full { FULL_ROW0 - 6 } else { 0 };
        let (xs, sub) = search(row, t);
        // Only in a full row can the first `x` lie at or beyond `m`: then pit
        // `k` is empty, which ends the full run.
        let clamp = xs > m;
        let x = if clamp { m } else { xs };
        let sub = if clamp { ROW_VAL[row][m] } else { sub };
        full &= x < m;
        b[k] = (m - x) as u8;
        m = x;
        t -= sub;
    }
    for k in (3..6).rev() {
        let (x, sub) = search(k, t);
        b[k] = (m - x) as u8;
        m = x;
        t -= sub;
    }
    // Pits 2, 1, 0: pit 2 from a direct table; then the row for pit 1 is
    // f(x) = x + 1, so x = t - 1.
    let e = PIT2[t as usize];
    let x2 = (e & 0xff) as usize;
    let x1 = (e >> 8) as usize - 1;
    b[2] = (m - x2) as u8;
    b[1] = (x2 - x1) as u8;
    b[0] = x1 as u8;
    Position(b)
}

/// Largest seed count a row is read at.
const XMAX: usize = MAX_SEEDS as usize;
/// Rows `2..=11`: pit `k` with no full run, `f(x) = W(k + 1, x)`. Rows
/// `FULL_ROW0 + o` (`o = 0..=5`): pit `6 + o` inside a full run,
/// `f(x) = W(k + 1, x) - W(k + 1, x - o)`.
const FULL_ROW0: usize = 12;
const ROWS: usize = FULL_ROW0 + 6;
/// Leading bits of `t` (after its top bit) that pick a table cell, per row:
/// the fewest that leave at most one row value in each cell.
const ROW_BITS: [u32; ROWS] = build_row_bits();
/// Where each row's cells start in [`GUESS`].
const ROW_BASE: [usize; ROWS + 1] = build_row_base();
const GUESS_LEN: usize = ROW_BASE[ROWS];

const WAYS_C: [[u64; COLS]; PITS + 2] = build_ways();

const fn ways_c(k: usize, m: i32) -> u64 {
    if m < -(OFF as i32) {
        return 0;
    }
    WAYS_C[k][(OFF as i32 + m) as usize]
}

/// `f_row(x)` for `x` in `0..=XMAX`; 0 below, `u64::MAX` above.
const fn row_value(row: usize, x: i32) -> u64 {
    if x < 0 {
        return 0;
    }
    if x > XMAX as i32 {
        return u64::MAX;
    }
    if row < FULL_ROW0 {
        ways_c(row + 1, x)
    } else {
        let o = (row - FULL_ROW0) as i32;
        let k = 6 + row - FULL_ROW0;
        ways_c(k + 1, x) - ways_c(k + 1, x - o)
    }
}

/// Largest `t` a row is searched with.
const fn row_tmax(row: usize) -> u64 {
    let k = if row < FULL_ROW0 {
        row
    } else {
        6 + row - FULL_ROW0
    };
    ways_c(k + 1, XMAX as i32)
}

/// The cell of `t >= 1` within a row with `bits` leading bits: the exponent
/// and the next `bits` bits of `t`, as in the bits of `t as f64`.
const fn cell_of(t: u64, bits: u32) -> usize {
    let e = 63 - t.leading_zeros();
    let mask = (1u64 << bits) - 1;
    let mant = if e >= bits {
        (t >> (e - bits)) & mask
    } else {
        (t << (bits - e)) & mask
    };
    ((e as usize) << bits) | mant as usize
}

const fn row_used(row: usize) -> bool {
    row >= 2
}

const fn build_row_bits() -> [u32; ROWS] {
    let mut out = [0u32; ROWS];
    let mut row = 0;
    while row < ROWS {
        if row_used(row) {
            let mut bits = 0;
            loop {
                let mut ok = true;
                let mut x = 0;
                while x < XMAX {
                    let a = row_value(row, x as i32);
                    let b = row_value(row, x as i32 + 1);
                    if a > 0 && cell_of(a, bits) == cell_of(b, bits) {
                        ok = false;
                    }
                    x += 1;
                }
                if ok {
                    break;
                }
                bits += 1;
            }
            out[row] = bits;
        }
        row += 1;
    }
    out
}

const fn row_cells(row: usize) -> usize {
    if !row_used(row) {
        return 0;
    }
    let e = 63 - row_tmax(row).leading_zeros();
    (e as usize + 1) << ROW_BITS[row]
}

const fn build_row_base() -> [usize; ROWS + 1] {
    let mut out = [0usize; ROWS + 1];
    let mut row = 0;
    while row < ROWS {
        out[row + 1] = out[row] + row_cells(row);
        row += 1;
    }
    out
}

/// `GUESS[ROW_BASE[row] + cell]`: the first `x` with `f(x) >= t` for the
/// smallest `t` of the cell (`XMAX + 1` if there is none).
static GUESS: [u8; GUESS_LEN] = build_guess();

const fn build_guess() -> [u8; GUESS_LEN] {
    let mut out = [0u8; GUESS_LEN];
    let mut row = 0;
    while row < ROWS {
        let bits = ROW_BITS[row];
        let mut c = 0;
        while c < row_cells(row) {
            let e = (c >> bits) as u32;
            let v = (1u64 << bits) | (c as u64 & ((1u64 << bits) - 1));
            // The smallest t in the cell, if any t falls in it.
            let lo = if e >= bits {
                Some(v << (e - bits))
            } else if v & ((1u64 << (bits - e)) - 1) == 0 {
                Some(v >> (bits - e))
            } else {
                None
            };
            if let Some(lo) = lo {
                let mut x = 0;
                while x <= XMAX && row_value(row, x as i32) < lo {
                    x += 1;
                }
                out[ROW_BASE[row] + c] = x as u8;
            }
            c += 1;
        }
        row += 1;
    }
    out
}

/// `ROW_VAL[row][x + 1] = f_row(x)` for `x` in `-1..=XMAX + 1`.
static ROW_VAL: [[u64; XMAX + 3]; ROWS] = build_row_val();

const fn build_row_val() -> [[u64; XMAX + 3]; ROWS] {
    let mut out = [[0u64; XMAX + 3]; ROWS];
    let mut row = 0;
    while row < ROWS {
        let mut x = 0;
        while x < XMAX + 3 {
            out[row][x] = row_value(row, x as i32 - 1);
            x += 1;
        }
        row += 1;
    }
    out
}

/// Per row: the right shift of `t as f64`'s bits that leaves exponent and
/// leading bits, and what to add to make that an index into [`GUESS`].
static ROW_SHIFT: [(u32, u64); ROWS] = build_row_shift();

const fn build_row_shift() -> [(u32, u64); ROWS] {
    let mut out = [(0u32, 0u64); ROWS];
    let mut row = 0;
    while row < ROWS {
        let bits = ROW_BITS[row];
        out[row] = (
            52 - bits,
            (ROW_BASE[row] as u64).wrapping_sub(1023u64 << bits),
        );
        row += 1;
    }
    out
}

/// The first `x` with `f_row(x) >= t` (`XMAX + 1` if none), and `f_row(x - 1)`.
#[inline(always)]
fn search(row: usize, t: u64) -> (usize, u64) {
    let (shift, add) = ROW_SHIFT[row];
    // `t < 2^53`, so the conversion is exact and the bits are exponent and
    // leading bits of `t`.
    let idx = ((t as i64 as f64).to_bits() >> shift).wrapping_add(add);
    let g = GUESS[idx as usize] as usize;
    let vals = &ROW_VAL[row];
    let lo = vals[g];
    let hi = vals[g + 1];
    if t > hi {
        (g + 1, hi)
    } else {
        (g, lo)
    }
}

/// `PIT2[t] = x | t' << 8` for pit 2 (row `f(x) = W(3, x)`).
static PIT2: [u16; PIT2_LEN] = build_pit2();
const PIT2_LEN: usize = WAYS_C[3][OFF + XMAX] as usize + 1;

const fn build_pit2() -> [u16; PIT2_LEN] {
    let mut out = [0u16; PIT2_LEN];
    let mut t = 1;
    while t < PIT2_LEN {
        let mut x = 0;
        while ways_c(3, x) < t as u64 {
            x += 1;
        }
        let rest = t as u64 - ways_c(3, x - 1);
        out[t] = (x as u16) | ((rest as u16) << 8);
        t += 1;
    }
    out
}

/// Steps `p` to the next indexable position of its layer in Goedel order.
/// Returns false (leaving `p` unspecified) after the last one.
#[inline]
pub fn advance(p: &mut Position) -> bool {
    let b = &mut p.0;
    loop {
        let Some(i) = b.iter().position(|&x| x > 0) else {
            return false;
        };
        if i == PITS - 1 {
            return false;
        }
        let v = b[i];
        b[i] = 0;
        b[i + 1] += 1;
        b[0] = v - 1;
        if b[6..].contains(&0) {
            return true;
        }
        // Every position with these opponent pits is invalid: jump to the
        // last of them (all mover seeds in pit 5) and step again.
        let rest: u8 = b[..6].iter().sum();
        b[..6].fill(0);
        b[5] = rest;
    }
}

/// The first position of layer `n` in Goedel order (all seeds in pit 0).
pub fn first(n: u32) -> Position {
    let mut b = [0u8; PITS];
    b[0] = n as u8;
    Position(b)
}

/// Iterates a range of a layer in Goedel order, yielding `(index, position)`
/// without unranking each step.
#[derive(Clone, Debug)]
pub struct LayerIter {
    pos: Position,
    next: u64,
    end: u64,
}

impl LayerIter {
    /// The whole of layer `n`.
    pub fn new(n: u32) -> Self {
        Self::range(n, 0, layer_size(n))
    }

    /// Indices `start..end` of layer `n` (`end` is clamped to the layer).
    pub fn range(n: u32, start: u64, end: u64) -> Self {
        let end = end.min(layer_size(n));
        let start = start.min(end);
        let pos = if start < end {
            unrank_unchecked(n, start)
        } else {
            first(n)
        };
        LayerIter {
            pos,
            next: start,
            end,
        }
    }
}

impl Iterator for LayerIter {
    type Item = (u64, Position);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        let out = (self.next, self.pos);
        self.next += 1;
        if self.next < self.end {
            advance(&mut self.pos);
        }
        Some(out)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = (self.end - self.next) as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for LayerIter {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_layer_sizes() {
        let want = [1u64, 12, 78, 364, 1365, 4368, 12375];
        for (n, &w) in want.iter().enumerate() {
            assert_eq!(layer_size(n as u32), w, "layer {n}");
        }
        assert_eq!(layer_size(16), 12_685_179);
        assert_eq!(layer_size(20), 80_214_915);
        assert_eq!(layer_size(48), 203_648_015_935);
    }

    #[test]
    fn checkpoints() {
        let cases: [([u8; 12], u64); 3] = [
            ([0, 1, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0], 2726),
            ([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0], 588_953),
            ([0, 2, 3, 4, 5, 6, 0, 2, 3, 4, 5, 6], 31_114_014_134),
        ];
        for (b, g) in cases {
            let p = Position(b);
            assert_eq!(rank(&p), g, "{p}");
            assert_eq!(unrank(p.seeds(), g).unwrap(), p);
        }
    }
}

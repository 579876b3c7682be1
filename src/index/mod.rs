//! The VU Goedel numbering: where a position's entry sits in its layer's
//! table.
//!
//! The table of layer `n` (`n` seeds on the board) is a flat array holding one
//! entry per position, at the position's **Goedel number** `g(P)`. This crate
//! numbers positions exactly as the VU dataset does, so that a `scores.n` it
//! writes can be compared byte for byte with the dataset's file of the same
//! name.
//!
//! # Definition
//!
//! * The valid positions of layer `n` are the pit counts `p[0..12]` that add
//!   up to `n` and whose opponent pits `p[6..12]` are not all non-empty (see
//!   the counts in [`crate::rules`]; [`Position::is_indexable`]).
//! * They are ordered by pit 11 first, then by pit 10, and so on down to pit
//!   0, each ascending: a colexicographic order in which pit 11 is the most
//!   significant.
//! * `g(P)` is `P`'s rank in that order, counting from 0, so `g` ranges over
//!   `0 .. C(n+11,11) - C(n+5,11)` ([`layer_size`]).
//!
//! # Computing the rank
//!
//! One direct way ([`unrank`] goes the other way): walk the pits
//! from 11 down to 0. At pit `k`, which holds `s` seeds while `m` seeds are
//! still to be placed (in pit `k` and the pits below it), add the number of
//! valid completions that agree on the pits above `k` and put fewer than `s`
//! seeds into pit `k`. Without the validity rule this is the sum over `j < s`
//! of the binomials `C(m - j + k - 1, k - 1)`. The validity rule only matters
//! as long as every opponent pit seen so far holds seeds; then the
//! completions in which all the remaining opponent pits hold seeds too are
//! subtracted (take one seed out of each of those pits and count what is left
//! in the same way). With these counts in tables, a rank costs about a dozen
//! additions; [`rank`] (in `rank.rs`) groups them by the pits' prefix sums,
//! so that a rank is twelve lookups and no branch ([`rank_packed`] takes the
//! board packed, as the solvers' un-moves make it).
//!
//! # Checkpoints
//!
//! Taken from the dataset's own access code:
//!
//! | position `p[0..12]` | seeds | `g` |
//! |---|---|---|
//! | `0 1 2 0 0 0  0 1 2 0 0 0` | 6 | 2726 |
//! | `1 1 1 1 1 2  4 2 3 0 0 0` | 16 | 588953 |
//! | `0 2 3 4 5 6  0 2 3 4 5 6` | 40 | 31114014134 |
//!
//! Layer sizes are 1, 12, 78, 364, 1365, 4368 and 12375 for `n` = 0..6,
//! 12,685,179 for `n` = 16, 80,214,915 for `n` = 20 and 203,648,015,935 for
//! `n` = 48. The repository's `data/layer-sizes.csv` lists every layer.
//!
//! ```
//! use awari_egdb::{index, rules::Position};
//!
//! for (pits, g) in [
//!     ([0, 1, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0], 2726),
//!     ([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0], 588_953),
//!     ([0, 2, 3, 4, 5, 6, 0, 2, 3, 4, 5, 6], 31_114_014_134),
//! ] {
//!     let p = Position::indexable(pits).unwrap();
//!     assert_eq!(index::rank(&p), g);
//!     assert_eq!(index::unrank(p.seeds(), g).unwrap(), p);
//! }
//! let sizes = [1, 12, 78, 364, 1365, 4368, 12375];
//! for (n, &size) in sizes.iter().enumerate() {
//!     assert_eq!(index::layer_size(n as u32), size);
//! }
//! assert_eq!(index::layer_size(16), 12_685_179);
//! assert_eq!(index::layer_size(20), 80_214_915);
//! assert_eq!(index::layer_size(48), 203_648_015_935);
//! ```
//!
//! # The dataset's files
//!
//! * `scores.n`, for `n` = 0..46 and 48, holds one signed byte per position,
//!   at offset `g(P)`: the score defined in [`crate::rules`], from the
//!   mover's side. The file has no header.
//! * The dataset counts one position more than layers 0..46 and 48 hold: the
//!   initial position, whose opponent has no empty pit. Where `scores.48`
//!   keeps it is not documented, so a reader must accept a `scores.48` of
//!   either 203,648,015,935 or 203,648,015,936 bytes, and must not infer a
//!   value for the initial position from it.
//! * The dataset takes its folder from the environment variable `AWARI_PATH`
//!   ([`crate::probe::AWARI_PATH`]).

mod error;
pub use error::IndexError;
mod rank;

pub use rank::{rank, rank_packed};

use crate::error::Result;
use crate::rules::{Position, MAX_SEEDS, PITS};

/// Offset that lets the count table be indexed by negative seed counts
/// (which have no completions).
const OFF: usize = 64;
const COLS: usize = OFF + MAX_SEEDS as usize + 1;

/// `WAYS[k][OFF + m]`: ways to put `m` seeds into `k` pits, 0 for `m < 0`.
/// Computed at compile time from the recurrence
/// `W(k, m) = W(k, m - 1) + W(k - 1, m)`.
static WAYS: [[u64; COLS]; PITS + 2] = WAYS_C;

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
pub fn goedel(p: &Position) -> Result<u64> {
    let p = Position::indexable(p.0)?;
    Ok(rank(&p))
}

/// The position with Goedel number `g` in layer `n`.
pub fn unrank(n: u32, g: u64) -> Result<Position> {
    if n > MAX_SEEDS {
        return Err(IndexError::NoSuchLayer(n).into());
    }
    let size = layer_size(n);
    if g >= size {
        return Err(IndexError::IndexOutOfRange {
            seeds: n,
            index: g,
            size,
        }
        .into());
    }
    Ok(unrank_unchecked(n, g))
}

/// [`unrank`] without the range check; `n <= 48` and `g < layer_size(n)`.
///
/// Walks the pits from 11 down, carrying `t`: how many positions of the layer
/// agree with the wanted one on the pits placed so far and do not precede it
/// (so `t >= 1`). With `m` seeds left for pits `0..=k`, the positions whose
/// pit `k` holds fewer than `s` seeds number `f(m) - f(m - s)` for a
/// monotone row `f` (hockey-stick identity; see `row_value`). So
/// `x = m - s`, the seeds left below pit `k`, is the first `x` with
/// `f(x) >= t`, and `t` becomes `t - f(x - 1)`. That insertion point comes
/// from a table indexed by the leading bits of `t` (`search`); pits 3..1
/// come from one table lookup when `t` is small.
#[inline]
pub fn unrank_unchecked(n: u32, g: u64) -> Position {
    let mut w = Walk {
        b: 0,
        m: n as usize,
        u: layer_size(n) - g + BIAS,
    };
    // Opponent pits 11..6: while every pit so far holds seeds, only the
    // completions in which some opponent pit below is empty count. Once a
    // pit is empty, all do. Each way out of the run gets its own copy of the
    // rest of the walk, so that the table rows are constants.
    macro_rules! rest {
        ($($k:literal)*) => {{ $(w.pit($k);)* }};
    }
    if w.empty_in_run(11) {
        rest!(10 9 8 7 6 5 4)
    } else if w.empty_in_run(10) {
        rest!(9 8 7 6 5 4)
    } else if w.empty_in_run(9) {
        rest!(8 7 6 5 4)
    } else if w.empty_in_run(8) {
        rest!(7 6 5 4)
    } else if w.empty_in_run(7) {
        rest!(6 5 4)
    } else {
        // Pit 6 ends the run: it is empty.
        rest!(5 4)
    }
    let Walk { mut b, m, u } = w;
    let t = (u - BIAS) as usize;
    let (x3, x2, x1) = if t < PIT3_LEN {
        let e = TABLES.pit3[t] as usize;
        (e & 31, (e >> 5) & 31, e >> 10)
    } else {
        pits_3_2_1(u)
    };
    b |= ((m - x3) as u128) << 24
        | ((x3 - x2) as u128) << 16
        | ((x2 - x1) as u128) << 8
        | x1 as u128;
    Position::from_packed(b)
}

/// State of [`unrank_unchecked`] between pits.
struct Walk {
    /// The pits placed so far, packed as [`Position::packed`] packs them:
    /// built in a register, so that the position comes out in whole words
    /// (a board written a byte at a time and read back a word at a time
    /// stalls the reader until the bytes reach the cache).
    b: u128,
    /// Seeds left for the pits below.
    m: usize,
    /// `t + BIAS`.
    u: u64,
}

impl Walk {
    /// Pit `k` (`10..=4`) below the full run.
    #[inline(always)]
    fn pit(&mut self, k: usize) {
        let (x, u) = search(k, self.u);
        self.b |= ((self.m - x) as u128) << (8 * k);
        self.m = x;
        self.u = u;
    }

    /// Pit `k` (`11..=7`) inside the full run. Returns whether it is empty,
    /// which ends the run.
    #[inline(always)]
    fn empty_in_run(&mut self, k: usize) -> bool {
        let row = full_row(k);
        // Pit k is empty iff `t > f(m - 1)`, i.e. iff the first `x` with
        // `f(x) >= t` is `m` or more. (A branch: it is taken once per walk,
        // and leaves only constant rows behind.)
        let f = TABLES.row_val[row][self.m & 63];
        if self.u - BIAS > f {
            self.u -= f;
            return true;
        }
        let (x, u) = search(row, self.u);
        self.b |= ((self.m - x) as u128) << (8 * k);
        self.m = x;
        self.u = u;
        false
    }
}

/// Pits 3, 2 and 1 when `t` is too large for [`UnrankTables::pit3`]: the seeds
/// left below each of them.
#[cold]
#[inline(never)]
fn pits_3_2_1(u: u64) -> (usize, usize, usize) {
    let (x3, u) = search(3, u);
    let e = TABLES.pit2[(u - BIAS) as usize];
    (x3, (e & 0xff) as usize, (e >> 8) as usize - 1)
}

/// In `row`, the first `x` with `f(x) >= t`, and `u - f(x - 1)`.
///
/// The cell of `u` gives a guess `g` and `f(g - 1)`; at most one row value
/// lies in a cell, so the guess is off by at most one, and it is checked off
/// the critical path.
#[inline(always)]
fn search(row: usize, u: u64) -> (usize, u64) {
    let (a, b) = (ROW_BASE[row], ROW_BASE[row + 1]);
    let (lo_tab, g_tab) = (&TABLES.cell_lo[a..b], &TABLES.cell_g[a..b]);
    let idx = cell_of(u, ROW_BITS[row]);
    let g = g_tab[idx] as usize;
    let u1 = u.wrapping_sub(lo_tab[idx]);
    // The guess is right iff `f(g - 1) < t <= f(g)`.
    if u1.wrapping_sub(BIAS + 1) >= TABLES.row_step[row][g & 63] {
        return fix(row, g, u);
    }
    (g, u1)
}

/// The rarer outcome of [`search`], out of line so that the check is a
/// well-predicted branch rather than a select on the critical path.
#[cold]
#[inline(never)]
fn fix(row: usize, g: usize, u: u64) -> (usize, u64) {
    let vals = &TABLES.row_val[row];
    let x = if u - BIAS > vals[g + 1] { g + 1 } else { g - 1 };
    (x, u - vals[x])
}

/// Largest seed count a row is read at.
const XMAX: usize = MAX_SEEDS as usize;
/// Rows `3..=11`: pit `k` below the full run, `f(x) = W(k + 1, x)`. Row
/// [`full_row`]`(k)` for `k` in `7..=11`: pit `k` inside the full run,
/// `f(x) = W(k + 1, x) - W(k + 1, x - o)` with `o = k - 6`, the opponent pits
/// below `k` (positions in which they are all non-empty too are invalid).
const ROWS: usize = 18;

/// The row of pit `k` inside the full run.
const fn full_row(k: usize) -> usize {
    k + 6
}

const fn row_used(row: usize) -> bool {
    row >= 3 && row != full_row(6)
}

/// Pit of a row.
const fn row_pit(row: usize) -> usize {
    if row < full_row(6) {
        row
    } else {
        row - 6
    }
}

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
    let k = row_pit(row);
    if row < full_row(6) {
        ways_c(k + 1, x)
    } else {
        let o = (k - 6) as i32;
        ways_c(k + 1, x) - ways_c(k + 1, x - o)
    }
}

/// Leading bits (after the top one) that [`cell_of`] may use.
const MAX_BITS: u32 = 4;
/// Added to `t` (giving `u`) so that the top bit of `u` is never below the
/// leading bits a cell looks at, which keeps [`cell_of`] free of special
/// cases.
const BIAS: u64 = 1 << MAX_BITS;

/// The cell of `u` (`BIAS <= u < 2^(64 - bits)`) in a row whose cells have
/// `bits` leading bits: `e`, the exponent of `u`, then `(u << bits) >> e`,
/// the top bit of `u` and the `bits` after it. Cells below `BIAS` are unused.
#[inline(always)]
const fn cell_of(u: u64, bits: u32) -> usize {
    let e = u.ilog2();
    ((e as usize) << bits) + ((u << bits) >> e) as usize
}

/// The fewest leading bits that put no two values of the row in one cell.
const fn min_bits(row: usize) -> u32 {
    let mut bits = 0;
    loop {
        let mut ok = true;
        let mut x = 0;
        while x < XMAX {
            let a = row_value(row, x as i32);
            let b = row_value(row, x as i32 + 1);
            if cell_of(a + BIAS, bits) == cell_of(b + BIAS, bits) {
                ok = false;
            }
            x += 1;
        }
        if ok {
            return bits;
        }
        bits += 1;
        assert!(bits <= MAX_BITS);
    }
}

/// Leading bits per row.
const ROW_BITS: [u32; ROWS] = build_row_bits();

const fn build_row_bits() -> [u32; ROWS] {
    let mut out = [0u32; ROWS];
    let mut row = 0;
    while row < ROWS {
        if row_used(row) {
            out[row] = min_bits(row);
        }
        row += 1;
    }
    out
}

/// Cells of a row: up to that of the largest `t` it is searched with,
/// `W(k + 1, XMAX)`.
const fn row_cells(row: usize) -> usize {
    if !row_used(row) {
        return 0;
    }
    let tmax = ways_c(row_pit(row) + 1, XMAX as i32);
    cell_of(tmax + BIAS, ROW_BITS[row]) + 1
}

/// Where each row's cells start in [`UnrankTables::cell_g`] and
/// [`UnrankTables::cell_lo`].
const ROW_BASE: [usize; ROWS + 1] = build_row_base();
const CELLS: usize = ROW_BASE[ROWS];

const fn build_row_base() -> [usize; ROWS + 1] {
    let mut out = [0usize; ROWS + 1];
    let mut row = 0;
    while row < ROWS {
        out[row + 1] = out[row] + row_cells(row);
        row += 1;
    }
    out
}

/// Entries of [`UnrankTables::pit3`].
const PIT3_LEN: usize = 4096;
/// Entries of [`UnrankTables::pit2`]: `W(3, XMAX) + 1`.
const PIT2_LEN: usize = WAYS_C[3][OFF + XMAX] as usize + 1;

/// The tables of [`unrank_unchecked`], built at compile time, in one place
/// so that one base address reaches them all.
struct UnrankTables {
    /// Per cell: the guess `g`, the first `x` with `f(x) >= t` for the `t`
    /// of the cell in the majority (for all of them unless a row value lies
    /// in the cell).
    cell_g: [u8; CELLS],
    /// Per cell: `f(g - 1)`.
    cell_lo: [u64; CELLS],
    /// `row_val[row][x + 1] = f(x)` for `x` in `-1..=XMAX + 1`.
    row_val: [[u64; 64]; ROWS],
    /// `row_step[row][x] = f(x) - f(x - 1)` for `x` in `0..=XMAX + 1`.
    row_step: [[u64; 64]; ROWS],
    /// Pits 3, 2 and 1 at once for `t < PIT3_LEN`:
    /// `x3 | x2 << 5 | x1 << 10`, the seeds left below each of them.
    pit3: [u16; PIT3_LEN],
    /// Pit 2 (row `W(3, x)`) and pit 1: `x2 | t' << 8`, where pit 1 leaves
    /// `x1 = t' - 1`.
    pit2: [u16; PIT2_LEN],
}

static TABLES: UnrankTables = UnrankTables {
    cell_g: build_cell_g(),
    cell_lo: build_cell_lo(),
    row_val: build_row_val(),
    row_step: build_row_step(),
    pit3: build_pit3(),
    pit2: build_pit2(),
};

const fn build_cell_g() -> [u8; CELLS] {
    let mut out = [0u8; CELLS];
    let mut row = 0;
    while row < ROWS {
        let bits = ROW_BITS[row];
        let mut c = 0;
        while c < row_cells(row) {
            // The cell's exponent is `e - 1`; those below BIAS are unused.
            let e = (c >> bits) as u32;
            if e > MAX_BITS {
                // The cell's `t` run from `t0` to `t1`.
                let mant = (1u64 << bits) + (c as u64 & ((1u64 << bits) - 1));
                let t0 = (mant << (e - 1 - bits)) - BIAS;
                let t1 = t0 + (1u64 << (e - 1 - bits)) - 1;
                let mut x = 0;
                while x <= XMAX && row_value(row, x as i32) < t0 {
                    x += 1;
                }
                // If the row value f(x) lies in the cell, guess the side
                // holding more of its `t`.
                if x <= XMAX {
                    let f = row_value(row, x as i32);
                    if f < t1 && t1 - f > f + 1 - t0 {
                        x += 1;
                    }
                }
                out[ROW_BASE[row] + c] = x as u8;
            }
            c += 1;
        }
        row += 1;
    }
    out
}

const fn build_cell_lo() -> [u64; CELLS] {
    let g = build_cell_g();
    let mut out = [0u64; CELLS];
    let mut row = 0;
    while row < ROWS {
        let mut c = ROW_BASE[row];
        while c < ROW_BASE[row + 1] {
            out[c] = row_value(row, g[c] as i32 - 1);
            c += 1;
        }
        row += 1;
    }
    out
}

const fn build_row_val() -> [[u64; 64]; ROWS] {
    let mut out = [[u64::MAX; 64]; ROWS];
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

const fn build_row_step() -> [[u64; 64]; ROWS] {
    let mut out = [[u64::MAX; 64]; ROWS];
    let mut row = 0;
    while row < ROWS {
        let mut x = 0;
        while x <= XMAX + 1 {
            out[row][x] = row_value(row, x as i32) - row_value(row, x as i32 - 1);
            x += 1;
        }
        row += 1;
    }
    out
}

const fn build_pit3() -> [u16; PIT3_LEN] {
    let mut out = [0u16; PIT3_LEN];
    let mut t = 1;
    while t < PIT3_LEN {
        let mut x3 = 0;
        while ways_c(4, x3) < t as u64 {
            x3 += 1;
        }
        let t2 = t as u64 - ways_c(4, x3 - 1);
        let mut x2 = 0;
        while ways_c(3, x2) < t2 {
            x2 += 1;
        }
        let x1 = t2 - ways_c(3, x2 - 1) - 1;
        assert!(x3 < 32);
        out[t] = (x3 as u16) | (x2 as u16) << 5 | (x1 as u16) << 10;
        t += 1;
    }
    out
}

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
mod tests;

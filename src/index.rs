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
#[inline]
pub fn unrank_unchecked(n: u32, g: u64) -> Position {
    let mut b = [0u8; PITS];
    let mut m = n as i32;
    let mut r = g;
    let mut full = true;
    for k in (6..PITS).rev() {
        let mut s = 0i32;
        if full {
            // s = 0 ends the "all full" run: every completion is valid.
            let c = ways(k, m);
            if r < c {
                full = false;
            } else {
                r -= c;
                s = 1;
                let o = k as i32 - 6;
                loop {
                    let c = ways(k, m - s) - ways(k, m - s - o);
                    if r < c || s >= m {
                        break;
                    }
                    r -= c;
                    s += 1;
                }
            }
        } else {
            loop {
                let c = ways(k, m - s);
                if r < c || s >= m {
                    break;
                }
                r -= c;
                s += 1;
            }
        }
        b[k] = s as u8;
        m -= s;
    }
    for k in (1..6).rev() {
        let mut s = 0i32;
        loop {
            let c = ways(k, m - s);
            if r < c || s >= m {
                break;
            }
            r -= c;
            s += 1;
        }
        b[k] = s as u8;
        m -= s;
    }
    b[0] = m as u8;
    Position(b)
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

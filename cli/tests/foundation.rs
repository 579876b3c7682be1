//! Foundation tests for the public API: the VU Goedel numbering (module
//! docs of `awari_egdb::index`). The rules are in `foundation_rules.rs`.
//!
//! Everything here is checked against code written in this file (its own
//! enumeration, its own counting DP) and the random boards of
//! `common/boards.rs`, not against the library's helpers.

mod common;

use awari_egdb::index::{self, LayerIter};
use awari_egdb::rules::Position;
use common::boards::{random_indexable, valid};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const PITS: usize = 12;
const MAX: u32 = 48;

// ---------------------------------------------------------------------------
// Helpers written independently of the library.
// ---------------------------------------------------------------------------

/// Calls `f` with every distribution of `n` seeds over 12 pits, in
/// colexicographic order: pit 11 most significant, then 10, ..., pit 0, each
/// ascending.
fn enumerate_colex(n: u32, f: &mut impl FnMut([u8; PITS])) {
    fn rec(k: usize, left: u32, b: &mut [u8; PITS], f: &mut impl FnMut([u8; PITS])) {
        if k == 0 {
            b[0] = left as u8;
            f(*b);
            return;
        }
        for s in 0..=left {
            b[k] = s as u8;
            rec(k - 1, left - s, b, f);
        }
        b[k] = 0;
    }
    let mut b = [0u8; PITS];
    rec(PITS - 1, n, &mut b, f);
}

/// Binomial coefficient in u128 (0 when k > n).
fn binom(n: u64, k: u64) -> u128 {
    if k > n {
        return 0;
    }
    let mut r: u128 = 1;
    for i in 0..k {
        r = r * (n - i) as u128 / (i + 1) as u128;
    }
    r
}

/// Layer size from the spec's closed form `C(n+11,11) - C(n+5,11)`.
fn spec_layer_size(n: u32) -> u64 {
    let n = n as u64;
    (binom(n + 11, 11) - binom(n + 5, 11)) as u64
}

/// An independent ranker: a DP table `t[k][m][e]` = number of ways to fill
/// pits `0..k` with `m` seeds such that `e` == "some opponent pit (index >= 6)
/// among them is empty". The rank of P is the number of valid Q that precede
/// it: for each pit k (from 11 down), the Q that agree with P above k and hold
/// fewer seeds than P at k, completed in every way below k.
struct DpRanker {
    t: Vec<[[u64; 2]; MAX as usize + 1]>,
}

impl DpRanker {
    fn new() -> Self {
        let mut t = vec![[[0u64; 2]; MAX as usize + 1]; PITS + 1];
        t[0][0][0] = 1;
        for k in 0..PITS {
            for m in 0..=MAX as usize {
                for e in 0..2 {
                    let c = t[k][m][e];
                    if c == 0 {
                        continue;
                    }
                    for v in 0..=(MAX as usize - m) {
                        let e2 = e == 1 || (k >= 6 && v == 0);
                        t[k + 1][m + v][e2 as usize] += c;
                    }
                }
            }
        }
        DpRanker { t }
    }

    /// Valid positions of the layer (should equal the layer size).
    fn layer_size(&self, n: u32) -> u64 {
        self.t[PITS][n as usize][1]
    }

    fn rank(&self, b: &[u8; PITS]) -> u64 {
        let mut m: usize = b.iter().map(|&x| x as usize).sum();
        let mut empty_above = false;
        let mut r = 0u64;
        for k in (0..PITS).rev() {
            let s = b[k] as usize;
            for q in 0..s {
                let e = empty_above || (k >= 6 && q == 0);
                let rest = m - q;
                let row = &self.t[k][rest];
                r += if e { row[0] + row[1] } else { row[1] };
            }
            if k >= 6 && s == 0 {
                empty_above = true;
            }
            m -= s;
        }
        r
    }
}

// ---------------------------------------------------------------------------
// Index.
// ---------------------------------------------------------------------------

#[test]
fn index_is_dense_colex_rank_for_small_layers() {
    for n in 0..=10u32 {
        let mut iter = LayerIter::new(n);
        let mut count = 0u64;
        let mut total = 0u64;
        enumerate_colex(n, &mut |b| {
            total += 1;
            if !valid(&b) {
                return;
            }
            let p = Position(b);
            assert_eq!(p.seeds(), n);
            assert_eq!(index::rank(&p), count, "rank of {p} in layer {n}");
            assert_eq!(index::goedel(&p).ok(), Some(count), "goedel of {p}");
            assert_eq!(
                index::unrank(n, count).ok(),
                Some(p),
                "unrank({n}, {count})"
            );
            assert_eq!(iter.next(), Some((count, p)), "LayerIter({n}) at {count}");
            count += 1;
        });
        assert_eq!(iter.next(), None, "LayerIter({n}) runs past the layer");
        assert_eq!(index::layer_size(n), count, "layer_size({n})");
        assert_eq!(index::distributions(n), total, "distributions({n})");
        assert_eq!(spec_layer_size(n), count, "spec formula for layer {n}");
    }
}

#[test]
fn goedel_rejects_boards_without_an_empty_opponent_pit() {
    assert!(index::goedel(&Position::initial()).is_err());
    assert!(index::goedel(&Position([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1])).is_err());
    assert!(index::goedel(&Position([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0])).is_ok());
}

#[test]
fn layer_iter_ranges_are_slices_of_the_full_iteration() {
    let mut rng = StdRng::seed_from_u64(0x1a7e_5117);
    for n in [0u32, 1, 2, 5, 6, 7, 9, 11, 12] {
        let full: Vec<(u64, Position)> = LayerIter::new(n).collect();
        let size = index::layer_size(n);
        assert_eq!(full.len() as u64, size, "LayerIter::new({n}) length");
        for (i, (g, p)) in full.iter().enumerate() {
            assert_eq!(*g, i as u64);
            assert_eq!(p.seeds(), n);
        }
        let mut ranges: Vec<(u64, u64)> = vec![
            (0, 0),
            (0, 1),
            (0, size),
            (size - 1, size),
            (size, size),
            (0, size + 10),
            (size / 2, size / 2 + 1),
            (size / 3, 2 * size / 3),
            (size / 2, size / 3),
            (size + 5, size + 9),
        ];
        for _ in 0..5 {
            let a = rng.gen_range(0..=size);
            let b = rng.gen_range(a..=size + 3);
            ranges.push((a, b));
        }
        for (a, b) in ranges {
            let got: Vec<(u64, Position)> = LayerIter::range(n, a, b).collect();
            let lo = a.min(size) as usize;
            let hi = b.min(size) as usize;
            let want: &[(u64, Position)] = if lo < hi { &full[lo..hi] } else { &[] };
            assert_eq!(got.as_slice(), want, "LayerIter::range({n}, {a}, {b})");
        }
    }
}

#[test]
fn layer_iter_size_hint_is_exact() {
    // Non-empty ranges, followed as they are consumed.
    for n in [0u32, 3, 12] {
        let size = index::layer_size(n);
        for (a, b) in [(0, size), (size / 2, size), (1, size + 100), (0, 1)] {
            let a = a.min(size);
            let mut it = LayerIter::range(n, a, b);
            let mut left = b.min(size) - a;
            loop {
                assert_eq!(
                    it.size_hint(),
                    (left as usize, Some(left as usize)),
                    "range({n}, {a}, {b})"
                );
                if it.next().is_none() {
                    break;
                }
                left -= 1;
            }
            assert_eq!(left, 0);
        }
    }
    // Empty ranges: the start at or past the (clamped) end. These iterate
    // nothing, so the hint must be (0, Some(0)).
    for (n, a, b) in [
        (0u32, 1, 1),
        (5, 10, 10),
        (5, 10, 3),
        (0, 6, 10),
        (12, 2_000_000, 3_000_000),
    ] {
        let it = LayerIter::range(n, a, b);
        assert_eq!(
            it.clone().count(),
            0,
            "range({n}, {a}, {b}) yields something"
        );
        assert_eq!(
            it.size_hint(),
            (0, Some(0)),
            "size_hint of empty range({n}, {a}, {b})"
        );
    }
}

#[test]
fn random_round_trips_in_every_layer() {
    let mut rng = StdRng::seed_from_u64(20_030_710);
    const PER_LAYER: usize = 2_100; // x 49 layers x 2 directions ~ 200k
    for n in 0..=MAX {
        let size = index::layer_size(n);
        for i in 0..PER_LAYER {
            // position -> rank -> unrank
            let p = random_indexable(&mut rng, n, i % 2 == 0);
            let g = index::rank(&p);
            assert!(g < size, "rank {g} of {p} outside layer {n} (size {size})");
            assert_eq!(index::unrank(n, g).ok(), Some(p), "unrank(rank({p}))");
            assert_eq!(index::unrank_unchecked(n, g), p);
            // index -> unrank -> rank
            let g = match i {
                0 => 0,
                1 => size - 1,
                _ => rng.gen_range(0..size),
            };
            let q = index::unrank(n, g).unwrap();
            assert_eq!(q.seeds(), n, "unrank({n}, {g}) = {q}");
            assert!(valid(&q.0), "unrank({n}, {g}) = {q} is not indexable");
            assert_eq!(index::rank(&q), g, "rank(unrank({n}, {g}))");
        }
        // ends of the layer
        let mut first = [0u8; PITS];
        first[0] = n as u8;
        assert_eq!(index::rank(&Position(first)), 0, "first of layer {n}");
        if n > 0 {
            let mut last = [0u8; PITS];
            last[11] = n as u8;
            assert_eq!(index::rank(&Position(last)), size - 1, "last of layer {n}");
        }
        assert!(
            index::unrank(n, size).is_err(),
            "unrank({n}, size) must fail"
        );
        assert!(
            index::unrank(n, u64::MAX).is_err(),
            "unrank({n}, MAX) must fail"
        );
    }
    assert!(index::unrank(49, 0).is_err());
    assert!(index::unrank(u32::MAX, 0).is_err());
}

#[test]
fn layer_sizes_match_the_oracle_file() {
    let path = concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/.."),
        "/data/layer-sizes.csv"
    );
    let text = std::fs::read_to_string(path).expect("read data/layer-sizes.csv");
    let mut lines = text.lines();
    let header = lines.next().expect("header");
    assert!(header.starts_with("seeds,"), "unexpected header {header:?}");
    let mut seen = Vec::new();
    let mut sum: u64 = 0;
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        assert_eq!(f.len(), 3, "bad row {line:?}");
        let n: u32 = f[0].parse().unwrap();
        let entries: u64 = f[1].parse().unwrap();
        let all: u64 = f[2].parse().unwrap();
        assert_eq!(index::layer_size(n), entries, "layer_size({n})");
        assert_eq!(index::distributions(n), all, "distributions({n})");
        assert_eq!(spec_layer_size(n), entries, "spec formula, layer {n}");
        seen.push(n);
        sum += entries;
    }
    let want: Vec<u32> = (0..=46).chain([48]).collect();
    assert_eq!(seen, want, "the file lists layers 0..=46 and 48");
    assert_eq!(sum + 1, 889_063_398_406);

    let lib_sum: u64 = (0..=46).chain([48]).map(index::layer_size).sum();
    assert_eq!(lib_sum + 1, 889_063_398_406);

    // the spec's quoted sizes
    let small = [1u64, 12, 78, 364, 1365, 4368, 12375];
    for (n, &w) in small.iter().enumerate() {
        assert_eq!(index::layer_size(n as u32), w);
    }
    assert_eq!(index::layer_size(16), 12_685_179);
    assert_eq!(index::layer_size(20), 80_214_915);
    assert_eq!(index::layer_size(48), 203_648_015_935);
    // layer 47 is not in the dataset but has index slots by the same formula
    assert_eq!(index::layer_size(47), spec_layer_size(47));
}

#[test]
fn spec_checkpoints() {
    let cases: [([u8; PITS], u64); 3] = [
        ([0, 1, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0], 2726),
        ([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0], 588_953),
        ([0, 2, 3, 4, 5, 6, 0, 2, 3, 4, 5, 6], 31_114_014_134),
    ];
    let dp = DpRanker::new();
    for (b, g) in cases {
        let p = Position::indexable(b).unwrap();
        assert_eq!(index::rank(&p), g, "{p}");
        assert_eq!(dp.rank(&b), g, "DP rank of {p}");
        assert_eq!(index::unrank(p.seeds(), g).ok(), Some(p));
    }
}

#[test]
fn dp_ranker_agrees_with_enumeration() {
    // Validate the test's own DP against plain counting first.
    let dp = DpRanker::new();
    for n in 0..=7u32 {
        let mut count = 0u64;
        enumerate_colex(n, &mut |b| {
            if valid(&b) {
                assert_eq!(dp.rank(&b), count, "DP rank of {b:?}");
                count += 1;
            }
        });
        assert_eq!(dp.layer_size(n), count);
    }
    for n in 0..=MAX {
        assert_eq!(
            dp.layer_size(n),
            index::layer_size(n),
            "DP size of layer {n}"
        );
    }
}

#[test]
fn rank_matches_independent_dp_for_large_layers() {
    let dp = DpRanker::new();
    let fixed: [[u8; PITS]; 6] = [
        [0, 2, 3, 4, 5, 6, 0, 2, 3, 4, 5, 6],  // 40
        [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 8, 0],  // 48
        [0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 12, 0], // 48
        [48, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], // 48, first
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 48], // 48, last
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 0],  // 48
    ];
    for b in fixed {
        let p = Position::indexable(b).unwrap();
        assert_eq!(index::rank(&p), dp.rank(&b), "{p}");
    }
    let mut rng = StdRng::seed_from_u64(0xd1ce);
    for i in 0..3000 {
        let n = rng.gen_range(30..=MAX);
        let p = random_indexable(&mut rng, n, i % 2 == 0);
        assert_eq!(index::rank(&p), dp.rank(&p.0), "{p}");
    }
}

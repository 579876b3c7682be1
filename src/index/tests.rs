//! Unit tests of the Goedel numbering.
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

/// Unranking by a linear scan over each pit's seed count.
fn unrank_by_scan(n: u32, g: u64) -> Position {
    let mut b = [0u8; PITS];
    let mut m = n as i32;
    let mut r = g;
    let mut full = true;
    for k in (1..PITS).rev() {
        let mut s = 0i32;
        if full && k >= 6 {
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
    b[0] = m as u8;
    Position(b)
}

#[test]
fn unrank_agrees_with_a_linear_scan() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for n in 0..=MAX_SEEDS {
        let size = layer_size(n);
        for i in 0..4000u64 {
            let g = match i {
                0 => 0,
                1 => size - 1,
                2 => size / 2,
                _ => {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % size
                }
            };
            assert_eq!(unrank_unchecked(n, g), unrank_by_scan(n, g), "({n}, {g})");
        }
    }
}

#[test]
fn unrank_with_many_seeds_in_the_low_pits() {
    // Pits 0..=3 holding `a` seeds leave `t` at pit 3 up to `W(4, a)`,
    // beyond the table that places pits 3..=1 at once.
    for n in [28u32, 37, 48] {
        for a in [26u32, 28, 31].into_iter().filter(|&a| a <= n) {
            for p3 in 0..=a {
                for p2 in 0..=a - p3 {
                    for p1 in 0..=a - p3 - p2 {
                        let mut b = [0u8; PITS];
                        b[3] = p3 as u8;
                        b[2] = p2 as u8;
                        b[1] = p1 as u8;
                        b[0] = (a - p3 - p2 - p1) as u8;
                        b[11] = (n - a) as u8;
                        let p = Position(b);
                        assert_eq!(unrank_unchecked(n, rank(&p)), p, "{p}");
                    }
                }
            }
        }
    }
}

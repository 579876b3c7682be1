//! The `entropy` group of the `compress` bench: empirical conditional
//! entropies of one layer's raw tables in the contexts the coders use
//! (the scores' nested contexts, the finest of which format 4 codes
//! with; the envelope's of the retired format 3).

use super::{block_sizes, command, env_layer, read_layer};
use awari_egdb::index::LayerIter;
use std::path::Path;

/// Symbol counts per context, for an empirical conditional entropy.
struct Cond {
    alphabet: usize,
    counts: Vec<u64>,
}

impl Cond {
    fn new(contexts: usize, alphabet: usize) -> Cond {
        Cond {
            alphabet,
            counts: vec![0; contexts * alphabet],
        }
    }

    #[inline(always)]
    fn add(&mut self, ctx: usize, x: usize) {
        self.counts[ctx * self.alphabet + x] += 1;
    }

    /// H(symbol | context), bits per entry counted.
    fn bits(&self) -> f64 {
        let (mut entries, mut sum) = (0u64, 0.0);
        for row in self.counts.chunks(self.alphabet) {
            let total: u64 = row.iter().sum();
            entries += total;
            for &c in row.iter().filter(|&&c| c > 0) {
                sum -= c as f64 * (c as f64 / total as f64).log2();
            }
        }
        sum / entries.max(1) as f64
    }
}

/// A raw table as symbols `v + n` (0..=2n).
fn symbols(raw: Vec<u8>, n: u32, what: &str) -> Vec<u8> {
    let mut s = raw;
    for (g, v) in s.iter_mut().enumerate() {
        let x = *v as i8 as i32 + n as i32;
        assert!(
            (0..=2 * n as i32).contains(&x),
            "{what}.{n} entry {g}: {} outside -{n}..={n}",
            *v as i8
        );
        *v = x as u8;
    }
    s
}

/// The entropies of layer `n`'s tables in those contexts, which
/// stop at the start of a block of `block_size` entries; with the names
/// of the rows.
fn entropies(
    n: u32,
    s: &[u8],
    envelope: Option<(&[u8], &[u8])>,
    block_size: u32,
) -> Vec<(&'static str, f64)> {
    let al = 2 * n as usize + 1;
    let none = al;
    let vv = al + 1;
    let mut h = [
        Cond::new(1, al),
        Cond::new(vv, al),
        Cond::new(vv * vv, al),
        Cond::new(vv * vv * 5, al),
        Cond::new(vv * vv * 15, al),
    ];
    let mut e = envelope.map(|_| {
        [
            Cond::new(1, al),
            Cond::new(al, al),
            Cond::new(al * al, al),
            Cond::new(al, al),
            Cond::new(al * al, al),
            Cond::new(al * 36, al),
            Cond::new(al * al * 6, al),
        ]
    });
    let bs = block_size as usize;
    for (g, p) in LayerIter::new(n) {
        let g = g as usize;
        let i = g % bs;
        let x = s[g] as usize;
        // One seed moved back from pit 2 to pit 0: k entries earlier, if
        // inside the block.
        let back = (p.0[2] > 0)
            .then(|| p.0[0] as usize + p.0[1] as usize + 2)
            .filter(|&k| k <= i);
        let s1 = if i > 0 { s[g - 1] as usize } else { none };
        let sk = back.map_or(none, |k| s[g - k] as usize);
        let p0 = p.0[0].min(4) as usize;
        // Whether the score before the previous one was lower, equal or
        // higher (equal at the start of a block, as the coder).
        let t = if i > 1 {
            (s[g - 2].cmp(&s[g - 1]) as i8 + 1) as usize
        } else {
            1
        };
        let c = s1 * vv + sk;
        h[0].add(0, x);
        h[1].add(s1, x);
        h[2].add(c, x);
        h[3].add(c * 5 + p0, x);
        h[4].add((c * 5 + p0) * 3 + t, x);
        if let (Some(e), Some((lo, up))) = (&mut e, envelope) {
            let (l, u) = (lo[g] as usize, up[g] as usize);
            assert!(
                l <= x && x <= u,
                "entry {g}: lower, score, upper out of order"
            );
            let (ai, bi, w) = (x - l, u - x, u - l);
            e[0].add(0, l);
            e[1].add(l, w);
            e[2].add(l * al + w, ai);
            e[3].add(x, ai);
            e[4].add(x * al + ai, bi);
            // The coder's contexts: neighbours' a and b, at most 4, 5 for
            // none.
            let a_at = |j: usize| (s[j] - lo[j]).min(4) as usize;
            let a1 = if i > 0 { a_at(g - 1) } else { 5 };
            let ak = back.map_or(5, |k| a_at(g - k));
            e[5].add((x * 6 + a1) * 6 + ak, ai);
            let b1 = if i > 0 {
                (up[g - 1] - s[g - 1]).min(4) as usize
            } else {
                5
            };
            e[6].add((x * al + ai) * 6 + b1, bi);
        }
    }
    let mut rows = vec![
        ("H(S)", h[0].bits()),
        ("H(S \\| S[g-1])", h[1].bits()),
        ("H(S \\| S[g-1], S[g-k])", h[2].bits()),
        ("H(S \\| S[g-1], S[g-k], min(p0,4))", h[3].bits()),
        (
            "H(S \\| S[g-1], S[g-k], min(p0,4), sign(S[g-2]-S[g-1]))",
            h[4].bits(),
        ),
    ];
    if let Some(e) = e {
        let (sc, ac, bc) = (h[4].bits(), e[5].bits(), e[6].bits());
        rows.extend([
            ("H(lower)", e[0].bits()),
            ("H(upper-lower \\| lower)", e[1].bits()),
            ("H(S-lower \\| lower, upper-lower)", e[2].bits()),
            ("H(S-lower \\| S)", e[3].bits()),
            ("H(upper-S \\| S, S-lower)", e[4].bits()),
            (
                "H(S-lower \\| S, min(a[g-1],4), min(a[g-k],4)) (the coder's a)",
                ac,
            ),
            (
                "H(upper-S \\| S, S-lower, min(b[g-1],4)) (the coder's b)",
                bc,
            ),
            (
                "three tables in the coder's contexts (S finest + a + b)",
                sc + ac + bc,
            ),
        ]);
    }
    rows
}

/// The empirical conditional entropies of one layer's raw tables, in
/// bits per position (S the score, g the Goedel index, k = p0 + p1 + 2 the
/// entry with one seed moved back from pit 2 to pit 0, when pit 2 has one).
pub fn entropy(dir: &Path) {
    println!("`{}`\n", command(dir, "entropy"));
    let n = env_layer();
    let Some((s, envelope)) = read_layer(dir, n) else {
        eprintln!("layer {n}: no scores.{n} in {}; skipping", dir.display());
        return;
    };
    let s = symbols(s, n, "scores");
    let envelope = envelope.map(|(l, u)| (symbols(l, n, "lower"), symbols(u, n, "upper")));
    let blocks = block_sizes();
    let columns: Vec<Vec<(&str, f64)>> = blocks
        .iter()
        .map(|&b| entropies(n, &s, envelope.as_ref().map(|(l, u)| (&l[..], &u[..])), b))
        .collect();
    println!(
        "layer {n} ({} positions): empirical entropies in bits per position, and the bytes they come to; \
         g the Goedel index, k = p0 + p1 + 2 (one seed moved back from pit 2 to pit 0, when pit 2 holds one); \
         a neighbour before the start of its block of B entries is \"none\" (the sign then \"equal\"), as in the coder\n",
        s.len()
    );
    print!("| entropy |");
    for b in &blocks {
        print!(" bits/pos (B = {b}) | bytes (B = {b}) |");
    }
    println!();
    println!("|---|{}", "---|---|".repeat(blocks.len()));
    for r in 0..columns[0].len() {
        print!("| {} |", columns[0][r].0);
        for c in &columns {
            let bits = c[r].1;
            print!(" {bits:.4} | {:.0} |", bits * s.len() as f64 / 8.0);
        }
        println!();
    }
    println!();
}

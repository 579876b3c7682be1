//! The model of format 4: contexts clustered into classes, each class a
//! distribution over the alphabet in multiples of `1 / 2^PROB_BITS`, and
//! the tables the coder reads them through.
//!
//! Counting: every entry counts under its context and, with weight 1
//! against [`WEIGHT`], under the contexts it has when its neighbours lie
//! before its block's start (the previous scores unknown, the Goedel
//! neighbour unknown). So every context a block can meet, wherever the
//! blocks happen to start, has its symbols counted, and every symbol
//! coded has a frequency of at least 1 in its class.
//!
//! Clustering: k-means on the distributions, the distance of a context to
//! a class the bits its symbols would take coded by the class's
//! distribution; classes seeded by the most frequent contexts.

use super::context::contexts;
use super::shape::Shape;
use rayon::prelude::*;

/// Probabilities are multiples of `1 / 2^PROB_BITS`.
pub const PROB_BITS: u32 = 12;
/// Slots of a distribution.
pub const SLOTS: u32 = 1 << PROB_BITS;
/// The most classes a file has (a class id is a byte).
pub const MAX_CLASSES: u32 = 256;
/// The weight of an entry's own context against its fallbacks.
pub const WEIGHT: u64 = 16;
/// Rounds of k-means.
const ROUNDS: usize = 8;

/// Symbol counts per context.
#[derive(Clone, Debug)]
pub struct Counts {
    alphabet: usize,
    n: Vec<u64>,
}

impl Counts {
    /// Zero counts for the contexts of `shape`.
    pub fn new(shape: Shape) -> Counts {
        Counts::sized(contexts(shape), shape.alphabet)
    }

    /// Zero counts for `contexts` contexts of `alphabet` symbols.
    pub fn sized(contexts: u32, alphabet: u32) -> Counts {
        Counts {
            alphabet: alphabet as usize,
            n: vec![0; contexts as usize * alphabet as usize],
        }
    }

    /// Adds `w` to symbol `s` in context `ctx`.
    #[inline]
    pub fn add(&mut self, ctx: u32, s: u8, w: u64) {
        self.n[ctx as usize * self.alphabet + s as usize] += w;
    }

    /// Adds another part's counts.
    pub fn merge(&mut self, other: &Counts) {
        for (a, b) in self.n.iter_mut().zip(&other.n) {
            *a += b;
        }
    }

    fn row(&self, c: usize) -> &[u64] {
        &self.n[c * self.alphabet..(c + 1) * self.alphabet]
    }

    fn contexts(&self) -> usize {
        self.n.len() / self.alphabet
    }
}

/// The model of a file: the class of each context and each class's
/// frequencies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    /// Context -> class.
    pub class: Vec<u8>,
    /// Per class, the frequency of each symbol (summing to [`SLOTS`], or
    /// all zero for a class no context uses).
    pub freqs: Vec<Vec<u32>>,
}

/// Frequencies summing to [`SLOTS`] from counts, every counted symbol at
/// least 1; all zero when nothing was counted.
pub fn normalize(counts: &[u64]) -> Vec<u32> {
    let total: u64 = counts.iter().sum();
    let mut f = vec![0u32; counts.len()];
    if total == 0 {
        return f;
    }
    for (fi, &c) in f.iter_mut().zip(counts) {
        if c > 0 {
            *fi = ((c as u128 * SLOTS as u128 / total as u128) as u32).max(1);
        }
    }
    let mut sum: i64 = f.iter().map(|&x| x as i64).sum();
    while sum != SLOTS as i64 {
        // The symbol whose frequency change costs least per slot.
        let k = (0..f.len())
            .filter(|&k| counts[k] > 0 && (sum < SLOTS as i64 || f[k] > 1))
            .max_by(|&a, &b| {
                let r = |k: usize| counts[k] as f64 / f[k] as f64;
                if sum < SLOTS as i64 {
                    r(a).total_cmp(&r(b))
                } else {
                    r(b).total_cmp(&r(a))
                }
            })
            .expect("a symbol was counted");
        if sum > SLOTS as i64 {
            f[k] -= 1;
            sum -= 1;
        } else {
            f[k] += 1;
            sum += 1;
        }
    }
    f
}

/// The bits `counts` take coded with `logs` (minus log2 of each
/// symbol's probability).
#[inline]
fn cost(counts: &[u64], logs: &[f64]) -> f64 {
    counts
        .iter()
        .zip(logs)
        .filter(|(&c, _)| c > 0)
        .map(|(&c, &l)| c as f64 * l)
        .sum()
}

fn logs_of(counts: &[u64]) -> Vec<f64> {
    let total: u64 = counts.iter().sum();
    let a = counts.len() as f64;
    counts
        .iter()
        .map(|&c| -((c as f64 + 0.02) / (total as f64 + 0.02 * a)).log2())
        .collect()
}

impl Model {
    /// Clusters the contexts of `counts` into at most `classes` classes.
    pub fn cluster(counts: &Counts, classes: u32) -> Model {
        let a = counts.alphabet;
        let nc = counts.contexts();
        let totals: Vec<u64> = (0..nc).map(|c| counts.row(c).iter().sum()).collect();
        let mut active: Vec<usize> = (0..nc).filter(|&c| totals[c] > 0).collect();
        active.sort_by_key(|&c| std::cmp::Reverse(totals[c]));
        let k = (classes as usize).clamp(1, MAX_CLASSES as usize);
        let mut class = vec![0u8; nc];
        // Seeds: the most frequent contexts.
        let mut sums: Vec<Vec<u64>> = active
            .iter()
            .take(k)
            .map(|&c| counts.row(c).to_vec())
            .collect();
        if sums.is_empty() {
            sums.push(vec![0; a]);
        }
        for _ in 0..ROUNDS {
            let logs: Vec<Vec<f64>> = sums.iter().map(|s| logs_of(s)).collect();
            let chosen: Vec<u8> = active
                .par_iter()
                .map(|&c| {
                    let row = counts.row(c);
                    let mut best = (f64::INFINITY, 0usize);
                    for (j, l) in logs.iter().enumerate() {
                        let x = cost(row, l);
                        if x < best.0 {
                            best = (x, j);
                        }
                    }
                    best.1 as u8
                })
                .collect();
            let mut next = vec![vec![0u64; a]; sums.len()];
            for (&c, &j) in active.iter().zip(&chosen) {
                class[c] = j;
                for (d, s) in next[j as usize].iter_mut().zip(counts.row(c)) {
                    *d += s;
                }
            }
            if next == sums {
                break;
            }
            // A class left empty keeps its old centre.
            for (n, s) in next.iter_mut().zip(&sums) {
                if n.iter().all(|&x| x == 0) {
                    n.clone_from(s);
                }
            }
            sums = next;
        }
        // The final classes' counts, from the final assignment only.
        let mut fin = vec![vec![0u64; a]; sums.len()];
        for &c in &active {
            for (d, s) in fin[class[c] as usize].iter_mut().zip(counts.row(c)) {
                *d += s;
            }
        }
        Model {
            class,
            freqs: fin.iter().map(|c| normalize(c)).collect(),
        }
    }

    /// The model's bytes: the class count, the class of every context,
    /// then each class's frequencies (LEB128, one per symbol).
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.freqs.len() as u16).to_le_bytes());
        out.extend_from_slice(&self.class);
        for f in &self.freqs {
            for &x in f {
                put_varint(out, x);
            }
        }
    }

    /// Reads a model of layer `shape.n` from exactly `b`; what is wrong
    /// otherwise.
    pub fn read(b: &[u8], shape: Shape) -> Result<Model, String> {
        let (model, at) = Model::read_from(b, contexts(shape), shape.alphabet)?;
        if at != b.len() {
            return Err(format!("{} bytes after the model", b.len() - at));
        }
        Ok(model)
    }

    /// Reads a model of `contexts` contexts over `alphabet` symbols from
    /// the start of `b`: the model and the bytes it took; what is wrong
    /// otherwise.
    pub fn read_from(b: &[u8], contexts: u32, alphabet: u32) -> Result<(Model, usize), String> {
        let nc = contexts as usize;
        if b.len() < 2 + nc {
            return Err(format!("{} bytes, the class map needs {}", b.len(), 2 + nc));
        }
        let k = u16::from_le_bytes([b[0], b[1]]) as usize;
        if k == 0 || k > MAX_CLASSES as usize {
            return Err(format!("{k} classes, not 1..={MAX_CLASSES}"));
        }
        let class = b[2..2 + nc].to_vec();
        if let Some(c) = class.iter().position(|&c| c as usize >= k) {
            return Err(format!("context {c} is of class {}, of {k}", class[c]));
        }
        let mut at = 2 + nc;
        let mut freqs = Vec::with_capacity(k);
        for j in 0..k {
            let mut f = Vec::with_capacity(alphabet as usize);
            for _ in 0..alphabet {
                let x = get_varint(b, &mut at).ok_or("the frequencies end early")?;
                if x > SLOTS {
                    return Err(format!("class {j}: a frequency of {x}"));
                }
                f.push(x);
            }
            let sum: u32 = f.iter().sum();
            if sum != SLOTS && sum != 0 {
                return Err(format!("class {j}: frequencies sum to {sum}"));
            }
            freqs.push(f);
        }
        Ok((Model { class, freqs }, at))
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], at: &mut usize) -> Option<u32> {
    let mut v = 0u32;
    for shift in (0..35).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= ((byte & 0x7f) as u32).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

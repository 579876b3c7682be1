//! The entropy coder of format version 3: rANS with a 64-bit state read
//! 32 bits at a time, with static context models.
//!
//! A model maps a context (a small integer computed from values already
//! coded) to a distribution over an alphabet of at most 256 symbols, each
//! probability a multiple of 1/4096. Models are built from the counts of
//! the whole table ([`Counts`] then [`Model::from_counts`]), stored in the
//! file ([`Model::write`], [`Model::read`]) and never adapt, so any block
//! decodes on its own.
//!
//! A block's stream is coded backwards, as rANS requires, and starts with
//! the coder's final state (8 bytes, big-endian). The coder starts from a
//! state that carries a 31-bit hash of the block's values: the decoder
//! must end in exactly that state having read exactly the stream's bytes,
//! which checks the stream and the values it gave at no cost in bytes.

/// Probabilities are multiples of `1 / 2^PROB_BITS`.
pub const PROB_BITS: u32 = 12;
const TOTAL: u32 = 1 << PROB_BITS;
/// The lower bound of the coder's state, which lies in `LOW .. 2^63`; the
/// stream is read 32 bits at a time.
const LOW: u64 = 1 << 31;
/// Padding of a model's rows: above every slot (and positive as `i16`).
const PAD: u16 = 0x7fff;
/// A model's rows are padded to a multiple of this many entries, so that
/// the search for a slot's symbol is a fixed number of vector compares.
const LANES: usize = 16;
/// The context id of a context the model does not hold.
const ABSENT: u32 = u32::MAX;

/// Why a model or a stream cannot be decoded (the caller names the block
/// or the model).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnsError {
    /// The stream ends before its symbols do.
    Short,
    /// The stream has bytes left after its last symbol, or ends in another
    /// state than the one its values call for.
    Check,
    /// A context the model has no distribution for.
    Context(u32),
    /// The model's bytes are malformed.
    Model(String),
}

impl std::fmt::Display for AnsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnsError::Short => write!(f, "the stream ends early"),
            AnsError::Check => write!(
                f,
                "the stream does not end in the state its values call for"
            ),
            AnsError::Context(c) => write!(f, "context {c} is not in the model"),
            AnsError::Model(m) => write!(f, "{m}"),
        }
    }
}

/// Symbol counts per context, gathered over a table.
#[derive(Clone, Debug)]
pub struct Counts {
    contexts: u32,
    alphabet: u32,
    n: Vec<u64>,
}

impl Counts {
    /// Zero counts for `contexts` contexts over `alphabet` symbols.
    pub fn new(contexts: u32, alphabet: u32) -> Self {
        Counts {
            contexts,
            alphabet,
            n: vec![0; contexts as usize * alphabet as usize],
        }
    }

    /// Counts one symbol in one context.
    #[inline]
    pub fn add(&mut self, ctx: u32, sym: u8) {
        self.n[ctx as usize * self.alphabet as usize + sym as usize] += 1;
    }

    /// Adds another table's counts.
    pub fn merge(&mut self, other: &Counts) {
        for (a, b) in self.n.iter_mut().zip(&other.n) {
            *a += b;
        }
    }

    /// The counts of context `ctx`.
    fn of(&self, ctx: u32) -> &[u64] {
        let a = self.alphabet as usize;
        &self.n[ctx as usize * a..(ctx as usize + 1) * a]
    }

    /// Counts of a coarser context map: context `c` counts toward
    /// `project(c)`, one of `contexts` contexts.
    pub fn project(&self, contexts: u32, project: impl Fn(u32) -> u32) -> Counts {
        let mut out = Counts::new(contexts, self.alphabet);
        let a = self.alphabet as usize;
        for c in 0..self.contexts {
            let to = project(c) as usize * a;
            for (d, s) in out.n[to..to + a].iter_mut().zip(self.of(c)) {
                *d += s;
            }
        }
        out
    }
}

/// A static model: per context, the cumulative frequencies of its symbols.
#[derive(Clone, Debug)]
pub struct Model {
    alphabet: u32,
    contexts: u32,
    /// Entries per row of `ends`: the alphabet rounded up to [`LANES`].
    stride: usize,
    /// Context -> first entry of its row in `ends`, or [`ABSENT`].
    row: Vec<u32>,
    /// Per row, where each symbol's range of slots ends (the cumulative
    /// frequencies `1..=alphabet`, the last 4096), padded with [`PAD`]:
    /// a slot's symbol is the number of ends at or below it.
    ends: Vec<u16>,
}

/// Frequencies (summing to [`TOTAL`], each symbol seen at least 1) from
/// counts; all zero when nothing was counted.
fn normalize(counts: &[u64]) -> Vec<u32> {
    let total: u64 = counts.iter().sum();
    let mut f = vec![0u32; counts.len()];
    if total == 0 {
        return f;
    }
    for (fi, &c) in f.iter_mut().zip(counts) {
        if c > 0 {
            *fi = ((c as u128 * TOTAL as u128 / total as u128) as u32).max(1);
        }
    }
    // Bring the sum to TOTAL: the largest frequencies give or take.
    let mut sum: i64 = f.iter().map(|&x| x as i64).sum();
    while sum != TOTAL as i64 {
        let (k, _) = f
            .iter()
            .enumerate()
            .max_by_key(|&(k, &x)| (x, std::cmp::Reverse(k)))
            .expect("a symbol was counted");
        if sum > TOTAL as i64 {
            // The largest of at most 256 frequencies summing to more than
            // 4096 is at least 16: it can always give one.
            let take = (sum - TOTAL as i64).min(f[k] as i64 - 1);
            f[k] -= take as u32;
            sum -= take;
        } else {
            f[k] += (TOTAL as i64 - sum) as u32;
            sum = TOTAL as i64;
        }
    }
    f
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], at: &mut usize) -> Result<u64, AnsError> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b
            .get(*at)
            .ok_or_else(|| AnsError::Model("the model ends early".into()))?;
        *at += 1;
        v |= ((byte & 0x7f) as u64) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(AnsError::Model("a number of more than 64 bits".into()))
}

impl Model {
    /// The model of `counts` (contexts never counted are left out).
    pub fn from_counts(counts: &Counts) -> Model {
        let mut freqs = Vec::new();
        for c in 0..counts.contexts {
            let f = normalize(counts.of(c));
            if f.iter().any(|&x| x > 0) {
                freqs.push((c, f));
            }
        }
        Model::from_freqs(counts.contexts, counts.alphabet, &freqs)
            .expect("normalized frequencies make a model")
    }

    fn from_freqs(
        contexts: u32,
        alphabet: u32,
        freqs: &[(u32, Vec<u32>)],
    ) -> Result<Model, AnsError> {
        let stride = (alphabet as usize).div_ceil(LANES).max(1) * LANES;
        let mut m = Model {
            alphabet,
            contexts,
            stride,
            row: vec![ABSENT; contexts as usize],
            ends: Vec::with_capacity(freqs.len() * stride),
        };
        for (c, f) in freqs {
            if *c >= contexts || m.row[*c as usize] != ABSENT {
                return Err(AnsError::Model(format!("context {c} out of order")));
            }
            if f.iter().map(|&x| x as u64).sum::<u64>() != TOTAL as u64 {
                return Err(AnsError::Model(format!(
                    "context {c}: frequencies do not sum to {TOTAL}"
                )));
            }
            m.row[*c as usize] = m.ends.len() as u32;
            let mut acc = 0u32;
            for &x in f {
                acc += x;
                m.ends.push(acc as u16);
            }
            m.ends.resize(m.ends.len() + stride - f.len(), PAD);
        }
        Ok(m)
    }

    /// The first slot and the frequency of symbol `sym` in context `ctx`.
    #[inline]
    fn range(&self, ctx: u32, sym: usize) -> (u32, u32) {
        let r = self.row[ctx as usize] as usize;
        let e = &self.ends[r..r + self.stride];
        let lo = if sym == 0 { 0 } else { e[sym - 1] as u32 };
        (lo, e[sym] as u32 - lo)
    }

    /// Appends the model's bytes: the number of contexts held, then per
    /// context the gap from the previous one, its number of symbols and,
    /// per symbol, the gap from the previous symbol and its frequency.
    pub fn write(&self, out: &mut Vec<u8>) {
        let rows: Vec<u32> = (0..self.contexts)
            .filter(|&c| self.row[c as usize] != ABSENT)
            .collect();
        put_varint(out, rows.len() as u64);
        let mut prev = 0u32;
        for c in rows {
            put_varint(out, (c - prev) as u64);
            prev = c;
            let syms: Vec<(usize, u32)> = (0..self.alphabet as usize)
                .map(|s| (s, self.range(c, s).1))
                .filter(|&(_, f)| f > 0)
                .collect();
            put_varint(out, syms.len() as u64);
            let mut ps = 0usize;
            for (s, f) in syms {
                put_varint(out, (s - ps) as u64);
                ps = s;
                put_varint(out, f as u64 - 1);
            }
        }
    }

    /// Reads a model of `contexts` contexts over `alphabet` symbols from
    /// `b` at `at`, checking everything.
    pub fn read(b: &[u8], at: &mut usize, contexts: u32, alphabet: u32) -> Result<Model, AnsError> {
        let bad = |m: String| AnsError::Model(m);
        let rows = get_varint(b, at)?;
        if rows > contexts as u64 {
            return Err(bad(format!("{rows} contexts, at most {contexts}")));
        }
        let mut freqs = Vec::with_capacity(rows as usize);
        let mut c = 0u64;
        for r in 0..rows {
            let gap = get_varint(b, at)?;
            c = c.saturating_add(gap);
            if (r > 0 && gap == 0) || c >= contexts as u64 {
                return Err(bad(format!("context {c} out of order or range")));
            }
            let k = get_varint(b, at)?;
            if k == 0 || k > alphabet as u64 {
                return Err(bad(format!("context {c}: {k} symbols")));
            }
            let mut f = vec![0u32; alphabet as usize];
            let mut s = 0u64;
            for j in 0..k {
                let gap = get_varint(b, at)?;
                s = s.saturating_add(gap);
                if (j > 0 && gap == 0) || s >= alphabet as u64 {
                    return Err(bad(format!(
                        "context {c}: symbol {s} out of order or range"
                    )));
                }
                let x = get_varint(b, at)?;
                if x >= TOTAL as u64 {
                    return Err(bad(format!("context {c}: frequency {}", x + 1)));
                }
                f[s as usize] = x as u32 + 1;
            }
            freqs.push((c as u32, f));
        }
        Model::from_freqs(contexts, alphabet, &freqs)
    }

    /// Bits the counts cost under this model (the model's own bytes not
    /// included).
    pub fn cost(&self, counts: &Counts) -> f64 {
        let mut bits = 0.0;
        for c in 0..counts.contexts {
            if self.row[c as usize] == ABSENT {
                continue;
            }
            for (s, &k) in counts.of(c).iter().enumerate() {
                if k > 0 {
                    let f = self.range(c, s).1 as f64;
                    bits += k as f64 * (PROB_BITS as f64 - f.log2());
                }
            }
        }
        bits
    }
}

/// The state the coder starts from and the decoder must end in: 31 bits
/// of `check` in `LOW .. 2 LOW` (which costs the stream at most a bit).
fn start_state(check: u64) -> u64 {
    LOW + (check & (LOW - 1))
}

/// Appends the stream of `syms` (each symbol with its model and context,
/// in decoding order) to `out`; `check` is the hash of the values they
/// stand for (see the module docs).
pub fn encode<'m>(
    syms: impl DoubleEndedIterator<Item = (&'m Model, u32, u8)>,
    check: u64,
    out: &mut Vec<u8>,
) {
    let start = out.len();
    let mut x = start_state(check);
    for (model, ctx, sym) in syms.rev() {
        let (lo, f) = model.range(ctx, sym as usize);
        debug_assert!(f > 0, "symbol {sym} in context {ctx} has frequency 0");
        let (lo, f) = (lo as u64, f as u64);
        let x_max = ((LOW >> PROB_BITS) << 32) * f;
        if x >= x_max {
            // Pushed low byte first: reversed below, read big-endian.
            out.extend_from_slice(&(x as u32).to_le_bytes());
            x >>= 32;
        }
        x = ((x / f) << PROB_BITS) + (x % f) + lo;
    }
    out.extend_from_slice(&x.to_le_bytes());
    out[start..].reverse();
}

/// Decodes one block's stream, symbol by symbol.
pub struct Decoder<'a> {
    x: u64,
    at: usize,
    bytes: &'a [u8],
    /// The stream ended while the state still wanted bytes.
    short: bool,
}

/// The number of entries of `ends` (a row of [`LANES`]-multiple length)
/// at or below `slot`.
#[inline(always)]
fn rank(ends: &[u16], slot: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; the loads are unaligned loads
        // of 8 u16 inside `ends` (its length is a multiple of 16).
        unsafe {
            let s = _mm_set1_epi16(slot as i16);
            // Each lane counts the ends at or below the slot (a compare
            // gives -1 where the end is above it).
            let mut acc = _mm_setzero_si128();
            for k in (0..ends.len()).step_by(8) {
                let e = _mm_loadu_si128(ends.as_ptr().add(k) as *const __m128i);
                acc = _mm_add_epi16(acc, _mm_cmpgt_epi16(e, s));
            }
            let pairs = _mm_madd_epi16(acc, _mm_set1_epi16(1));
            let quads = _mm_add_epi32(pairs, _mm_shuffle_epi32(pairs, 0b01_00_11_10));
            let all = _mm_add_epi32(quads, _mm_shuffle_epi32(quads, 0b10_11_00_01));
            (ends.len() as i32 + _mm_cvtsi128_si32(all)) as u32
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        ends.iter().filter(|&&e| e as u32 <= slot).count() as u32
    }
}

impl<'a> Decoder<'a> {
    /// Starts on a stream.
    pub fn new(bytes: &'a [u8]) -> Result<Self, AnsError> {
        let head: [u8; 8] = bytes
            .get(..8)
            .ok_or(AnsError::Short)?
            .try_into()
            .expect("8 bytes");
        let x = u64::from_be_bytes(head);
        if !(LOW..1 << 63).contains(&x) {
            return Err(AnsError::Check);
        }
        Ok(Decoder {
            x,
            at: 8,
            bytes,
            short: false,
        })
    }

    /// The next symbol, in context `ctx` of `model`.
    #[inline(always)]
    pub fn next(&mut self, model: &Model, ctx: u32) -> Result<u8, AnsError> {
        let r = *model.row.get(ctx as usize).ok_or(AnsError::Context(ctx))?;
        if r == ABSENT {
            return Err(AnsError::Context(ctx));
        }
        let slot = (self.x & (TOTAL as u64 - 1)) as u32;
        let ends = &model.ends[r as usize..r as usize + model.stride];
        let s = rank(ends, slot);
        let lo = if s == 0 {
            0
        } else {
            ends[s as usize - 1] as u32
        };
        let f = ends[s as usize] as u32 - lo;
        self.x = f as u64 * (self.x >> PROB_BITS) + (slot - lo) as u64;
        // At most one step of 32 bits, without a branch on the data.
        let need = self.x < LOW;
        let v = match self.bytes.get(self.at..self.at + 4) {
            Some(b) => u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as u64,
            None => {
                self.short |= need;
                0
            }
        };
        self.x = if need { (self.x << 32) | v } else { self.x };
        self.at += 4 * need as usize;
        Ok(s as u8)
    }

    /// Checks that the stream ended where and how its values say.
    pub fn finish(&self, check: u64) -> Result<(), AnsError> {
        if self.short {
            return Err(AnsError::Short);
        }
        if self.at != self.bytes.len() || self.x != start_state(check) {
            return Err(AnsError::Check);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(syms: &[(u32, u8)], contexts: u32, alphabet: u32) {
        let mut counts = Counts::new(contexts, alphabet);
        for &(c, s) in syms {
            counts.add(c, s);
        }
        let model = Model::from_counts(&counts);
        let mut bytes = Vec::new();
        model.write(&mut bytes);
        let mut at = 0;
        let back = Model::read(&bytes, &mut at, contexts, alphabet).unwrap();
        assert_eq!(at, bytes.len());
        assert_eq!(back.ends, model.ends);
        let mut out = Vec::new();
        encode(syms.iter().map(|&(c, s)| (&back, c, s)), 12345, &mut out);
        let mut d = Decoder::new(&out).unwrap();
        for &(c, s) in syms {
            assert_eq!(d.next(&back, c).unwrap(), s);
        }
        d.finish(12345).unwrap();
        assert_eq!(d.finish(12346), Err(AnsError::Check));
    }

    #[test]
    fn round_trips() {
        roundtrip(&[(0, 0)], 1, 1);
        let syms: Vec<(u32, u8)> = (0..5000u32)
            .map(|i| ((i % 7), ((i * i + i / 3) % 41) as u8))
            .collect();
        roundtrip(&syms, 7, 41);
        // A very skewed distribution: one symbol nearly always.
        let skew: Vec<(u32, u8)> = (0..20000u32)
            .map(|i| {
                (
                    0,
                    if i % 1000 == 0 {
                        (i / 1000 % 97) as u8
                    } else {
                        3
                    },
                )
            })
            .collect();
        roundtrip(&skew, 1, 97);
    }

    #[test]
    fn normalize_keeps_every_seen_symbol() {
        let mut c = vec![0u64; 97];
        for (i, x) in c.iter_mut().enumerate() {
            *x = if i == 5 { 1 << 40 } else { 1 };
        }
        let f = normalize(&c);
        assert_eq!(f.iter().sum::<u32>(), TOTAL);
        assert!(f.iter().all(|&x| x >= 1));
    }

    #[test]
    fn malformed_models_are_refused() {
        let mut counts = Counts::new(3, 5);
        counts.add(1, 2);
        counts.add(1, 4);
        let m = Model::from_counts(&counts);
        let mut b = Vec::new();
        m.write(&mut b);
        for cut in 0..b.len() {
            let mut at = 0;
            assert!(Model::read(&b[..cut], &mut at, 3, 5).is_err());
        }
        let mut at = 0;
        assert!(Model::read(&b, &mut at, 1, 5).is_err());
        let mut at = 0;
        assert!(Model::read(&b, &mut at, 3, 4).is_err());
    }
}

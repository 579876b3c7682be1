//! The entropy coder of format 4: rANS with a 24-bit state read a byte at
//! a time, each class's distribution laid out for the decoder in buckets
//! of two symbols (the alias method), so that decoding a symbol is one
//! lookup of 16 bytes in a table of 1 KiB a class.
//!
//! A block's stream is coded backwards and starts with the coder's final
//! state (3 bytes, big-endian), then the bytes the decoder reads in order.
//! The coder starts from a state that carries 16 bits of the hash of the
//! block's values: decoding the whole block must end in that state, having
//! read exactly the stream's bytes, with only zeros after them.
//!
//! # The buckets
//!
//! A class's `2^PROB_BITS` slots are cut into `K` buckets of `W` slots
//! (`K` the alphabet rounded up to a power of two, at least 64). The
//! first `d` slots of a bucket stand for its symbol `a`, the others for
//! its alias `b`; each symbol's slots, over all buckets, number its
//! frequency `f`, and slot `j` of the symbol's own (its `k`-th slot in
//! bucket order) is the one the coder gives to the remainder `k` of
//! `x mod f`. The buckets are made by Vose's method from the frequencies
//! alone, so encoder and decoder make the same ones.

use super::model::{PROB_BITS, SLOTS};

/// Bytes of the state written at a block's start.
pub const STATE_BYTES: usize = 3;
/// The state lies in `LOW .. 256 LOW` between symbols.
pub const LOW: u32 = 1 << (8 * STATE_BYTES - 8);
/// Zero bytes after a block's copy, so that the decoder reads two bytes at
/// a time without checking where the block ends.
pub const PAD: usize = 2;

/// The state the coder starts from and a whole block's decoding ends in.
#[inline]
pub fn start_state(check: u64) -> u32 {
    LOW | (check as u32 & (LOW - 1))
}

/// One bucket: for its first `d` slots and for the others, the symbol
/// (bits 0..8), its frequency less one (8..20) and `d` (20..27, in the
/// first word only); and the number that, added to the slot, gives the
/// slot's rank among its symbol's (wrapping).
pub type Bucket = [u32; 4];

/// The coder's tables of a model: per class its buckets (decoding) and
/// per class and symbol its slots in rank order (encoding).
#[derive(Clone, Debug, Default)]
pub struct Tables {
    /// log2 of the buckets a class.
    pub bucket_bits: u32,
    /// Per class, `2^bucket_bits` buckets.
    pub buckets: Vec<Bucket>,
    /// Per class, per symbol, its frequency and where its slots start in
    /// `slot_of`.
    pub freq: Vec<(u32, u32)>,
    /// Per class, the slots of each symbol in rank order (symbol after
    /// symbol).
    pub slot_of: Vec<u16>,
}

impl Tables {
    /// The tables of classes `freqs` (each summing to [`SLOTS`] or all
    /// zero; a class of zeros decodes every slot as symbol 0 of frequency
    /// [`SLOTS`]) over an alphabet of `alphabet` symbols.
    pub fn new(freqs: &[Vec<u32>], alphabet: usize) -> Tables {
        let k = alphabet.next_power_of_two().max(64);
        let bucket_bits = k.trailing_zeros();
        let w = SLOTS as usize / k;
        let mut t = Tables {
            bucket_bits,
            buckets: Vec::with_capacity(freqs.len() * k),
            freq: Vec::with_capacity(freqs.len() * alphabet),
            slot_of: vec![0; freqs.len() * SLOTS as usize],
        };
        let mut f = vec![0u32; k];
        for (c, fc) in freqs.iter().enumerate() {
            f.fill(0);
            if fc.iter().all(|&x| x == 0) {
                f[0] = SLOTS;
            } else {
                f[..fc.len()].copy_from_slice(fc);
            }
            // Where each symbol's slots start in `slot_of`.
            let base = c * SLOTS as usize;
            let mut at = 0u32;
            for &x in &f[..alphabet] {
                t.freq.push((x, base as u32 + at));
                at += x;
            }
            let starts: Vec<u32> = t.freq[c * alphabet..].iter().map(|p| p.1).collect();
            // Vose: every bucket is one symbol short of `w` slots filled
            // up by one with more.
            let mut rem: Vec<usize> = f.iter().map(|&x| x as usize).collect();
            let (mut small, mut large): (Vec<usize>, Vec<usize>) =
                (0..k).partition(|&s| rem[s] < w);
            small.reverse();
            large.reverse();
            let mut rank = vec![0u32; k];
            let mut cut: Vec<(usize, usize, usize)> = Vec::with_capacity(k);
            while let Some(s) = small.pop() {
                let l = large.pop().expect("a symbol above the mean");
                cut.push((s, rem[s], l));
                rem[l] -= w - rem[s];
                if rem[l] < w {
                    small.push(l);
                } else {
                    large.push(l);
                }
            }
            while let Some(l) = large.pop() {
                cut.push((l, w, l));
            }
            for (j, &(a, d, b)) in cut.iter().enumerate() {
                let first = (j * w) as u32;
                let mut part = |s: usize, from: usize, len: usize| -> (u32, u32) {
                    let r = rank[s];
                    for i in 0..len {
                        if s < alphabet {
                            t.slot_of[starts[s] as usize + r as usize + i] =
                                (first + (from + i) as u32) as u16;
                        }
                    }
                    rank[s] += len as u32;
                    let word = s as u32 | (f[s].max(1) - 1) << 8;
                    (word, r.wrapping_sub(first + from as u32))
                };
                let (wa, ba) = part(a, 0, d);
                let (wb, bb) = part(b, d, w - d);
                t.buckets.push([wa | (d as u32) << 20, ba, wb, bb]);
            }
        }
        t
    }
}

/// Codes `syms` (each its class and symbol, in decoding order) into `out`
/// (cleared first) with the tables `t` of an alphabet of `alphabet`;
/// `check` is the hash of the values they stand for.
pub fn encode(t: &Tables, alphabet: usize, syms: &[(u8, u8)], check: u64, out: &mut Vec<u8>) {
    out.clear();
    let mut x = start_state(check);
    for &(c, s) in syms.iter().rev() {
        let (f, at) = t.freq[c as usize * alphabet + s as usize];
        let x_max = ((LOW >> PROB_BITS) << 8) * f;
        while x >= x_max {
            out.push(x as u8);
            x >>= 8;
        }
        x = ((x / f) << PROB_BITS) + t.slot_of[(at + x % f) as usize] as u32;
    }
    out.extend_from_slice(&x.to_le_bytes()[..STATE_BYTES]);
    out.reverse();
}

/// The length of the stream [`encode`] would write, without writing it.
pub fn encoded_len(t: &Tables, alphabet: usize, syms: &[(u8, u8)], check: u64) -> usize {
    let mut x = start_state(check);
    let mut n = STATE_BYTES;
    for &(c, s) in syms.iter().rev() {
        let (f, at) = t.freq[c as usize * alphabet + s as usize];
        let x_max = ((LOW >> PROB_BITS) << 8) * f;
        while x >= x_max {
            n += 1;
            x >>= 8;
        }
        x = ((x / f) << PROB_BITS) + t.slot_of[(at + x % f) as usize] as u32;
    }
    n
}

/// Decodes a block's stream symbol by symbol from a copy of the block
/// followed by [`PAD`] zeros. Never panics: a damaged stream gives
/// symbols of the alphabet, and [`Decoder::finish`] or the caller's
/// bounds say it is damaged.
#[derive(Clone, Copy, Debug)]
pub struct Decoder {
    x: u32,
    at: usize,
}

impl Decoder {
    /// Starts on a block (`None`: its first 3 bytes are no state).
    #[inline]
    pub fn new(block: &[u8]) -> Option<Decoder> {
        let head = block.get(..STATE_BYTES)?;
        let x = head.iter().fold(0u32, |x, &b| (x << 8) | b as u32);
        (LOW..LOW << 8)
            .contains(&x)
            .then_some(Decoder { x, at: STATE_BYTES })
    }

    /// The next symbol, from the buckets of its class; `padded` is the
    /// block followed by [`PAD`] zeros, of `len + PAD` bytes. The state
    /// is read a byte at a time, without a branch: at most two bytes a
    /// symbol, past the block only zeros.
    #[inline(always)]
    pub fn next(&mut self, buckets: &[Bucket], bucket_bits: u32, padded: &[u8], len: usize) -> u8 {
        let slot = self.x & (SLOTS - 1);
        let shift = PROB_BITS - bucket_bits;
        let e = &buckets[(slot >> shift) as usize & (buckets.len() - 1)];
        let r = slot & ((1 << shift) - 1);
        // The half of the bucket, by index rather than by branch: which
        // half a slot falls in is what the data says, unpredictable.
        let h = 2 * (r >= e[0] >> 20) as usize;
        let (w, bias) = (e[h], e[h + 1]);
        let f = ((w >> 8) & 0xfff) + 1;
        let x = f * (self.x >> PROB_BITS) + slot.wrapping_add(bias);
        // x >= 16: at most two bytes.
        let n = (x < LOW) as u32 + (x < LOW >> 8) as u32;
        let i = self.at.min(len);
        let two = ((padded[i] as u32) << 8) | padded[i + 1] as u32;
        self.x = (x << (8 * n)) | (two >> (16 - 8 * n));
        self.at += n as usize;
        w as u8
    }

    /// Checks that a whole block (of `block.len()` bytes, without the
    /// padding) ended where and how its values say: in the start state of
    /// `check`, the stream not read past the block, every byte after it
    /// zero.
    pub fn finish(&self, check: u64, block: &[u8]) -> bool {
        self.x == start_state(check)
            && block
                .get(self.at..)
                .is_some_and(|r| r.iter().all(|&b| b == 0))
    }
}

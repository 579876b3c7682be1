//! The entropy coder of format 4: rANS with a 32-bit state read a byte at
//! a time, decoded through a table per class (one lookup a symbol).
//!
//! A block's stream is coded backwards and starts with the coder's final
//! state (4 bytes, big-endian), then the bytes the decoder reads in order.
//! The coder starts from a state that carries 16 bits of the hash of the
//! block's values: decoding the whole block must end in that state, having
//! read exactly the stream's bytes, with only zeros after them.

use super::model::{PROB_BITS, SLOTS};

/// Bytes of the state written at a block's start.
pub const STATE_BYTES: usize = 3;
/// The state lies in `LOW .. 256 LOW` between symbols.
pub const LOW: u32 = 1 << (8 * STATE_BYTES - 8);

/// The state the coder starts from and a whole block's decoding ends in.
#[inline]
pub fn start_state(check: u64) -> u32 {
    LOW | (check as u32 & (LOW - 1))
}

/// Codes `syms` (each `(start, frequency)` in its distribution, in
/// decoding order) into `out` (cleared first); `check` is the hash of the
/// values they stand for.
pub fn encode(syms: &[(u32, u32)], check: u64, out: &mut Vec<u8>) {
    out.clear();
    let mut x = start_state(check);
    for &(lo, f) in syms.iter().rev() {
        let x_max = ((LOW >> PROB_BITS) << 8) * f;
        while x >= x_max {
            out.push(x as u8);
            x >>= 8;
        }
        x = ((x / f) << PROB_BITS) + (x % f) + lo;
    }
    out.extend_from_slice(&x.to_le_bytes()[..STATE_BYTES]);
    out.reverse();
}

/// The length of the stream [`encode`] would write, without writing it.
pub fn encoded_len(syms: &[(u32, u32)], check: u64) -> usize {
    let mut x = start_state(check);
    let mut n = STATE_BYTES;
    for &(lo, f) in syms.iter().rev() {
        let x_max = ((LOW >> PROB_BITS) << 8) * f;
        while x >= x_max {
            n += 1;
            x >>= 8;
        }
        x = ((x / f) << PROB_BITS) + (x % f) + lo;
    }
    n
}

/// Decodes a block's stream symbol by symbol. Never panics: a damaged
/// stream gives symbols of the alphabet, and [`Decoder::finish`] or the
/// caller's bounds say it is damaged.
#[derive(Clone, Copy, Debug)]
pub struct Decoder {
    x: u32,
    at: usize,
    /// The stream ended while the state still wanted bytes.
    short: bool,
}

impl Decoder {
    /// Starts on a block (`None`: its first 4 bytes are no state).
    #[inline]
    pub fn new(block: &[u8]) -> Option<Decoder> {
        let head = block.get(..STATE_BYTES)?;
        let x = head.iter().fold(0u32, |x, &b| (x << 8) | b as u32);
        (LOW..LOW << 8).contains(&x).then_some(Decoder {
            x,
            at: STATE_BYTES,
            short: false,
        })
    }

    /// The next symbol, from the decode tables of its class (`SLOTS`
    /// symbols, 256 frequencies and starts, see
    /// [`super::model::Model::decode_tables`]).
    #[inline(always)]
    pub fn next(&mut self, syms: &[u8], fc: &[u32], block: &[u8]) -> u8 {
        let slot = self.x & (SLOTS - 1);
        let s = syms[slot as usize];
        let e = fc[s as usize];
        self.x = (e & 0xffff) * (self.x >> PROB_BITS) + slot - (e >> 16);
        while self.x < LOW {
            let b = match block.get(self.at) {
                Some(&b) => b,
                None => {
                    self.short = true;
                    0
                }
            };
            self.x = (self.x << 8) | b as u32;
            self.at += 1;
        }
        s
    }

    /// Checks that a whole block ended where and how its values say: in
    /// the start state of `check`, every byte after the stream zero.
    pub fn finish(&self, check: u64, block: &[u8]) -> bool {
        !self.short
            && self.x == start_state(check)
            && block
                .get(self.at..)
                .is_some_and(|r| r.iter().all(|&b| b == 0))
    }
}

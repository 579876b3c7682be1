//! The sparse index and block counts of format 4 (the scores' and, in the
//! full form, the envelope's): built from the counts when a file is
//! written, read and checked against them when it is opened, and the
//! block of an entry found through them.

use super::header::{count_bits, counts_bytes};
use crate::codec::header::u64_at;
use crate::codec::CompressError;

/// The sparse index of blocks holding `counts` entries each: for every
/// `2^bits`-th entry, its block (high 32 bits) and its place in it.
pub fn build(counts: impl Iterator<Item = u16>, bits: u32) -> Vec<u64> {
    let step = 1u64 << bits;
    let mut sparse = Vec::new();
    let mut first = 0u64;
    for (b, c) in counts.enumerate() {
        let end = first + c as u64;
        let mut next = (sparse.len() as u64) * step;
        while next < end {
            sparse.push(((b as u64) << 32) | (next - first));
            next += step;
        }
        first = end;
    }
    sparse
}

/// Appends a sparse index (little-endian) and the counts (each at least
/// 1), less one, in `bits` bits each, least significant bit first, zero
/// bits after the last, to `out`.
pub fn write(sparse: &[u64], counts: impl Iterator<Item = u16>, bits: u32, out: &mut Vec<u8>) {
    for x in sparse {
        out.extend_from_slice(&x.to_le_bytes());
    }
    let (mut acc, mut have) = (0u64, 0u32);
    for c in counts {
        acc |= ((c - 1) as u64) << have;
        have += bits;
        while have >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            have -= 8;
        }
    }
    if have > 0 {
        out.push(acc as u8);
    }
}

/// Reads `blocks` entry counts of `bits` bits each (less one, least
/// significant bit first) from exactly `packed`; `None` if the bits after
/// the last are not zero.
fn unpack(packed: &[u8], blocks: usize, bits: u32) -> Option<Vec<u16>> {
    let mut out = Vec::with_capacity(blocks);
    let (mut acc, mut have, mut at) = (0u64, 0u32, 0usize);
    let mask = (1u64 << bits) - 1;
    for _ in 0..blocks {
        while have < bits {
            acc |= (*packed.get(at)? as u64) << have;
            at += 1;
            have += 8;
        }
        out.push((acc & mask) as u16 + 1);
        acc >>= bits;
        have -= bits;
    }
    (acc == 0 && at == packed.len()).then_some(out)
}

/// Reads the sparse index (`ns` entries at `at` of `b`) and the counts of
/// `blocks` blocks after it (packed as [`write`] packs them, in
/// [`count_bits`]`(cap)` bits each), and checks them: no bits but zeros
/// after the last count, every block holds 1..=`cap`
/// entries, they add up to `entries`, and the sparse index is the one the
/// counts give. `what` names them in an error ("blocks", "envelope
/// blocks").
#[allow(clippy::too_many_arguments)]
pub fn read(
    b: &[u8],
    at: usize,
    ns: usize,
    blocks: usize,
    cap: u32,
    entries: u64,
    bits: u32,
    what: &'static str,
) -> Result<(Vec<u64>, Vec<u16>), CompressError> {
    let sparse: Vec<u64> = (0..ns).map(|i| u64_at(b, at + 8 * i)).collect();
    let c0 = at + 8 * ns;
    let packed = &b[c0..c0 + counts_bytes(blocks as u64, cap) as usize];
    let counts =
        unpack(packed, blocks, count_bits(cap)).ok_or_else(|| CompressError::HeaderField {
            field: what,
            reason: "the bits after the last count are not zero".into(),
        })?;
    let step = 1u64 << bits;
    let (mut first, mut next) = (0u64, 0usize);
    for (i, &c) in counts.iter().enumerate() {
        if c == 0 || c as u32 > cap {
            return Err(CompressError::OffsetOutOfRange {
                block: i as u64,
                offset: c as u64,
                reason: format!("entries ({what}), not 1..={cap}"),
            });
        }
        let end = first + c as u64;
        while next < ns && (next as u64) * step < end {
            let want = ((i as u64) << 32) | ((next as u64) * step - first);
            if sparse[next] != want {
                return Err(CompressError::OffsetOutOfRange {
                    block: i as u64,
                    offset: sparse[next],
                    reason: format!("is sparse index entry {next} ({what}), expected {want}"),
                });
            }
            next += 1;
        }
        first = end;
    }
    if first != entries {
        return Err(CompressError::HeaderField {
            field: what,
            reason: format!("hold {first} entries, the layer {entries}"),
        });
    }
    Ok((sparse, counts))
}

/// The block of entry `g` (which must be in the table), its first entry
/// and the entry's place in it.
#[inline]
pub fn locate(sparse: &[u64], counts: &[u16], bits: u32, g: u64) -> (usize, u64, usize) {
    let sp = sparse[(g >> bits) as usize];
    let mut b = (sp >> 32) as usize;
    let mut off = (sp & 0xffff_ffff) + (g & ((1 << bits) - 1));
    while off >= counts[b] as u64 {
        off -= counts[b] as u64;
        b += 1;
    }
    (b, g - off, off as usize)
}

//! The sparse index and block counts of format 4 (the scores' and, in the
//! full form, the envelope's): built from the counts when a file is
//! written, read and checked against them when it is opened, and the
//! block of an entry found through them.

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

/// Appends a sparse index and the counts to `out` (little-endian).
pub fn write(sparse: &[u64], counts: impl Iterator<Item = u16>, out: &mut Vec<u8>) {
    for x in sparse {
        out.extend_from_slice(&x.to_le_bytes());
    }
    for c in counts {
        out.extend_from_slice(&c.to_le_bytes());
    }
}

/// Reads the sparse index (`ns` entries at `at` of `b`) and the counts of
/// `blocks` blocks after it, and checks them: every block holds 1..=`cap`
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
    let counts: Vec<u16> = (0..blocks)
        .map(|i| u16::from_le_bytes([b[c0 + 2 * i], b[c0 + 2 * i + 1]]))
        .collect();
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

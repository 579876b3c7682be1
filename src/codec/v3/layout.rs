//! The block index and models of a format 3 file, read and checked when
//! the file is opened: where each block's streams lie.

use super::header::{meta_checksum, supers, V3Fields};
use super::{streams, Models, Shape, SUPER, V3_HEADER_BYTES};
use crate::codec::header::{check_span, u64_at};
use crate::codec::{CompressError, Header};

/// The block index and models of a version 3 file.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The shape of the layer.
    pub shape: Shape,
    /// The coarse index: where every [`SUPER`]-th block starts, and the
    /// end of the file.
    supers: Vec<u64>,
    /// Per block, the length of each stream.
    lens: Vec<u16>,
    streams: usize,
    /// The models.
    pub models: Models,
}

impl Layout {
    /// Where block `i` starts, and the lengths of its scores and envelope
    /// streams (0 for a scores-only file).
    #[inline]
    pub fn block(&self, i: u64) -> (u64, usize, usize) {
        let k = self.streams;
        let first = i - i % SUPER;
        let mut at = self.supers[(i / SUPER) as usize];
        for j in first..i {
            let j = j as usize * k;
            at += self.lens[j..j + k].iter().map(|&x| x as u64).sum::<u64>();
        }
        let (a, e) = self.stream_lens(i);
        (at, a, e)
    }

    /// The lengths of the scores and envelope streams of block `i` (0 for
    /// a scores-only file).
    #[inline]
    pub fn stream_lens(&self, i: u64) -> (usize, usize) {
        let j = i as usize * self.streams;
        let e = if self.streams == 2 {
            self.lens[j + 1] as usize
        } else {
            0
        };
        (self.lens[j] as usize, e)
    }
}

/// Reads and checks the block index and models of a version 3 file (`b`
/// holds at least its first `h.data_start()` bytes), and the checksum of
/// header, index and models.
pub fn layout(h: &Header, b: &[u8], len: u64) -> Result<Layout, CompressError> {
    let Some(&V3Fields { variant, .. }) = h.v3() else {
        return Err(CompressError::HeaderField {
            field: "format version",
            reason: format!("{}, not a version 3 file", h.version),
        });
    };
    let data_start = h.data_start();
    if len < data_start || (b.len() as u64) < data_start {
        return Err(CompressError::Truncated {
            part: "block index",
            needed: data_start,
            found: len,
        });
    }
    let blocks = h.blocks();
    let ns = supers(h);
    let k = streams(h.tables) as usize;
    let sup: Vec<u64> = (0..ns)
        .map(|i| u64_at(b, V3_HEADER_BYTES + 8 * i as usize))
        .collect();
    let lens_at = V3_HEADER_BYTES + 8 * ns as usize;
    let lens: Vec<u16> = (0..blocks as usize * k)
        .map(|i| u16::from_le_bytes([b[lens_at + 2 * i], b[lens_at + 2 * i + 1]]))
        .collect();
    check_span(
        sup[0],
        sup[ns as usize - 1],
        h,
        len,
        "the end of the block index and models",
    )?;
    for s in 0..ns - 1 {
        let first = s * SUPER;
        let end = (first + SUPER).min(blocks);
        let mut total = 0u64;
        for i in first..end {
            for j in 0..k {
                let l = lens[i as usize * k + j];
                if l < 8 || l % 4 != 0 {
                    return Err(CompressError::OffsetOutOfRange {
                        block: i,
                        offset: l as u64,
                        reason: "is the length of a stream, a multiple of 4 bytes and at least 8"
                            .into(),
                    });
                }
                total += l as u64;
            }
        }
        let (a, e) = (sup[s as usize], sup[s as usize + 1]);
        if e < a || e - a != total {
            return Err(CompressError::OffsetOutOfRange {
                block: end,
                offset: e,
                reason: format!("after {a}, but blocks {first}..{end} take {total} bytes"),
            });
        }
    }
    let stored = u64_at(b, 80);
    let found = meta_checksum(b, &b[V3_HEADER_BYTES..data_start as usize]);
    if stored != found {
        return Err(CompressError::IndexChecksum {
            expected: stored,
            found,
        });
    }
    let shape = Shape::new(h.layer);
    let models = Models::read(
        &b[h.index_end() as usize..data_start as usize],
        shape,
        variant,
        h.tables,
    )
    .map_err(|e| CompressError::HeaderField {
        field: "models",
        reason: e.to_string(),
    })?;
    Ok(Layout {
        shape,
        supers: sup,
        lens,
        streams: k,
        models,
    })
}

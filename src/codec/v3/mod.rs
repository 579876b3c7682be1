//! Format version 3: a layer's tables coded by context models (see the
//! module docs of [`crate::codec`] for the layout and the measurements in
//! `docs/compression.md` for why these contexts).
//!
//! Each block holds a **scores stream** and, in the full form, an
//! **envelope stream**:
//!
//! * scores: the score `S` (as `S + n`), in the context of the previous
//!   entry's score, the score of the position with one seed moved back
//!   from pit 2 to pit 0 (`p0 + p1 + 2` entries earlier in Goedel order,
//!   when that is in the block), pit 0's seeds (0..=4, more as 4) and
//!   whether the score before the previous one was lower, equal or higher
//!   (variants 0..=3 use the first 1..=4 of these; the encoder keeps the
//!   one that makes the file smallest, model included);
//! * envelope: `a = S - lower` in the context of `S`, the previous entry's
//!   `a` and the `a` of the same neighbour as above (each 0..=4, more as
//!   4); then `b = upper - S` in the context of `S`, `a` and the previous
//!   entry's `b`.
//!
//! A score probe decodes the scores stream of one block; an envelope probe
//! decodes both.
//!
//! The module's parts, one job each: `contexts` (the shape of a layer's
//! contexts, the walks that compute them, the models of a file),
//! `header` (the header's fields and checksum), `layout` (the block
//! index and models, read and checked when a file is opened), `decode`
//! (blocks, one or two at a time) and `encode` (the counts, the models
//! and the file).

mod contexts;
mod decode;
mod encode;
mod header;
mod layout;

use super::ans;
pub use contexts::{
    envelope_check, project, score_check, symbol, walk_envelope, walk_scores, Models, Shape,
};
pub use decode::{decode_blocks, Block};
pub(in crate::codec) use decode::{decode_one, decode_two, Scratch};
pub use encode::{
    count_envelope, count_scores, encode, encode_envelope, encode_scores, encode_to, TableSet,
};
pub(in crate::codec) use header::read_header;
pub use header::{
    check_block_size, index_end, streams, V3Fields, V3_HEADER_BYTES, V3_MAX_BLOCK_SIZE,
};
use header::{encode_header, meta_checksum, supers};
pub use layout::{layout, Layout};

/// Entries per block of version 3 unless told otherwise
/// (docs/compression.md: a random probe decodes a whole block).
pub const V3_DEFAULT_BLOCK_SIZE: u32 = 512;
/// Blocks per entry of the coarse block index.
pub const SUPER: u64 = 64;
pub use super::v4::shape::VARIANTS;
pub use super::v4::{FULL, SCORES_ONLY};

//! Format version 4: the scores coded for random access near raw speed,
//! in the shape of the chess tablebases' (syzygy): blocks of a fixed,
//! small number of bytes behind a sparse index, a decoder driven by
//! tables, a probe that decodes only up to the entry it wants.
//!
//! # What a score is coded given
//!
//! The contexts of format 3 (the previous score, the score of the
//! position with one seed moved back from pit 2 to pit 0 when it lies in
//! the block, pit 0's seeds, the last sign), clustered into at most 256
//! **classes** by k-means on their distributions (the distance: the bits
//! a context's symbols take coded by a class). Each class is one
//! distribution in multiples of 1/4096; the file stores the class of
//! every context (a byte each) and each class's frequencies. The coder is
//! rANS with a 24-bit state read a byte at a time, without a branch;
//! each class's 4096 slots are laid out in 64 buckets (more for layers
//! of more than 31 seeds) of at most two symbols each (the alias method,
//! made from the frequencies alone, see `coder`), so that decoding a
//! symbol is one lookup of 16 bytes in a table of 1 KiB a class. The
//! decoder orders the contexts so that all but the previous score is
//! known before the previous score is decoded, and decodes whole blocks
//! and batches of probes four blocks at a time in interleaved lanes.
//!
//! # Layout
//!
//! All integers little-endian.
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 8 | magic `AWARIZST` |
//! | 8 | 4 | format version `4` |
//! | 12 | 1 | tables held: `0b001`, the scores alone |
//! | 13 | 1 | probability bits, 12 |
//! | 14 | 2 | zero |
//! | 16 | 16 | rule set, ASCII, zero-padded |
//! | 32 | 4 | layer (seeds) |
//! | 36 | 4 | the most entries a block holds, 1..=4095 |
//! | 40 | 8 | entries E, the layer's size |
//! | 48 | 4 | blocks K |
//! | 52 | 4 | bytes M of the model |
//! | 56 | 8 | `xxh3-64` of the raw `scores.n` |
//! | 64 | 16 | zero |
//! | 80 | 1 | log2 S of the entries per sparse index entry, 13 |
//! | 81 | 1 | zero |
//! | 82 | 2 | bytes per block B, 16..=4096 |
//! | 84 | 4 | zero |
//! | 88 | 8 | `xxh3-64` of bytes 0..88, the sparse index, the counts and the model |
//! | 96 | 8 ceil(E / 2^S) | sparse index: for every 2^S-th entry, its block (high 32 bits) and its place in it |
//! | ... | ceil(K c / 8) | entries of each block less one, `c = ceil(log2 cap)` bits each (10 for the default cap of 1024), least significant bit first, zero bits after the last |
//! | ... | M | the model: classes C (2 bytes), the class of every context (a byte each), each class's frequencies (LEB128, one per symbol) |
//! | ... | | zeros up to a multiple of 64 |
//! | ... | K B | the blocks |
//!
//! A block holds as many entries as fit its B bytes (at most the header's
//! cap): the coder's final state (3 bytes, big-endian), the bytes the
//! decoder reads in order, zeros. A run of 2^20 entries starts a new
//! block, so that runs are coded in parallel.
//!
//! # Checks, and how damage is found
//!
//! Opening a file checks every header field, that the file ends with its
//! last block, the checksum of header, index, counts and model, that the
//! padding is zero, that every block holds 1..=cap entries and the counts
//! add up to the layer, that the sparse index is the one the counts give,
//! and the model (classes in range, frequencies summing to 4096). A
//! damaged header, index or model is therefore an error on opening.
//!
//! A **probe** decodes its block only up to the entry and does not check
//! the block: a damaged block gives a value within `-n..=n` (every symbol
//! decoded is one of the alphabet, the state stays in range, a stream
//! read past its block reads zeros) or an error, never a panic. Decoding a
//! **whole block** (ranges, `verify`, `check`, `decompress`) checks it:
//! the coder started from a state holding 16 bits of the `xxh3-64` of the
//! block's values and must end there having read exactly the stream's
//! bytes, with only zeros after them; and a whole table is checked
//! against the header's checksum of the raw scores, so `verify` and
//! `check` find every damaged byte.
//!
//! The module's parts, one job each: `context` (what a score is coded
//! given, the walk through a block that computes it, and the decoder's
//! order of the contexts), `model` (the contexts clustered into classes,
//! each class a distribution), `coder` (rANS with a 24-bit state, a byte
//! at a time, and its tables: each class's buckets), `decode` (a block
//! decoded symbol by symbol, or several at once in lanes), `header` (the
//! header's fields and checksum), `layout` (index, counts and model read
//! and checked when a file is opened; the probe and batches of probes;
//! whole blocks decoded and checked) and `encode` (counts, model, blocks,
//! the file).

mod coder;
mod context;
mod decode;
mod encode;
mod header;
mod layout;
mod model;

pub use encode::{encode_scores, V4Settings};
pub(in crate::codec) use header::read_header;
pub use header::{
    check_blocks, check_classes, data_start, index_end, V4Fields, V4_ALIGN, V4_BLOCK_BYTES,
    V4_DEFAULT_BLOCK_BYTES, V4_DEFAULT_BLOCK_CAP, V4_DEFAULT_CLASSES, V4_HEADER_BYTES,
    V4_MAX_BLOCK_CAP, V4_SPARSE_BITS,
};
pub use layout::Layout;
pub use model::MAX_CLASSES;

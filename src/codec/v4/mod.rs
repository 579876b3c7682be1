//! Format version 4: the scores coded for random access near raw speed,
//! in the shape of the chess tablebases' (syzygy): blocks of a fixed,
//! small number of bytes behind a sparse index, a decoder driven by
//! tables, a probe that decodes only up to the entry it wants.
//!
//! Two forms: the scores alone (`scores.n.zst`), and the **full form**
//! (`tables.n.zst`, tables held `0b111`), which adds the envelope
//! (`lower` and `upper`) coded given the scores in blocks and a sparse
//! index of its own (see `envelope`): a probe of the scores reads neither;
//! a probe of `lower` or `upper` decodes its envelope block whole and the
//! scores under it, each checked.
//!
//! # What a score is coded given
//!
//! Its context (the previous score, the score of the position with one
//! seed moved back from pit 2 to pit 0 when it lies in the block, pit 0's
//! seeds, the last sign; the contexts of the retired format 3), clustered
//! into at most 256 **classes** by k-means on their distributions (the
//! distance: the bits a context's symbols take coded by a class). Each class is one
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
//! | 12 | 1 | tables held: `0b001` the scores alone, `0b111` the full form (scores, lower, upper) |
//! | 13 | 1 | probability bits, 12 |
//! | 14 | 2 | full form: bytes per envelope block B', 16..=4096; else zero |
//! | 16 | 16 | rule set, ASCII, zero-padded |
//! | 32 | 4 | layer (seeds) |
//! | 36 | 4 | the most entries a block holds, 1..=4095 |
//! | 40 | 8 | entries E, the layer's size |
//! | 48 | 4 | blocks K |
//! | 52 | 4 | bytes M of the models |
//! | 56 | 8 | `xxh3-64` of the raw `scores.n` |
//! | 64 | 8 | full form: `xxh3-64` of the raw `lower.n`; with the "don't care" flag, `xxh3-64` of the values stored; else zero |
//! | 72 | 8 | full form: `xxh3-64` of the raw `upper.n`; else zero |
//! | 80 | 1 | log2 S of the entries per sparse index entry, 13 |
//! | 81 | 1 | flags: bit 0, the file leaves "don't care" entries ([`dont_care`]; scores alone only); bit 1, the file stores group checks (every file this release writes); the other bits zero |
//! | 82 | 2 | bytes per block B, 16..=4096 |
//! | 84 | 4 | full form: envelope blocks K'; else zero |
//! | 88 | 8 | `xxh3-64` of bytes 0..88 and of everything from 96 to the end of the group checks (of the models, without them) |
//! | 96 | 8 ceil(E / 2^S) | sparse index: for every 2^S-th entry, its block (high 32 bits) and its place in it |
//! | ... | ceil(K c / 8) | entries of each block less one, `c = ceil(log2 cap)` bits each (10 for the default cap of 1024), least significant bit first, zero bits after the last |
//! | ... | 8 ceil(E / 2^S) | full form: the envelope's sparse index, likewise |
//! | ... | ceil(K' c / 8) | full form: entries of each envelope block, packed likewise |
//! | ... | M | the models: the scores' (classes C (2 bytes), the class of every context (a byte each), each class's frequencies (LEB128, one per symbol)); in the full form then the envelope's: its bytes before compression (4), then a zstd frame of it (the same fields over the envelope's contexts) |
//! | ... | 4 G | with flag bit 1: per group of `max(1, 4096 / B)` score blocks, the low 32 bits of the `xxh3-64` of its bytes; `G` groups, the last maybe shorter |
//! | ... | | zeros up to a multiple of 64 |
//! | ... | K B | the blocks |
//! | ... | K' B' | full form: the envelope blocks |
//!
//! A block holds as many entries as fit its B bytes (at most the header's
//! cap): the coder's final state (3 bytes, big-endian), the bytes the
//! decoder reads in order, zeros. A run of 2^20 entries starts a new
//! block, so that runs are coded in parallel. An envelope block likewise,
//! its symbols `a` and `b` of each entry in turn; its coder starts from a
//! state holding 16 bits of the `xxh3-64` of the block's raw lower and
//! upper values.
//!
//! # Checks, and how damage is found
//!
//! Opening a file checks every header field, that the file ends with its
//! last block, the checksum of header, index, counts and model, that the
//! padding is zero, that every block holds 1..=cap entries and the counts
//! add up to the layer, that the sparse index is the one the counts give,
//! and the model (classes in range, frequencies summing to 4096); in the
//! full form the same of the envelope's fields, index, counts and model
//! (which must decompress to no more than a model takes, and exactly).
//! A damaged header, index or model is therefore an error on opening.
//!
//! Every block decoded whole is checked: the coder started from a state
//! holding 16 bits of the `xxh3-64` of the block's values and must end
//! there having read exactly the stream's bytes, with only zeros after
//! them (this costs no space: a state is at least 16 bits anyway). A
//! **probe** decodes only up to its entry, so it relies on the **group
//! checks**: the first time an opened table uses a block, the 4 KiB group of
//! blocks it lies in is hashed and compared with its check, and a
//! mismatch is an error. A damaged block is therefore an error (naming
//! the block; the front ends name the file), never a value, but for the
//! one chance in 2^32 (2^16 for a block decoded whole) that damage
//! leaves the check alike. The checks cost 4 bytes in 4 KiB (0.1%). A
//! file without them (written before they were) is probed by decoding
//! each block whole. A thread keeps the last blocks it probed (1,024,
//! direct-mapped) where their decoding stopped, so a later probe of one
//! of them decodes only the entries past it; a probe that reaches a
//! block's last entry also checks its end state. A batch decodes each
//! block it touches once, four at a time, up to its last entry probed
//! (whole, and checked, without group checks). A whole table is also checked against the header's checksum
//! of the raw scores (of a don't-care file: of the values stored; the
//! probe checks the scores they resolve to, see [`dont_care`]), so
//! `verify` and `check` find every damaged byte.
//!
//! In the full form a probe of `lower` or `upper` decodes its envelope
//! block whole and the score blocks under it, each checked, and keeps
//! the envelope block (256 a thread). The envelope block must end in the
//! state its lower and upper values call for, and `verify` checks each
//! table against its own checksum in the header. A damaged envelope block
//! is never read by the scores; a damaged score block is found by all
//! three tables.
//!
//! The module's parts, one job each: `context` (what a score is coded
//! given, the walk through a block that computes it, and the decoder's
//! order of the contexts), `model` (the contexts clustered into classes,
//! each class a distribution), `coder` (rANS with a 24-bit state, a byte
//! at a time, and its tables: each class's buckets), `decode` (a block
//! decoded symbol by symbol, or several at once in lanes), `header` (the
//! header's fields and checksum), `dont_care` (the values a file that
//! leaves "don't care" entries stores), `layout` (index, counts and
//! model read and checked when a file is opened; the probe and batches
//! of probes; whole blocks decoded and checked), `encode` (counts, model,
//! blocks, the file), `index` (the sparse index and packed block counts:
//! built, read and checked, searched), `envelope` (the full form's
//! envelope: its contexts, model and blocks) and `envelope_layout` (the
//! envelope read: opened and checked, probed, decoded and checked, with
//! the same coder tables but a simpler loop of its own, a symbol at a
//! time).

mod coded;
mod coder;
mod context;
mod decode;
pub mod dont_care;
mod encode;
mod envelope;
mod envelope_layout;
mod header;
mod index;
mod layout;
mod model;
mod shape;

pub use coded::V4Settings;
pub use encode::{encode_full, encode_scores};
pub use envelope::envelope_block_bytes;
pub use envelope_layout::Envelope;
pub(in crate::codec) use header::read_header;
pub use header::{
    check_blocks, check_classes, data_start, index_end, EnvelopeFields, V4Fields, FULL,
    SCORES_ONLY, V4_ALIGN, V4_BLOCK_BYTES, V4_DEFAULT_BLOCK_BYTES, V4_DEFAULT_BLOCK_CAP,
    V4_DEFAULT_CLASSES, V4_FULL_DEFAULT_BLOCK_BYTES, V4_HEADER_BYTES, V4_MAX_BLOCK_CAP,
    V4_SPARSE_BITS,
};
pub use layout::Layout;
pub use model::MAX_CLASSES;

//! Format version 4: the scores coded for random access near raw speed.
//!
//! (Layout and checks: see the module docs of [`crate::codec`].)
//!
//! The module's parts, one job each: `context` (what a score is coded
//! given, and the walk through a block that computes it), `model` (the
//! contexts clustered into classes, each class a distribution, and the
//! coder's tables), `coder` (rANS with a 24-bit state, a byte at a time),
//! `header` (the header's fields and checksum), `layout` (index, counts
//! and model read and checked when a file is opened; the probe; whole
//! blocks decoded and checked) and `encode` (counts, model, blocks, the
//! file).

mod coder;
mod context;
mod encode;
mod header;
mod layout;
mod model;

pub use context::Shape;
pub use encode::{encode_scores, V4Settings};
pub(in crate::codec) use header::read_header;
pub use header::{
    check_blocks, check_classes, data_start, index_end, V4Fields, V4_ALIGN, V4_BLOCK_BYTES,
    V4_DEFAULT_BLOCK_BYTES, V4_DEFAULT_BLOCK_CAP, V4_DEFAULT_CLASSES, V4_HEADER_BYTES,
    V4_MAX_BLOCK_CAP, V4_SPARSE_BITS,
};
pub use layout::Layout;
pub use model::MAX_CLASSES;

//! The numbering's error.

use crate::error::{Cause, ErrorKind};

/// A layer or an index the Goedel numbering has not.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// The layer does not exist.
    #[error("layer {0} does not exist: layers have 0 to 48 seeds")]
    NoSuchLayer(u32),
    /// 47 seeds never occur (a capture takes at least 2 of the 48).
    #[error(
        "a board of 47 seeds cannot occur in awari (every capture takes at least 2 of the 48 \
         seeds), so no database has layer 47"
    )]
    Layer47,
    /// The index is not below the layer's size.
    #[error("index {index} is outside layer {seeds}, which holds {size} positions (0..={last})", last = size - 1)]
    IndexOutOfRange {
        /// Seeds of the layer.
        seeds: u32,
        /// The index asked for.
        index: u64,
        /// The layer's size.
        size: u64,
    },
}

impl Cause for IndexError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Input
    }
}

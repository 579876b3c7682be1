//! Compression's error.

use crate::error::{Cause, ErrorKind};

/// A compression setting out of range.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PackError {
    /// A setting out of range (compression level, block size, ...).
    #[error("{name} {reason}")]
    Setting {
        /// The setting.
        name: &'static str,
        /// What is wrong with its value.
        reason: String,
    },
}

impl Cause for PackError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Input
    }
}

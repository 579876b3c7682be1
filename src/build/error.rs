//! The builder's error.

use crate::error::{Cause, ErrorKind};

/// Ranks of a build that were not started alike.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The ranks of a build were not started alike.
    #[error("the ranks disagree on {0}")]
    RanksDisagree(&'static str),
    /// The in-memory solver with several ranks.
    #[error(
        "the in-memory solver runs in one process; with several ranks every layer is built by \
         the compact solver"
    )]
    RanksNeedCompact,
}

impl Cause for BuildError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Input
    }
}

//! The search's error.

use crate::error::{Cause, ErrorKind};

/// A time control or thread count the search cannot take.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The game is over: no move to search or play.
    #[error("the game is over")]
    GameOver,
    /// Not a time control.
    #[error(
        "'{0}' is not a time control: give the time per side and an optional increment per \
         move, e.g. 30m, 90s, 1h30m or 5m+2s"
    )]
    BadClock(String),
    /// A search asked to run on no thread.
    #[error("a search needs at least one thread")]
    NoThreads,
}

impl Cause for SearchError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Input
    }
}

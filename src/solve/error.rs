//! The solvers' error.

use crate::error::{Cause, ErrorKind};
use std::io;
use std::path::{Path, PathBuf};

/// A solver's scratch file that could not be used, or a layer whose
/// distances do not fit their table.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SolveError {
    /// A solver's scratch file (exits or lists, in the scratch folder)
    /// could not be created, written or read.
    #[error("scratch file in {}: {source}", dir.display())]
    Scratch {
        /// The scratch folder.
        dir: PathBuf,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
    /// A distance to the next capture longer than a distance table holds.
    #[error("layer {layer}: a distance to the next capture over {max} plies, more than a distance table holds")]
    DistanceOverflow {
        /// The layer.
        layer: u32,
        /// The largest distance a table holds.
        max: u8,
    },
}

impl Cause for SolveError {
    fn kind(&self) -> ErrorKind {
        match self {
            SolveError::Scratch { .. } => ErrorKind::Io,
            SolveError::DistanceOverflow { .. } => ErrorKind::Input,
        }
    }

    fn path(&self) -> Option<&Path> {
        match self {
            SolveError::Scratch { dir, .. } => Some(dir),
            SolveError::DistanceOverflow { .. } => None,
        }
    }
}

//! The solvers' error.

use crate::error::{Cause, ErrorKind};
use std::io;
use std::path::{Path, PathBuf};

/// A solver's scratch file that could not be used.
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
}

impl Cause for SolveError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Io
    }

    fn path(&self) -> Option<&Path> {
        match self {
            SolveError::Scratch { dir, .. } => Some(dir),
        }
    }
}

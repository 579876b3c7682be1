//! The verifier's error.

use crate::error::{Cause, ErrorKind};
use std::path::{Path, PathBuf};

/// A check the verifier cannot make: a VU comparison of another rule set's folder, an unreadable CSV list.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// A check that needs the VU data (awari only) asked of another rule
    /// set's folder.
    #[error("{}: {what} compares with the VU database, which follows the awari rules; this folder follows {rules}", dir.display())]
    VuOnly {
        /// The folder.
        dir: PathBuf,
        /// The check.
        what: &'static str,
        /// The folder's rule set.
        rules: &'static str,
    },
    /// A CSV file (move facts, known-good checksums) cannot be read.
    #[error("{}: line {line}: {reason}", path.display())]
    Csv {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

impl Cause for VerifyError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Input
    }

    fn path(&self) -> Option<&Path> {
        match self {
            VerifyError::Csv { path, .. } => Some(path),
            VerifyError::VuOnly { dir, .. } => Some(dir),
        }
    }
}

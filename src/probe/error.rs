//! The probe's error.

use crate::error::{Cause, ErrorKind};
use std::path::{Path, PathBuf};

/// A lookup the probe cannot answer: no folder named, slices of different lengths, a stored score outside its envelope.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// No folder was given and `AWARI_PATH` is not set.
    #[error("no database folder given, and AWARI_PATH is not set")]
    NoFolder,
    /// Two slices that must have the same length do not.
    #[error("{positions} positions but {outputs} outputs")]
    Lengths {
        /// Positions given.
        positions: usize,
        /// Outputs given.
        outputs: usize,
    },
    /// A layer's score lies outside its own envelope: one of its three
    /// tables is damaged.
    #[error(
        "{}: entry {index} of layer {layer} holds score {score:+} outside its envelope \
         {lower:+}..{upper:+}; one of scores.{layer}, lower.{layer}, upper.{layer} is damaged",
        dir.display()
    )]
    OutsideEnvelope {
        /// The folder.
        dir: PathBuf,
        /// The layer.
        layer: u32,
        /// The entry.
        index: u64,
        /// The score.
        score: i8,
        /// The envelope's lower end.
        lower: i8,
        /// Its upper end.
        upper: i8,
    },
}

impl Cause for ProbeError {
    fn kind(&self) -> ErrorKind {
        match self {
            ProbeError::OutsideEnvelope { .. } => ErrorKind::Damaged,
            _ => ErrorKind::Input,
        }
    }

    fn path(&self) -> Option<&Path> {
        match self {
            ProbeError::OutsideEnvelope { dir, .. } => Some(dir),
            _ => None,
        }
    }
}

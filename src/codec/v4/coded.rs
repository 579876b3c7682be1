//! What the format 4 encoders share: how a file is cut and modelled
//! ([`V4Settings`]), the runs of entries coded in parallel and the coded
//! blocks of a run.

use super::header::{
    check_blocks, check_classes, V4_DEFAULT_BLOCK_BYTES, V4_DEFAULT_BLOCK_CAP, V4_DEFAULT_CLASSES,
};

/// Entries coded in parallel as one run of blocks (a run ends with a
/// block that may not be full).
pub(super) const RUN: u64 = 1 << 20;

/// How a format 4 file is cut and modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct V4Settings {
    /// Bytes per block.
    pub block_bytes: u32,
    /// The most entries a block holds (bounds a probe's work).
    pub block_cap: u32,
    /// Classes of contexts.
    pub classes: u32,
}

impl Default for V4Settings {
    fn default() -> Self {
        V4Settings {
            block_bytes: V4_DEFAULT_BLOCK_BYTES,
            block_cap: V4_DEFAULT_BLOCK_CAP,
            classes: V4_DEFAULT_CLASSES,
        }
    }
}

impl V4Settings {
    /// What is wrong with these settings, if anything: the field and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        check_blocks(self.block_bytes, self.block_cap)?;
        check_classes(self.classes)
    }
}

/// The coded blocks of a run: the entries of each, and their bytes back
/// to back (every block the same number of bytes), in one allocation (a
/// `Vec` a block left tens of MiB of small freed chunks in the heap after
/// a layer was compressed, which the process kept).
#[derive(Default)]
pub(super) struct Coded {
    pub(super) entries: Vec<u16>,
    pub(super) bytes: Vec<u8>,
}

impl Coded {
    /// Appends a block of `entries` entries (`bytes`, the block's size).
    pub(super) fn push(&mut self, entries: usize, bytes: &[u8]) {
        self.entries.push(entries as u16);
        self.bytes.extend_from_slice(bytes);
    }
}

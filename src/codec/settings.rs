//! How to compress: [`Settings`], the form and the block layout of a
//! format 4 file, and their checks.

use super::v4;

/// How to compress (format 4, [`super::v4`]: the only format this release
/// writes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The most entries a block holds.
    pub block_size: u32,
    /// Bytes per block (of the scores; the full form's envelope blocks
    /// take [`v4::envelope_block_bytes`] of it).
    pub block_bytes: u32,
    /// Code the scores alone (`scores.n.zst`), not the layer's three
    /// tables together (`tables.n.zst`, the full form).
    pub scores_only: bool,
    /// Leave "don't care" entries where the score equals the best exit
    /// ([`v4::dont_care`]); the probe resolves them through the lower
    /// layers. A form of the scores alone.
    pub dont_care: bool,
}

impl Settings {
    /// The default settings of the scores alone (`scores.n.zst`).
    pub const fn random_access() -> Settings {
        Settings {
            block_size: v4::V4_DEFAULT_BLOCK_CAP,
            block_bytes: v4::V4_DEFAULT_BLOCK_BYTES,
            scores_only: true,
            dont_care: false,
        }
    }

    /// The default settings of the full form (`tables.n.zst`, the three
    /// tables; larger score blocks than the scores alone take).
    pub const fn random_access_full() -> Settings {
        Settings {
            block_bytes: v4::V4_FULL_DEFAULT_BLOCK_BYTES,
            scores_only: false,
            ..Settings::random_access()
        }
    }

    /// Checks the settings; on failure, the field and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.dont_care && !self.scores_only {
            return Err((
                "don't care",
                "entries left \"don't care\" are a form of the scores alone (add --scores-only)"
                    .into(),
            ));
        }
        v4::check_blocks(self.block_bytes, self.block_size)
    }
}

impl Default for Settings {
    /// The full form's defaults ([`Settings::random_access_full`]).
    fn default() -> Self {
        Settings::random_access_full()
    }
}

//! How to compress: [`Settings`], the format and its parameters, and
//! their checks.

use super::v3;

/// How to compress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The format: 3 (context models, [`super::v3`]; the default) or 2
    /// (zstd blocks; written as version 1 without a dictionary).
    pub version: u32,
    /// zstd level (format 2).
    pub level: i32,
    /// Entries per block.
    pub block_size: u32,
    /// Bytes of a zstd dictionary trained on the table's blocks and stored
    /// in the file (format 2); 0: none. A table too small to train one on
    /// is written without.
    pub dictionary: u32,
    /// Format 3: code the scores alone (`scores.n.zst`), not the layer's
    /// three tables together (`tables.n.zst`).
    pub scores_only: bool,
}

impl Settings {
    /// The settings of format 2 (zstd blocks) with these level and block
    /// size, without a dictionary.
    pub const fn zstd(level: i32, block_size: u32) -> Settings {
        Settings {
            version: 2,
            level,
            block_size,
            dictionary: 0,
            scores_only: false,
        }
    }

    /// The default settings of format 3, scores alone or not.
    pub const fn models(scores_only: bool) -> Settings {
        Settings {
            version: 3,
            level: 0,
            block_size: v3::V3_DEFAULT_BLOCK_SIZE,
            dictionary: 0,
            scores_only,
        }
    }

    /// Checks the settings ([`crate::format::check_compression`] for
    /// format 2); on failure, the field and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        match self.version {
            3 => {
                if self.dictionary != 0 {
                    return Err((
                        "dictionary",
                        "format 3 codes with context models, not a zstd dictionary".into(),
                    ));
                }
                v3::check_block_size(self.block_size)
            }
            1 | 2 => {
                if self.scores_only {
                    return Err((
                        "scores only",
                        "the scores-only form is one of format 3".into(),
                    ));
                }
                crate::format::check_compression(self.level, self.block_size, self.dictionary)
            }
            v => Err((
                "format",
                format!("{v}: this program writes formats 2 and 3"),
            )),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings::models(false)
    }
}

//! How to compress: [`Settings`], the format and its parameters, and
//! their checks.

use super::{v3, v4};

/// How to compress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The format: 3 (context models, [`super::v3`]; the default), 4
    /// (the scores for random access, [`super::v4`]) or 2 (zstd blocks;
    /// written as version 1 without a dictionary).
    pub version: u32,
    /// zstd level (format 2).
    pub level: i32,
    /// Entries per block (format 4: the most entries a block holds).
    pub block_size: u32,
    /// Format 4: bytes per block (0 for the other formats).
    pub block_bytes: u32,
    /// Bytes of a zstd dictionary trained on the table's blocks and stored
    /// in the file (format 2); 0: none. A table too small to train one on
    /// is written without.
    pub dictionary: u32,
    /// Formats 3 and 4: code the scores alone (`scores.n.zst`), not the
    /// layer's three tables together (`tables.n.zst`).
    pub scores_only: bool,
    /// Format 4: leave "don't care" entries where the score equals the
    /// best exit ([`v4::dont_care`]); the probe resolves them through the
    /// lower layers.
    pub dont_care: bool,
}

impl Settings {
    /// The settings of format 2 (zstd blocks) with these level and block
    /// size, without a dictionary.
    pub const fn zstd(level: i32, block_size: u32) -> Settings {
        Settings {
            version: 2,
            level,
            block_size,
            block_bytes: 0,
            dictionary: 0,
            scores_only: false,
            dont_care: false,
        }
    }

    /// The default settings of format 3, scores alone or not.
    pub const fn models(scores_only: bool) -> Settings {
        Settings {
            version: 3,
            level: 0,
            block_size: v3::V3_DEFAULT_BLOCK_SIZE,
            block_bytes: 0,
            dictionary: 0,
            scores_only,
            dont_care: false,
        }
    }

    /// The default settings of format 4 (the scores alone; the full form
    /// with `scores_only` false).
    pub const fn random_access() -> Settings {
        Settings {
            version: 4,
            level: 0,
            block_size: v4::V4_DEFAULT_BLOCK_CAP,
            block_bytes: v4::V4_DEFAULT_BLOCK_BYTES,
            dictionary: 0,
            scores_only: true,
            dont_care: false,
        }
    }

    /// The default settings of format 4's full form (the three tables;
    /// larger score blocks than the scores alone take).
    pub const fn random_access_full() -> Settings {
        Settings {
            block_bytes: v4::V4_FULL_DEFAULT_BLOCK_BYTES,
            scores_only: false,
            ..Settings::random_access()
        }
    }

    /// Checks the settings ([`crate::format::check_compression`] for
    /// format 2); on failure, the field and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.version != 4 && self.dont_care {
            return Err((
                "don't care",
                "entries left \"don't care\" are a form of format 4".into(),
            ));
        }
        if self.dont_care && !self.scores_only {
            return Err((
                "don't care",
                "entries left \"don't care\" are a form of the scores alone (add --scores-only)"
                    .into(),
            ));
        }
        if self.version != 4 && self.block_bytes != 0 {
            return Err((
                "block bytes",
                "blocks of a fixed number of bytes are a setting of format 4".into(),
            ));
        }
        match self.version {
            4 => {
                if self.dictionary != 0 || self.level != 0 {
                    return Err((
                        "dictionary",
                        "format 4 codes with context models, not zstd".into(),
                    ));
                }
                v4::check_blocks(self.block_bytes, self.block_size)
            }
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
                        "the scores-only form is one of formats 3 and 4".into(),
                    ));
                }
                crate::format::check_compression(self.level, self.block_size, self.dictionary)
            }
            v => Err((
                "format",
                format!("{v}: this program writes formats 2, 3 and 4"),
            )),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings::models(false)
    }
}

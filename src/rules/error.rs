//! The rules' error.

use crate::error::{Cause, ErrorKind};

/// A position or a rule set the rules cannot take.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RulesError {
    /// More than 48 seeds on the board.
    #[error("{0} seeds on the board; awari has at most 48")]
    TooManySeeds(u32),
    /// A pit holding more seeds than a board can.
    #[error("pit {pit}: {seeds} seeds; the whole board holds at most 48")]
    PitOverflow {
        /// Its label (the mover's `A`..`F`, then `a`..`f`).
        pit: char,
        /// The seeds given.
        seeds: i64,
    },
    /// A pit given something that is not a seed count.
    #[error("pit {pit}: '{value}' is not a seed count (a whole number from 0 to 48)")]
    NotASeedCount {
        /// Its label (the mover's `A`..`F`, then `a`..`f`).
        pit: char,
        /// What was given, as written.
        value: String,
    },
    /// Not twelve pit counts.
    #[error("a board is 12 pit counts (A..F, then a..f), got {0} value{s}", s = if *.0 == 1 { "" } else { "s" })]
    PitsLength(usize),
    /// Every opponent pit (a..f) holds seeds, so the opponent cannot have
    /// just moved; such boards have no Goedel number.
    #[error(
        "every pit of the opponent (a..f) holds seeds, so the opponent cannot have just moved \
         (a move empties the pit it sows from); such a board has no Goedel number"
    )]
    OpponentFull,
    /// A rule set name that is not a preset.
    #[error("unknown rule set '{name}'; the rule sets are: {known}")]
    UnknownRules {
        /// The name asked for.
        name: String,
        /// The presets' names.
        known: String,
    },
    /// A rule set written out (a manifest's `rules`) without its name.
    #[error("no \"name\" field")]
    RulesUnnamed,
    /// A rule set written out (a manifest's `rules`) that differs from
    /// this program's preset of its name in a field that shapes the tables.
    #[error("its rule set '{name}' differs from this program's in {field}")]
    RulesFieldDiffers {
        /// The preset's name.
        name: &'static str,
        /// The first field that differs.
        field: &'static str,
        /// Its value there (`None`: absent).
        found: Option<serde_json::Value>,
    },
}

impl Cause for RulesError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Input
    }
}

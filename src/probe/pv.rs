//! The principal variation: the line of best play from a position
//! ([`Pv`], [`PvStep`], [`PvEnd`]).

use super::distance::best_of;
use super::{Database, Distance};
use crate::error::Result;
use crate::rules::Position;
use std::collections::HashSet;

/// Why a principal variation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PvEnd {
    /// The side to move has no legal move (no seeds; under abapa and
    /// olympiad none that feeds the opponent; under awale only grand
    /// slams): the game is over.
    GameOver,
    /// A position repeated: play goes on forever from here (with the
    /// distance, only where the score is endless play's).
    Repetition,
    /// The step limit was reached.
    Limit,
}

/// One move of a principal variation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PvStep {
    /// The position before the move.
    pub position: Position,
    /// Its score.
    pub score: i8,
    /// Its distance to the next capture, where the tables have it.
    pub distance: Option<Distance>,
    /// The pit played (a best move, the lowest pit among equals).
    pub pit: u8,
    /// Seeds captured by it.
    pub captures: u8,
}

/// A line of best play.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Pv {
    /// The moves.
    pub steps: Vec<PvStep>,
    /// The position reached.
    pub last: Position,
    /// Why the line stops.
    pub end: PvEnd,
}

impl Database {
    /// The line of best moves ([`best_moves`](Self::best_moves), the
    /// lowest pit among equals) from `p` until the game ends, a position
    /// repeats, or `limit` moves were made. With the distance, the line
    /// makes progress: it repeats a position only where the score is
    /// endless play's.
    ///
    /// A board without a Goedel number (the opening) is played from too:
    /// a move empties the pit it sows, so the line never comes back to it.
    pub fn principal_variation(&self, p: &Position, limit: usize) -> Result<Pv> {
        Self::seeds_of(p)?;
        let mut pos = *p;
        let mut seen = HashSet::new();
        let mut steps = Vec::new();
        loop {
            if pos.moves(&self.rules).legal().next().is_none() {
                return Ok(Pv {
                    steps,
                    last: pos,
                    end: PvEnd::GameOver,
                });
            }
            if !seen.insert(pos) {
                return Ok(Pv {
                    steps,
                    last: pos,
                    end: PvEnd::Repetition,
                });
            }
            if steps.len() >= limit {
                return Ok(Pv {
                    steps,
                    last: pos,
                    end: PvEnd::Limit,
                });
            }
            let moves = self.moves(&pos)?;
            let Some(best) = best_of(&moves).first().map(|&pit| moves[pit as usize]) else {
                // (Checked above: a position with a legal move has one.)
                return Ok(Pv {
                    steps,
                    last: pos,
                    end: PvEnd::GameOver,
                });
            };
            steps.push(PvStep {
                position: pos,
                score: self.score(&pos)?,
                distance: self.distance(&pos)?,
                pit: best.pit,
                captures: best.captures,
            });
            let Some(child) = best.child else {
                return Ok(Pv {
                    steps,
                    last: pos,
                    end: PvEnd::GameOver,
                });
            };
            pos = child;
        }
    }
}

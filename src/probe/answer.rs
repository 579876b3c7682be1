//! One position's full answer, the object `awari query --json` prints and
//! `awari serve` returns ([`Answer`]): one shape for every door.

use super::{Database, PvEnd};
use crate::error::Result;
use crate::index;
use crate::rules::Position;
use serde::Serialize;

/// One of the mover's six pits in an [`Answer`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AnswerMove {
    /// The pit, 0..5 (the mover's, from its left).
    pub pit: u8,
    /// Its label as players write it: `A`..`F` (the mover's row).
    pub label: char,
    /// Whether the move is legal.
    pub legal: bool,
    /// Seeds it captures.
    pub captures: u8,
    /// Its exact worth for the mover; `None` for an empty pit or an
    /// illegal move.
    pub score: Option<i8>,
    /// The board after the move, from the opponent's side (its pits
    /// first); `None` for an empty pit or an illegal move.
    pub child: Option<[u8; 12]>,
}

/// One move of the line of best play in an [`Answer`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AnswerStep {
    /// The position before the move, from its mover's side.
    pub pits: [u8; 12],
    /// Its score, for that position's mover.
    pub score: i8,
    /// The pit played.
    pub pit: u8,
    /// Seeds the move captures.
    pub captures: u8,
}

/// Everything the tables say about one position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Answer {
    /// The rule set of the tables (`awari`, `abapa`, ...).
    pub rules: &'static str,
    /// The board, the mover's pits 0..5 first.
    pub pits: [u8; 12],
    /// Seeds on the board (the layer).
    pub seeds: u32,
    /// The Goedel number within the layer.
    pub index: u64,
    /// The exact score for the mover.
    pub score: i8,
    /// The cycle envelope's lower end, where the tables hold it.
    pub lower: Option<i8>,
    /// The cycle envelope's upper end, where the tables hold it.
    pub upper: Option<i8>,
    /// Whether the score is independent of the cycle rule.
    pub pinned: Option<bool>,
    /// The six pits as moves.
    pub moves: Vec<AnswerMove>,
    /// The best pits (every one of equal worth), empty when the game is over.
    pub best: Vec<u8>,
    /// The line of best play, when asked for.
    pub pv: Option<Vec<AnswerStep>>,
    /// Why the line stopped, when asked for.
    pub pv_end: Option<PvEnd>,
}

impl Database {
    /// The score, envelope, moves and best moves of `p`, and with
    /// `pv = Some(limit)` the line of best play of at most `limit` moves.
    pub fn answer(&self, p: &Position, pv: Option<usize>) -> Result<Answer> {
        let score = self.score(p)?;
        let env = self.envelope(p)?;
        let moves = self.moves(p)?;
        let best = super::query::best_of(&moves);
        let (pv, pv_end) = match pv {
            Some(limit) => {
                let line = self.principal_variation(p, limit)?;
                let steps = line
                    .steps
                    .iter()
                    .map(|s| AnswerStep {
                        pits: s.position.0,
                        score: s.score,
                        pit: s.pit,
                        captures: s.captures,
                    })
                    .collect();
                (Some(steps), Some(line.end))
            }
            None => (None, None),
        };
        Ok(Answer {
            rules: self.rules().name,
            pits: p.0,
            seeds: p.seeds(),
            index: index::rank(p),
            score,
            lower: env.map(|e| e.lower),
            upper: env.map(|e| e.upper),
            pinned: env.map(|e| e.pinned()),
            moves: moves
                .iter()
                .map(|m| AnswerMove {
                    pit: m.pit,
                    label: (b'A' + m.pit) as char,
                    legal: m.legal,
                    captures: m.captures,
                    score: m.score,
                    child: m.child.filter(|_| m.legal).map(|c| c.0),
                })
                .collect(),
            best,
            pv,
            pv_end,
        })
    }
}

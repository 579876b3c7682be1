//! One position's full answer, the object `awari query --json` prints and
//! `awari serve` returns ([`Answer`]): one shape for every door.

use super::{Database, Distance, Envelope, MoveInfo, PvEnd};
use crate::error::Result;
use crate::index;
use crate::rules::Position;
use serde::Serialize;

/// One of the mover's six pits in an [`Answer`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AnswerMove {
    /// The pit, 0..5 (the mover's, from its left).
    pub pit: u8,
    /// Its label as players write it: `A`..`F` (the mover's row;
    /// [`crate::game::Board::answer`] gives North's `a`..`f`).
    pub label: char,
    /// Whether the move is legal.
    pub legal: bool,
    /// Seeds it captures.
    pub captures: u8,
    /// Its exact worth for the mover; `None` for an empty pit or an
    /// illegal move.
    pub score: Option<i8>,
    /// How far the next capture is after it, this move counted
    /// ([`super::Distance`]); in JSON only where the tables have it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<Distance>,
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
    /// Its distance to the next capture; in JSON only where the tables
    /// have it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<Distance>,
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
    /// Whether nothing named the rule set: raw tables without manifest
    /// read as awari's ([`Database::rules_assumed`]); in JSON only when
    /// so.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rules_assumed: bool,
    /// The board, the mover's pits 0..5 first.
    pub pits: [u8; 12],
    /// Seeds on the board (the layer).
    pub seeds: u32,
    /// The Goedel number within the layer; `None` for a board that has
    /// none (every opponent pit holds seeds: the opening, or a board set
    /// up by hand), answered from its moves.
    pub index: Option<u64>,
    /// The exact score for the mover.
    pub score: i8,
    /// The cycle envelope's lower end, where the tables hold it.
    pub lower: Option<i8>,
    /// The cycle envelope's upper end, where the tables hold it.
    pub upper: Option<i8>,
    /// Whether the score is independent of the cycle rule.
    pub pinned: Option<bool>,
    /// The distance to the next capture when both sides keep the score
    /// ([`super::Distance`]); in JSON only where the tables have it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<Distance>,
    /// The six pits as moves.
    pub moves: Vec<AnswerMove>,
    /// The best pits (every one of equal worth), empty when the game is over.
    pub best: Vec<u8>,
    /// The line of best play, when asked for.
    pub pv: Option<Vec<AnswerStep>>,
    /// Why the line stopped, when asked for.
    pub pv_end: Option<PvEnd>,
}

/// The six moves as an answer gives them.
fn answer_moves(moves: &[MoveInfo; 6]) -> Vec<AnswerMove> {
    moves
        .iter()
        .map(|m| AnswerMove {
            pit: m.pit,
            label: Position::label(m.pit as usize),
            legal: m.legal,
            captures: m.captures,
            score: m.score,
            distance: m.distance,
            child: m.child.filter(|_| m.legal).map(|c| c.0),
        })
        .collect()
}

impl Database {
    /// The score, envelope, moves and best moves of `p`, and with
    /// `pv = Some(limit)` the line of best play of at most `limit` moves.
    ///
    /// A board without a Goedel number (every opponent pit holds seeds,
    /// as at the opening: no move leads to it, so no table holds it) is
    /// answered from its moves, whose children have numbers, as
    /// [`score`](Self::score), [`envelope`](Self::envelope) and
    /// [`principal_variation`](Self::principal_variation) answer it.
    pub fn answer(&self, p: &Position, pv: Option<usize>) -> Result<Answer> {
        let score = self.score(p)?;
        let env = self.envelope(p)?.map(|e| (e.lower, e.upper));
        let moves = self.moves(p)?;
        let best = super::distance::best_of(&moves);
        let line = match pv {
            Some(limit) => Some(self.line(p, limit)?),
            None => None,
        };
        let (pv, pv_end) = line.unzip();
        Ok(Answer {
            rules: self.rules.name,
            rules_assumed: self.rules_assumed(),
            pits: p.0,
            seeds: p.seeds(),
            index: p.is_indexable().then(|| index::rank(p)),
            score,
            lower: env.map(|e| e.0),
            upper: env.map(|e| e.1),
            pinned: env.map(|e| e.0 == e.1),
            distance: self.distance(p)?,
            moves: answer_moves(&moves),
            best,
            pv,
            pv_end,
        })
    }

    /// The principal variation of a board, as answer steps.
    fn line(&self, p: &Position, limit: usize) -> Result<(Vec<AnswerStep>, PvEnd)> {
        let line = self.principal_variation(p, limit)?;
        let steps = line
            .steps
            .iter()
            .map(|s| AnswerStep {
                pits: s.position.0,
                score: s.score,
                distance: s.distance,
                pit: s.pit,
                captures: s.captures,
            })
            .collect();
        Ok((steps, line.end))
    }

    /// The envelope of a board without a Goedel number from its `moves`:
    /// the best of the moves' envelopes (each its captures less the
    /// child's, ends swapped), or its score where the game is over.
    pub(super) fn envelope_from_moves(
        &self,
        p: &Position,
        moves: &[MoveInfo; 6],
    ) -> Result<Option<Envelope>> {
        let mut env: Option<(i8, i8)> = None;
        for m in moves.iter().filter(|m| m.legal) {
            let (Some(c), Some(worth)) = (m.child, m.score) else {
                continue;
            };
            let (lo, hi) = if c.mover_seeds() == 0 {
                (worth, worth)
            } else {
                match self.envelope(&c)? {
                    Some(e) => (m.captures as i8 - e.upper, m.captures as i8 - e.lower),
                    None => return Ok(None),
                }
            };
            env = Some(env.map_or((lo, hi), |(l, h)| (l.max(lo), h.max(hi))));
        }
        Ok(Some(match env {
            Some((lower, upper)) => Envelope { lower, upper },
            None => {
                let score = self.score_from_moves(p, moves)?;
                Envelope {
                    lower: score,
                    upper: score,
                }
            }
        }))
    }
}

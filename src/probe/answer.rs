//! One position's full answer, the object `awari query --json` prints and
//! `awari serve` returns ([`Answer`]): one shape for every door.

use super::{Database, Distance, MoveInfo, PvEnd};
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
            label: (b'A' + m.pit) as char,
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
    /// answered from its moves, whose children have numbers: its score is
    /// its best move's worth, its envelope the best of its moves'
    /// envelopes.
    pub fn answer(&self, p: &Position, pv: Option<usize>) -> Result<Answer> {
        if !p.is_indexable() {
            return self.answer_from_moves(p, pv);
        }
        let score = self.score(p)?;
        let env = self.envelope(p)?;
        let moves = self.moves(p)?;
        let best = super::distance::best_of(&moves);
        let line = match pv {
            Some(limit) => Some(self.line(p, limit)?),
            None => None,
        };
        let env = env.map(|e| (e.lower, e.upper));
        let index = Some(index::rank(p));
        let distance = self.distance(p)?;
        Ok(self.assemble(p, index, (score, distance), env, &moves, best, line))
    }

    /// The answer of `p` from its parts: what [`answer`](Self::answer)
    /// gives for boards with and without a Goedel number alike.
    #[allow(clippy::too_many_arguments)]
    fn assemble(
        &self,
        p: &Position,
        index: Option<u64>,
        (score, distance): (i8, Option<Distance>),
        env: Option<(i8, i8)>,
        moves: &[MoveInfo; 6],
        best: Vec<u8>,
        line: Option<(Vec<AnswerStep>, PvEnd)>,
    ) -> Answer {
        let (pv, pv_end) = line.map_or((None, None), |(s, e)| (Some(s), Some(e)));
        Answer {
            rules: self.rules().name,
            rules_assumed: self.rules_assumed(),
            pits: p.0,
            seeds: p.seeds(),
            index,
            score,
            lower: env.map(|e| e.0),
            upper: env.map(|e| e.1),
            pinned: env.map(|e| e.0 == e.1),
            distance,
            moves: answer_moves(moves),
            best,
            pv,
            pv_end,
        }
    }

    /// The principal variation of an indexed board, as answer steps.
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

    /// [`answer`](Self::answer) of a board without a Goedel number.
    fn answer_from_moves(&self, p: &Position, pv: Option<usize>) -> Result<Answer> {
        Self::seeds_of(p)?; // at most 48 seeds, not 47
        let moves = self.moves_of(p)?;
        let best = super::distance::best_of(&moves);
        let score = self.score_from_moves(p, &moves)?;
        // Each move's envelope: its captures less the child's, ends swapped.
        let mut env = Some((i8::MIN, i8::MIN));
        for m in moves.iter().filter(|m| m.legal) {
            let (Some(c), Some(worth)) = (m.child, m.score) else {
                continue;
            };
            let (lo, hi) = if c.mover_seeds() == 0 {
                (worth, worth)
            } else {
                match self.envelope(&c)? {
                    Some(e) => (m.captures as i8 - e.upper, m.captures as i8 - e.lower),
                    None => {
                        env = None;
                        break;
                    }
                }
            };
            env = env.map(|(l, h)| (l.max(lo), h.max(hi)));
        }
        let env = env.map(|(l, h)| {
            if best.is_empty() {
                (score, score)
            } else {
                (l, h)
            }
        });
        let line = match pv {
            None => None,
            Some(0) => Some((Vec::new(), PvEnd::Limit)),
            Some(_) if best.is_empty() => Some((Vec::new(), PvEnd::GameOver)),
            Some(limit) => {
                let m = &moves[best[0] as usize];
                let child = m.child.expect("a legal move has a child");
                let mut steps = vec![AnswerStep {
                    pits: p.0,
                    score,
                    distance: super::distance::best_distance(&moves, score),
                    pit: m.pit,
                    captures: m.captures,
                }];
                // A move always leaves the pit it sowed from empty, so the
                // line never comes back to this board.
                let (rest, end) = self.line(&child, limit - 1)?;
                steps.extend(rest);
                Some((steps, end))
            }
        };
        let distance = super::distance::best_distance(&moves, score);
        Ok(self.assemble(p, None, (score, distance), env, &moves, best, line))
    }
}

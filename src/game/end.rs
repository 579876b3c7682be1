//! The rules of the end: what ends a game ([`End`], [`Game::end`], checked
//! in the order the [module's documentation](super) gives, by the numbers
//! of the game's rule set), the final score, the winner and the sentence
//! that says so ([`Game::result`]).

use super::{Game, Side};
use crate::rules::SeedsLeft;

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// A side captured the rule set's `win` (25) or more.
    Won(Side),
    /// Both sides captured the rule set's `draw` (24).
    Draw,
    /// The position occurred as often as the rule set allows: the seeds
    /// left are split evenly, or nobody's (the rule set's `seeds_left`).
    Repetition,
    /// Too many plies without a capture: the seeds left go as at a
    /// repetition.
    NoCaptureLimit(u32),
    /// The side to move has no seeds: the other side takes the seeds left.
    NoSeeds(Side),
    /// The side to move cannot feed the opponent (who has no seeds): each
    /// side takes the seeds of its own row.
    CannotFeed(Side),
    /// Every move the side to move has is a grand slam, which its rule set
    /// never allows: it cannot play, and the other side takes the seeds
    /// left (awale).
    OnlyGrandSlams(Side),
    /// The side ran out of time: it loses, whatever the seeds say.
    Time(Side),
}

impl End {
    /// A sentence for players.
    pub fn describe(&self) -> String {
        match self {
            End::Won(s) => format!("{} has captured more than half of the seeds", s.name()),
            End::Draw => "both sides have captured 24 seeds".into(),
            End::Repetition => "the position repeats: play would go on forever".into(),
            End::NoCaptureLimit(k) => {
                format!("{k} plies without a capture: play would go on forever")
            }
            End::NoSeeds(s) => format!(
                "{} has no seeds to move: {} takes the seeds left",
                s.name(),
                s.other().name()
            ),
            End::CannotFeed(s) => format!(
                "{} cannot give {} seeds: each side takes the seeds of its own row",
                s.name(),
                s.other().name()
            ),
            End::OnlyGrandSlams(s) => format!(
                "every move {} has would capture all of {}'s seeds, which is not allowed: {} takes the seeds left",
                s.name(),
                s.other().name(),
                s.other().name()
            ),
            End::Time(s) => format!("{} ran out of time and loses", s.name()),
        }
    }
}

impl Game {
    /// How the game ended, if it did.
    pub fn end(&self) -> Option<End> {
        if let Some(side) = self.flagged {
            return Some(End::Time(side));
        }
        let r = &self.rules;
        let b = self.board();
        if let Some(win) = r.win {
            for side in [Side::South, Side::North] {
                if b.captured_by(side) >= win as u32 {
                    return Some(End::Won(side));
                }
            }
        }
        if r.draw.is_some_and(|d| b.captured == [d as u32; 2]) {
            return Some(End::Draw);
        }
        let p = b.position();
        if p.mover_seeds() == 0 {
            return Some(End::NoSeeds(b.to_move));
        }
        if p.moves(r).legal().next().is_none() {
            // The score says who takes the rest: the mover (it cannot
            // feed) or the opponent (every move a forbidden grand slam).
            return Some(if p.final_score(r) > 0 {
                End::CannotFeed(b.to_move)
            } else {
                End::OnlyGrandSlams(b.to_move)
            });
        }
        let since = self.since_capture();
        let occurrences = self.boards[since..]
            .iter()
            .filter(|o| o.pits == b.pits && o.to_move == b.to_move)
            .count();
        if occurrences >= r.repetition as usize {
            return Some(End::Repetition);
        }
        if let Some(k) = r.no_capture_limit {
            if (self.boards.len() - 1 - since) as u32 >= k {
                return Some(End::NoCaptureLimit(k));
            }
        }
        None
    }

    /// The final score of each side (South, North) once the game ended, in
    /// half seeds (a repetition splits an odd number of seeds evenly).
    pub fn final_half_seeds(&self) -> Option<[u32; 2]> {
        let b = self.board();
        let [s, n] = b.captured;
        let left = b.seeds();
        let split = match self.rules.seeds_left {
            SeedsLeft::SplitEvenly => left,
            SeedsLeft::NotCaptured => 0,
        };
        Some(match self.end()? {
            End::Won(_) | End::Draw | End::Time(_) => [2 * s, 2 * n],
            End::Repetition | End::NoCaptureLimit(_) => [2 * s + split, 2 * n + split],
            End::CannotFeed(Side::South) => [2 * (s + left), 2 * n],
            End::CannotFeed(Side::North) => [2 * s, 2 * (n + left)],
            End::NoSeeds(Side::South) | End::OnlyGrandSlams(Side::South) => [2 * s, 2 * (n + left)],
            End::NoSeeds(Side::North) | End::OnlyGrandSlams(Side::North) => [2 * (s + left), 2 * n],
        })
    }

    /// The winner once the game ended: `Some(side)`, or `None` for a draw
    /// (equal final scores).
    pub fn winner(&self) -> Option<Option<Side>> {
        if let End::Time(side) = self.end()? {
            return Some(Some(side.other()));
        }
        let [s, n] = self.final_half_seeds()?;
        Some(match s.cmp(&n) {
            std::cmp::Ordering::Greater => Some(Side::South),
            std::cmp::Ordering::Less => Some(Side::North),
            std::cmp::Ordering::Equal => None,
        })
    }

    /// A sentence on how the game ended, with the final score and the
    /// winner, e.g. "North has captured more than half of the seeds; South
    /// 22, North 26: North wins".
    pub fn result(&self) -> Option<String> {
        let end = self.end()?;
        let [s, n] = self.final_half_seeds()?;
        let half = |h: u32| {
            if h % 2 == 0 {
                (h / 2).to_string()
            } else {
                format!("{}.5", h / 2)
            }
        };
        let who = match self.winner()? {
            Some(w) => format!("{} wins", w.name()),
            None => "a draw".to_string(),
        };
        Some(format!(
            "{}; South {}, North {}: {who}",
            end.describe(),
            half(s),
            half(n)
        ))
    }

    /// Ends the game: `side` ran out of time.
    pub fn flag(&mut self, side: Side) {
        self.flagged = Some(side);
    }
}

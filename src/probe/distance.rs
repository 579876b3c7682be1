//! The distance to the next capture ([`Distance`], defined in
//! [`crate::solve::distance`]) and best play by it: among the moves that
//! keep the score, the one of least distance when the mover needs
//! progress (a score of 0 or more), of greatest distance when its
//! opponent does.

use super::{Database, MoveInfo};
use crate::error::Result;
use crate::format::Kind;
use crate::index::layer_size;
use crate::rules::{Position, MAX_SEEDS};
use crate::solve::distance::{MAX, NONE};
use crate::store::StoreError;

/// How far the next capture (or the end of the game) is when both sides
/// keep the score.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Distance {
    /// This many plies (0: the game is over).
    Plies(u16),
    /// No capture: only endless play keeps the score (it is 0 then).
    Endless,
}

impl Distance {
    /// The distance of a table entry, if the entry is one.
    pub fn of_byte(b: u8) -> Option<Distance> {
        match b {
            NONE => Some(Distance::Endless),
            b if b <= MAX => Some(Distance::Plies(b as u16)),
            _ => None,
        }
    }

    /// The plies, unless endless.
    pub fn plies(self) -> Option<u16> {
        match self {
            Distance::Plies(k) => Some(k),
            Distance::Endless => None,
        }
    }

    /// One ply more: the distance of a move into a position this far.
    pub fn after_move(self) -> Distance {
        match self {
            Distance::Plies(k) => Distance::Plies(k + 1),
            Distance::Endless => Distance::Endless,
        }
    }
}

impl std::fmt::Display for Distance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Distance::Plies(0) => write!(f, "game over"),
            Distance::Plies(k) => write!(f, "capture in {k}"),
            Distance::Endless => write!(f, "endless play"),
        }
    }
}

/// In JSON a number of plies, or `"endless"`.
impl serde::Serialize for Distance {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Distance::Plies(k) => s.serialize_u16(*k),
            Distance::Endless => s.serialize_str("endless"),
        }
    }
}

impl Database {
    /// Whether layer `n` has a distance table (maps the layer if needed).
    pub fn has_distance(&self, n: u32) -> Result<bool> {
        if n > MAX_SEEDS {
            return Err(crate::index::IndexError::NoSuchLayer(n).into());
        }
        Ok(self.layer(n)?.dist.is_some())
    }

    /// The distance of a position to the next capture when both sides
    /// keep the score; `None` when its layer has no distance table (a
    /// folder built without it, or a VU folder). A board without a Goedel
    /// number (the opening) is answered from its moves.
    pub fn distance(&self, p: &Position) -> Result<Option<Distance>> {
        if !p.is_indexable() {
            let moves = self.moves_of(p)?;
            let score = self.score_from_moves(p, &moves)?;
            return Ok(best_distance(&moves, score));
        }
        let (n, g) = Self::locate(p)?;
        self.distance_at(n, g)
    }

    /// The distance at Goedel index `g` of layer `n`, `None` without a
    /// distance table; a byte that is no distance is damage.
    pub fn distance_at(&self, n: u32, g: u64) -> Result<Option<Distance>> {
        if n > MAX_SEEDS || g >= layer_size(n) {
            crate::index::unrank(n, g)?;
        }
        let Some(t) = &self.layer(n)?.dist else {
            return Ok(None);
        };
        let b = t.get(g)? as u8;
        match Distance::of_byte(b) {
            Some(d) => Ok(Some(d)),
            None => Err(StoreError::BadValue {
                path: self
                    .dir()
                    .unwrap_or(std::path::Path::new("(memory)"))
                    .join(Kind::Distance.file_name(n)),
                layer: n,
                index: g,
                value: b as i8,
            }
            .into()),
        }
    }

    /// The best move: the lowest pit of [`best_moves`](Self::best_moves);
    /// `None` when the game is over.
    pub fn best_move(&self, p: &Position) -> Result<Option<u8>> {
        Ok(best_of(&self.moves(p)?).first().copied())
    }
}

/// The distance of a position whose moves are `moves` and score `score`:
/// the least (score `>= 0`) or greatest (below 0) distance of the moves
/// that keep the score; `None` where a move's distance is not known.
pub(super) fn best_distance(moves: &[MoveInfo; 6], score: i8) -> Option<Distance> {
    let kept = moves.iter().filter(|m| m.score == Some(score));
    let ds: Option<Vec<Distance>> = kept.map(|m| m.distance).collect();
    let ds = ds?;
    if ds.is_empty() {
        // No legal move: the game is over.
        return moves.iter().all(|m| !m.legal).then_some(Distance::Plies(0));
    }
    if score >= 0 {
        ds.into_iter().min()
    } else {
        ds.into_iter().max()
    }
}

/// The pits of `moves` of best worth and, where every one of them has a
/// distance, of the best distance among them ([`best_distance`]).
pub(super) fn best_of(moves: &[MoveInfo; 6]) -> Vec<u8> {
    let legal: Vec<(u8, i32, Option<Distance>)> = moves
        .iter()
        .filter_map(|m| m.score.map(|s| (m.pit, s as i32, m.distance)))
        .collect();
    best_pits(&legal)
}

/// The best of a position's legal moves, each `(pit, worth, distance)`
/// (the distance `None` where the tables have none): those of best worth
/// and, where every one of them has a distance, the least distance among
/// them when that worth is 0 or more, the greatest when it is below
/// ([`crate::solve::distance`]); in the order given.
pub fn best_pits(moves: &[(u8, i32, Option<Distance>)]) -> Vec<u8> {
    let Some(best) = moves.iter().map(|m| m.1).max() else {
        return Vec::new();
    };
    let kept = || moves.iter().filter(move |m| m.1 == best);
    let ds: Option<Vec<Distance>> = kept().map(|m| m.2).collect();
    let target = ds.and_then(|ds| {
        if best >= 0 {
            ds.into_iter().min()
        } else {
            ds.into_iter().max()
        }
    });
    kept()
        .filter(|m| target.is_none() || m.2 == target)
        .map(|m| m.0)
        .collect()
}

//! The position notation: a board, the side to move and the seeds each
//! side has captured in one line of text, as FEN is to chess. The page of
//! `awari serve` keeps it in its URL (`?pos=`), `awari query --pos` and
//! `awari play --pos` read it, the API answers with it, and the Python
//! module reads and writes it.
//!
//! ```text
//! 4,4,4,4,4,4/4,4,4,4,4,4/S/0,0
//! ^ South A..F  ^ North a..f  ^ to move (S or N)  ^ captured by South, North
//! ```
//!
//! The captured field may be left out (`1,0,0,0,0,0/0,0,0,0,0,2/N`): the
//! seeds off the board are then split evenly, South taking an odd one, as
//! `awari play` does. Seeds on the board and captured make 48.

use super::{Board, GameError, Side};
use crate::error::{Error, Result};
use crate::rules::PITS;
use std::fmt;

/// Why a text is not a position in the notation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotationFault {
    /// Not three or four fields separated by `/`.
    #[error(
        "write South's pits A..F, North's pits a..f, the side to move and optionally the seeds \
         captured by South and North, separated by '/': e.g. 4,4,4,4,4,4/4,4,4,4,4,4/S/0,0"
    )]
    Fields,
    /// A row without six counts.
    #[error("{side}'s row has {found} pit counts, not 6")]
    Row {
        /// Whose row.
        side: &'static str,
        /// How many counts it has.
        found: usize,
    },
    /// A pit count that is not a number of seeds.
    #[error("pit {label}: '{text}' is not a number of seeds (0..=48)")]
    Count {
        /// The pit's label.
        label: char,
        /// What was written.
        text: String,
    },
    /// Not a side.
    #[error("'{0}' is not the side to move: S (South) or N (North)")]
    Side(String),
    /// Not two captured counts.
    #[error("'{0}' is not the seeds captured: give South's and North's, e.g. 20,12")]
    Captured(String),
}

impl Board {
    /// The board in the notation (`A..F/a..f/S|N/captured`, described in [`crate::game`]).
    pub fn notation(&self) -> String {
        self.to_string()
    }

    /// A board from the notation; a text that is not one is an
    /// [`GameError::Notation`], a board whose seeds do not make 48 with the
    /// captured ones an [`GameError::SeedCount`] or [`RulesError::TooManySeeds`](crate::rules::RulesError::TooManySeeds).
    pub fn from_notation(text: &str) -> Result<Board> {
        let bad = |fault: NotationFault| -> Error {
            GameError::Notation {
                text: text.to_string(),
                fault: Box::new(fault),
            }
            .into()
        };
        let fields: Vec<&str> = text.trim().split('/').map(str::trim).collect();
        if !(3..=4).contains(&fields.len()) {
            return Err(bad(NotationFault::Fields));
        }
        let mut pits = [0u8; PITS];
        for (side, row) in [Side::South, Side::North].into_iter().zip(&fields[..2]) {
            let counts: Vec<&str> = row.split(',').map(str::trim).collect();
            if counts.len() != 6 {
                return Err(bad(NotationFault::Row {
                    side: side.name(),
                    found: counts.len(),
                }));
            }
            for (pit, c) in counts.iter().enumerate() {
                let v = c.parse::<u8>().ok().filter(|&v| v <= 48).ok_or_else(|| {
                    bad(NotationFault::Count {
                        label: side.label(pit),
                        text: c.to_string(),
                    })
                })?;
                pits[side.index() * 6 + pit] = v;
            }
        }
        let to_move = match fields[2] {
            "S" | "s" => Side::South,
            "N" | "n" => Side::North,
            other => return Err(bad(NotationFault::Side(other.to_string()))),
        };
        let captured = match fields.get(3) {
            None => None,
            Some(c) => {
                let v: Vec<Option<u32>> = c.split(',').map(|w| w.trim().parse().ok()).collect();
                match v[..] {
                    [Some(s), Some(n)] if s <= 48 && n <= 48 => Some([s, n]),
                    _ => return Err(bad(NotationFault::Captured(c.to_string()))),
                }
            }
        };
        let mut b = Board::new(pits, captured)?;
        b.to_move = to_move;
        Ok(b)
    }
}

impl fmt::Display for Board {
    /// The notation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = |r: &[u8]| r.iter().map(u8::to_string).collect::<Vec<_>>().join(",");
        let side = match self.to_move {
            Side::South => 'S',
            Side::North => 'N',
        };
        write!(
            f,
            "{}/{}/{side}/{},{}",
            row(&self.pits[..6]),
            row(&self.pits[6..]),
            self.captured[0],
            self.captured[1]
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_opening_reads_and_writes() {
        let b = Board::from_notation("4,4,4,4,4,4/4,4,4,4,4,4/S/0,0").unwrap();
        assert_eq!(b, Board::opening());
        assert_eq!(b.notation(), "4,4,4,4,4,4/4,4,4,4,4,4/S/0,0");
    }

    #[test]
    fn every_board_reads_back() {
        let b = Board::from_notation(" 1,0,0,0,0,3 / 0,0,2,0,0,0 / N / 20,22 ").unwrap();
        assert_eq!(b.pits, [1, 0, 0, 0, 0, 3, 0, 0, 2, 0, 0, 0]);
        assert_eq!(b.to_move, Side::North);
        assert_eq!(b.captured, [20, 22]);
        assert_eq!(Board::from_notation(&b.notation()).unwrap(), b);
        // Without the captured field the rest is split, South taking the odd one.
        let b = Board::from_notation("1,0,0,0,0,0/0,0,0,0,0,2/n").unwrap();
        assert_eq!(b.captured, [23, 22]);
    }

    #[test]
    fn bad_texts_say_what_is_wrong_in_players_words() {
        let msg = |t: &str| Board::from_notation(t).unwrap_err().to_string();
        assert!(msg("4,4,4").contains("separated by '/'"));
        assert!(msg("4,4,4,4,4/4,4,4,4,4,4/S").contains("South's row has 5 pit counts"));
        assert!(msg("4,4,x,4,4,4/4,4,4,4,4,4/S").contains("pit C: 'x'"));
        assert!(msg("4,4,4,4,4,4/4,4,4,4,-1,4/S").contains("pit e: '-1'"));
        assert!(msg("4,4,4,4,4,4/4,4,4,4,4,4/W").contains("'W' is not the side to move"));
        assert!(msg("4,4,4,4,4,4/4,4,4,4,4,4/S/1").contains("'1' is not the seeds captured"));
        assert!(msg("4,4,4,4,4,4/4,4,4,4,4,4/S/1,0").contains("make 49, not 48"));
        assert!(matches!(
            Board::from_notation("4,4,4,4,4,4/4,4,4,4,4,4/S/1,0"),
            Err(e) if matches!(e.cause(), Some(GameError::SeedCount { .. }))
        ));
    }
}

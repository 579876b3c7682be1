//! The board as players see it: the two sides ([`Side`]), the pits by
//! label, the captured seeds, a move by label, and the diagram `awari play`
//! draws ([`Board`]). The layout and the labels are in the
//! [module's documentation](super).

use crate::error::Result;
use crate::game::GameError;
use crate::probe::{Answer, Database};
use crate::rules::RulesError;
use crate::rules::{Position, Rules, PITS};

/// One of the two players.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// Bottom row, pits `A`..`F`; moves first.
    South,
    /// Top row, pits `a`..`f`.
    North,
}

impl Side {
    /// The other side.
    pub fn other(self) -> Side {
        match self {
            Side::South => Side::North,
            Side::North => Side::South,
        }
    }
    /// `South` or `North`.
    pub fn name(self) -> &'static str {
        match self {
            Side::South => "South",
            Side::North => "North",
        }
    }
    /// 0 for South, 1 for North (as in [`Board::captured`]).
    pub fn index(self) -> usize {
        match self {
            Side::South => 0,
            Side::North => 1,
        }
    }
    /// The label of this side's pit `pit` (0..5, from its own left).
    pub fn label(self, pit: usize) -> char {
        let base = match self {
            Side::South => b'A',
            Side::North => b'a',
        };
        (base + pit as u8) as char
    }
}

/// The board, the side to move and the seeds each side has captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    /// `A`..`F` (South), then `a`..`f` (North).
    pub pits: [u8; PITS],
    /// Who moves next.
    pub to_move: Side,
    /// Seeds captured by South and by North.
    pub captured: [u32; 2],
}

impl Board {
    /// A board with South to move; the seeds not on the board count as
    /// captured: `captured` (South, North), or split evenly (South takes an
    /// odd one).
    pub fn new(pits: [u8; PITS], captured: Option<[u32; 2]>) -> Result<Board> {
        let n: u32 = pits.iter().map(|&p| p as u32).sum();
        if n > 48 {
            return Err(RulesError::TooManySeeds(n).into());
        }
        let captured = captured.unwrap_or({
            let off = 48 - n;
            [off - off / 2, off / 2]
        });
        if n + captured[0] + captured[1] != 48 {
            return Err(GameError::SeedCount {
                board: n,
                captured: captured[0] + captured[1],
            }
            .into());
        }
        Ok(Board {
            pits,
            to_move: Side::South,
            captured,
        })
    }

    /// The opening position: four seeds in every pit, South to move.
    pub fn opening() -> Board {
        Board {
            pits: [4; PITS],
            to_move: Side::South,
            captured: [0, 0],
        }
    }

    /// Seeds on the board.
    pub fn seeds(&self) -> u32 {
        self.pits.iter().map(|&p| p as u32).sum()
    }

    /// Seeds captured by `side`.
    pub fn captured_by(&self, side: Side) -> u32 {
        self.captured[side.index()]
    }

    /// The board seen from the side to move, as the database indexes it.
    pub fn position(&self) -> Position {
        let p = Position(self.pits);
        match self.to_move {
            Side::South => p,
            Side::North => p.mirror(),
        }
    }

    /// The tables' answer for this board ([`Database::answer`]), its
    /// moves labelled as its side to move writes them (North's `a`..`f`).
    pub fn answer(&self, db: &Database, pv: Option<usize>) -> Result<Answer> {
        let mut a = db.answer(&self.position(), pv)?;
        for m in &mut a.moves {
            m.label = self.to_move.label(m.pit as usize);
        }
        Ok(a)
    }

    /// The side to move's pit for a label, checked against the board under
    /// `rules`.
    pub fn pit_of(&self, rules: &Rules, label: &str) -> Result<usize> {
        let mut chars = label.chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return Err(GameError::NotALabel(label.to_string()).into());
        };
        let (owner, pit) = match c {
            'A'..='F' => (Side::South, c as usize - 'A' as usize),
            'a'..='f' => (Side::North, c as usize - 'a' as usize),
            _ => return Err(GameError::NotALabel(label.to_string()).into()),
        };
        if owner != self.to_move {
            return Err(GameError::NotYourPit {
                label: c,
                owner: owner.name(),
                to_move: self.to_move.name(),
            }
            .into());
        }
        let p = self.position();
        match p.moves(rules).from_pit(pit) {
            None => Err(GameError::EmptyPit(c).into()),
            Some(m) if !m.legal => Err(GameError::IllegalMove(c).into()),
            Some(_) => Ok(pit),
        }
    }

    /// The board after the side to move plays its pit `pit` (a legal move
    /// under `rules`), and the seeds it captured.
    pub fn play(&self, rules: &Rules, pit: usize) -> (Board, u8) {
        let m = *self
            .position()
            .moves(rules)
            .from_pit(pit)
            .expect("a legal move was checked");
        let next = self.to_move.other();
        // The child is seen from the next mover: back to South's view.
        let pits = match next {
            Side::South => m.child.0,
            Side::North => m.child.mirror().0,
        };
        let mut captured = self.captured;
        captured[self.to_move.index()] += m.captured as u32;
        (
            Board {
                pits,
                to_move: next,
                captured,
            },
            m.captured,
        )
    }

    /// The board drawn for players: North's row on top (`f`..`a`), South's
    /// below (`A`..`F`), with the captured seeds and the side to move.
    pub fn diagram(&self) -> String {
        let row = |r: &mut String, pits: &[u8]| {
            for p in pits {
                r.push_str(&format!("{p:>3}"));
            }
        };
        let mut s = String::new();
        s.push_str("     f  e  d  c  b  a\n  ");
        let north: Vec<u8> = self.pits[6..].iter().rev().copied().collect();
        row(&mut s, &north);
        s.push_str(&format!(
            "    North: captured {}\n  ",
            self.captured_by(Side::North)
        ));
        row(&mut s, &self.pits[..6]);
        s.push_str(&format!(
            "    South: captured {}\n     A  B  C  D  E  F\n",
            self.captured_by(Side::South)
        ));
        s.push_str(&format!("{} to move\n", self.to_move.name()));
        s
    }
}

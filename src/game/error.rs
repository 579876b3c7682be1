//! The game's error.

use crate::error::{Cause, Error, ErrorKind};

/// A move, game record or position text the game cannot take.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GameError {
    /// Not a pit label.
    #[error("'{0}' is not a move: a move is a pit label, A..F for South or a..f for North")]
    NotALabel(String),
    /// A pit of the side not to move.
    #[error("{label} is a pit of {owner}, but {to_move} is to move")]
    NotYourPit {
        /// The label given.
        label: char,
        /// Whose pit it is.
        owner: &'static str,
        /// Who is to move.
        to_move: &'static str,
    },
    /// The pit holds no seeds.
    #[error("pit {0} is empty")]
    EmptyPit(char),
    /// The move would leave the opponent without seeds while another move
    /// would not.
    #[error("{0} would leave the opponent without seeds while another move does not: illegal")]
    IllegalMove(char),
    /// Nothing to retract.
    #[error("no move to take back")]
    NothingToUndo,
    /// The seeds captured do not add up with the board's.
    #[error("{board} seeds on the board and {captured} captured make {}, not 48", board + captured)]
    SeedCount {
        /// Seeds on the board.
        board: u32,
        /// Seeds captured.
        captured: u32,
    },
    /// A text that is not a position in the notation ([`crate::game`]).
    #[error("'{text}' is not a position: {fault}")]
    Notation {
        /// The text given.
        text: String,
        /// What is wrong with it: a `game::NotationFault` (boxed, so that
        /// this room does not import the game's).
        #[source]
        fault: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A game record that cannot be read.
    #[error("line {line}: {source}")]
    Record {
        /// 1-based line number.
        line: usize,
        /// What is wrong with the line.
        #[source]
        source: Box<Error>,
    },
    /// A game record whose lines are not in order.
    #[error("{0}")]
    RecordSyntax(&'static str),
    /// A word of a game record that is not what its place needs.
    #[error("'{word}' is not {expected}")]
    RecordWord {
        /// The word.
        word: String,
        /// What it must be.
        expected: &'static str,
    },
}

impl Cause for GameError {
    fn kind(&self) -> ErrorKind {
        match self {
            GameError::Record { source, .. } => source.kind(),
            _ => ErrorKind::Input,
        }
    }
}

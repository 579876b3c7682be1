//! A game between two sides, as `awari play` runs it: the board as
//! players see it, moves by pit label, retraction, the game record, the
//! ends of a game by its rule set ([`Rules`]: awari, abapa, olympiad or
//! awale), and a
//! computer player that plays from the database (or searches a few plies
//! where the database has no answer).
//!
//! # The board
//!
//! South sits at the bottom, North at the top. The twelve pits are kept in
//! sowing order from South's left: South's pits `A`..`F` (0..5, left to
//! right on screen), then North's pits `a`..`f` (6..11, labelled from
//! North's left, so right to left on screen). Sowing runs counter-clockwise:
//! `A`..`F`, then `a`..`f`, then `A` again. A database position is the same
//! board seen from the side to move ([`Board::position`]).
//!
//! # The ends of a game
//!
//! Checked after every move, in this order, with the numbers of the rule
//! set ([`Rules::win`], [`Rules::draw`], [`Rules::repetition`],
//! [`Rules::no_capture_limit`], [`Rules::seeds_left`]):
//! 1. a side has captured `win` seeds or more (25; awale has no such
//!    end): it wins;
//! 2. both sides have captured `draw` (24; not awale): a draw;
//! 3. the side to move has no seeds: the other side takes the seeds left;
//! 4. the side to move has seeds but no legal move: under abapa and
//!    olympiad it cannot feed an opponent without seeds, and each side
//!    takes the seeds of its own row (the mover all of them); under awale
//!    every move it has is a grand slam, and the other side takes the
//!    seeds left;
//! 5. the position (board and side to move) occurs for the `repetition`-th
//!    time (awari, olympiad, awale: the first repetition; abapa: the third
//!    occurrence): play would go on forever, and the seeds left are split
//!    evenly (awale: nobody's);
//! 6. `no_capture_limit` plies (abapa: 500) have passed without a capture:
//!    the seeds left go as at a repetition;
//! 7. a side's clock ran out ([`Game::flag`]): it loses.
//!
//! The side with more seeds in the end wins.
//!
//! [`Game::result`] says how a game ended, with the final score and the
//! winner; the record's last line (a comment) repeats it.
//!
//! A game started from a position with fewer than 48 seeds counts the
//! seeds already off the board as captured: by default split evenly between
//! the sides (South takes an odd one), or as given.
//!
//! # The record
//!
//! A game record is text: `#` starts a comment; an optional first line
//! `rules NAME` names the rule set (awari when absent); then `start`, the
//! twelve pit counts `A`..`F` then `a`..`f`, and optionally `captured S N`
//! (South moves first), or `start` and a position's notation
//! ([`Board::from_notation`], written so when North moves first); then one
//! move label per line, optionally followed by a comment (the computer's
//! figures for that move).
//!
//! # The computer player
//!
//! A [`Player`] is a [`search::Engine`](crate::search::Engine) (the tables
//! it may read, its transposition table), a clock and a deepest depth.
//! Where every legal move leads into a layer it reads (or ends the game),
//! it plays a best move of the tables at once, the lowest label among
//! equals, so such games are reproducible; elsewhere it searches within the
//! budget its clock gives the move ([`search::clock`](crate::search::clock))
//! and says whether the value found is exact. [`Player::move_in`] charges
//! the clock the whole time the move took and notes the search's figures in
//! the record after the move (`c  # +3 exact (tables); 0.000 s; line c D`).
//!
//! # The files
//!
//! One job each: `board.rs` the board and the sides ([`Side`], [`Board`]);
//! `notation.rs` the position notation ([`Board::notation`],
//! [`Board::from_notation`]);
//! `end.rs` what ends a game and its result ([`End`], [`Game::end`],
//! [`Game::result`]); `record.rs` the game record ([`Game::record`],
//! [`Game::from_record`]); `player.rs` the computer player ([`MoveWorth`],
//! [`move_worths`], [`best_labels`], [`Choice`], [`choose`], [`Player`]);
//! this file the game itself ([`Game`]: its boards, moves and history).

mod error;
pub use error::GameError;
mod board;
mod end;
mod notation;
mod player;
mod record;

pub use board::{Board, Side};
pub use end::End;
pub use notation::NotationFault;
pub use player::{best_labels, choose, line_labels, move_worths, Choice, MoveWorth, Player};

use crate::error::Result;
use crate::rules::{Position, Rules};

/// A game: the start, the moves played, and every board since the start.
#[derive(Clone, Debug)]
pub struct Game {
    rules: Rules,
    boards: Vec<Board>,
    labels: Vec<char>,
    /// A comment for each move (the record writes it after the move).
    notes: Vec<String>,
    /// An end the board does not show (a side out of time).
    flagged: Option<Side>,
}

impl Game {
    /// A new game from `start` (South to move) under `rules`.
    pub fn new(start: Board, rules: Rules) -> Game {
        Game {
            rules,
            boards: vec![start],
            labels: Vec::new(),
            notes: Vec::new(),
            flagged: None,
        }
    }

    /// The rule set the game is played under.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The board now.
    pub fn board(&self) -> &Board {
        self.boards.last().expect("a game has a start")
    }

    /// The start.
    pub fn start(&self) -> &Board {
        &self.boards[0]
    }

    /// The moves played, as labels.
    pub fn moves(&self) -> &[char] {
        &self.labels
    }

    /// The positions before the current one since the last capture, oldest
    /// first, each seen from its own mover: what a search needs to see
    /// repetitions.
    pub fn history(&self) -> Vec<Position> {
        let last = self.boards.len() - 1;
        self.boards[self.since_capture()..last]
            .iter()
            .map(|b| b.position())
            .collect()
    }

    /// The index of the first board since the last capture: a capture
    /// changes the seeds on the board, so the boards from there on are
    /// those that can repeat the current one.
    fn since_capture(&self) -> usize {
        let n = self.board().seeds();
        self.boards
            .iter()
            .rposition(|o| o.seeds() != n)
            .map_or(0, |i| i + 1)
    }

    /// Sets the comment the record writes after the last move.
    pub fn note(&mut self, note: impl Into<String>) {
        if let Some(last) = self.notes.last_mut() {
            *last = note.into();
        }
    }

    /// Plays the move with this label.
    pub fn play(&mut self, label: &str) -> Result<u8> {
        if self.end().is_some() {
            return Err(crate::search::SearchError::GameOver.into());
        }
        let b = *self.board();
        let pit = b.pit_of(&self.rules, label)?;
        let (next, captured) = b.play(&self.rules, pit);
        self.labels.push(b.to_move.label(pit));
        self.notes.push(String::new());
        self.boards.push(next);
        Ok(captured)
    }

    /// Takes the last move back.
    pub fn undo(&mut self) -> Result<char> {
        let label = self.labels.pop().ok_or(GameError::NothingToUndo)?;
        self.notes.pop();
        self.boards.pop();
        self.flagged = None;
        Ok(label)
    }
}

//! A game between two sides, as `awari play` runs it: the board as
//! players see it, moves by pit label, retraction, the game record, the
//! ends of a game by its rule set ([`Rules`]: awari or abapa), and a
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
//! [`Rules::no_capture_limit`]):
//! 1. a side has captured `win` seeds or more (25): it wins;
//! 2. both sides have captured `draw` (24): a draw;
//! 3. the side to move has no seeds: the other side takes the seeds left;
//! 4. the side to move has seeds but no legal move (abapa: it cannot feed
//!    an opponent without seeds): each side takes the seeds of its own row;
//! 5. the position (board and side to move) occurs for the `repetition`-th
//!    time (awari: the first repetition; abapa: the third occurrence):
//!    play would go on forever, and the seeds left are split evenly;
//! 6. `no_capture_limit` plies (abapa: 500) have passed without a capture:
//!    the seeds left are split evenly;
//! 7. a side's clock ran out ([`Game::flag`]): it loses.
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
//! twelve pit counts `A`..`F` then `a`..`f`, and optionally `captured S N`;
//! South moves first; then one move label per line, optionally followed by
//! a comment (the computer's figures for that move).
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

use crate::error::{Error, Result};
use crate::probe::Database;
use crate::rules::{Position, Rules, PITS};
use crate::search::{Budget, Clock, Engine, Limits, Outcome, TimeControl};
use std::path::Path;
use std::time::{Duration, Instant};

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
            return Err(Error::TooManySeeds(n));
        }
        let captured = captured.unwrap_or({
            let off = 48 - n;
            [off - off / 2, off / 2]
        });
        if n + captured[0] + captured[1] != 48 {
            return Err(Error::SeedCount {
                board: n,
                captured: captured[0] + captured[1],
            });
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

    /// The side to move's pit for a label, checked against the board under
    /// `rules`.
    pub fn pit_of(&self, rules: &Rules, label: &str) -> Result<usize> {
        let mut chars = label.chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return Err(Error::NotALabel(label.to_string()));
        };
        let (owner, pit) = match c {
            'A'..='F' => (Side::South, c as usize - 'A' as usize),
            'a'..='f' => (Side::North, c as usize - 'a' as usize),
            _ => return Err(Error::NotALabel(label.to_string())),
        };
        if owner != self.to_move {
            return Err(Error::NotYourPit {
                label: c,
                owner: owner.name(),
                to_move: self.to_move.name(),
            });
        }
        let p = self.position();
        match p.moves(rules).from_pit(pit) {
            None => Err(Error::EmptyPit(c)),
            Some(m) if !m.legal => Err(Error::IllegalMove(c)),
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

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// A side captured 25 or more.
    Won(Side),
    /// Both sides captured 24.
    Draw,
    /// The position occurred as often as the rule set allows: the seeds
    /// left are split evenly.
    Repetition,
    /// Too many plies without a capture: the seeds left are split evenly.
    NoCaptureLimit(u32),
    /// The side to move has no seeds: the other side takes the seeds left.
    NoSeeds(Side),
    /// The side to move cannot feed the opponent (who has no seeds): each
    /// side takes the seeds of its own row.
    CannotFeed(Side),
    /// The side ran out of time: it loses, whatever the seeds say.
    Time(Side),
}

impl End {
    /// A sentence for players.
    pub fn describe(&self) -> String {
        match self {
            End::Won(s) => format!("{} has captured more than half of the seeds", s.name()),
            End::Draw => "both sides have captured 24 seeds".into(),
            End::Repetition => {
                "the position repeats: play would go on forever, so the seeds left are split evenly"
                    .into()
            }
            End::NoCaptureLimit(k) => format!(
                "{k} plies without a capture: play would go on forever, so the seeds left are split evenly"
            ),
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
            End::Time(s) => format!("{} ran out of time and loses", s.name()),
        }
    }
}

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

    /// How the game ended, if it did.
    pub fn end(&self) -> Option<End> {
        if let Some(side) = self.flagged {
            return Some(End::Time(side));
        }
        let r = &self.rules;
        let b = self.board();
        for side in [Side::South, Side::North] {
            if b.captured_by(side) >= r.win as u32 {
                return Some(End::Won(side));
            }
        }
        if b.captured == [r.draw as u32; 2] {
            return Some(End::Draw);
        }
        let p = b.position();
        if p.mover_seeds() == 0 {
            return Some(End::NoSeeds(b.to_move));
        }
        if p.moves(r).legal().next().is_none() {
            return Some(End::CannotFeed(b.to_move));
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
        Some(match self.end()? {
            End::Won(_) | End::Draw | End::Time(_) => [2 * s, 2 * n],
            End::Repetition | End::NoCaptureLimit(_) => [2 * s + left, 2 * n + left],
            End::CannotFeed(Side::South) => [2 * (s + left), 2 * n],
            End::CannotFeed(Side::North) => [2 * s, 2 * (n + left)],
            End::NoSeeds(Side::South) => [2 * s, 2 * (n + left)],
            End::NoSeeds(Side::North) => [2 * (s + left), 2 * n],
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
            return Err(Error::GameOver);
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
        let label = self.labels.pop().ok_or(Error::NothingToUndo)?;
        self.notes.pop();
        self.boards.pop();
        self.flagged = None;
        Ok(label)
    }

    /// The game record (see the module's documentation).
    pub fn record(&self) -> String {
        let s = self.start();
        let pits: Vec<String> = s.pits.iter().map(|p| p.to_string()).collect();
        let mut out = format!(
            "# awari game record: the rule set, the start (pits A..F, then a..f; South moves first), then one move per line\nrules {}\nstart {} captured {} {}\n",
            self.rules.name,
            pits.join(" "),
            s.captured[0],
            s.captured[1]
        );
        for (l, note) in self.labels.iter().zip(&self.notes) {
            out.push(*l);
            if !note.is_empty() {
                out.push_str("  # ");
                out.push_str(note);
            }
            out.push('\n');
        }
        if let Some(r) = self.result() {
            out.push_str(&format!("# end: {r}\n"));
        }
        out
    }

    /// Reads a game record and replays its moves.
    pub fn from_record(text: &str) -> Result<Game> {
        let mut game: Option<Game> = None;
        let mut rules: Option<Rules> = None;
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let bad = |e: Error| Error::Record {
                line: i + 1,
                source: Box::new(e),
            };
            match &mut game {
                None if rules.is_none() && line.split_whitespace().next() == Some("rules") => {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    if words.len() != 2 {
                        return Err(bad(Error::RecordSyntax(
                            "a 'rules' line names one rule set: 'rules awari' or 'rules abapa'",
                        )));
                    }
                    rules = Some(Rules::by_name(words[1]).map_err(bad)?);
                }
                None => {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    if words.first() != Some(&"start") || !(words.len() == 13 || words.len() == 16)
                    {
                        return Err(bad(Error::RecordSyntax(
                            "the first line must be 'start' and 12 pit counts, optionally \
                             followed by 'captured S N'",
                        )));
                    }
                    let mut pits = [0u8; PITS];
                    for (k, w) in words[1..13].iter().enumerate() {
                        pits[k] = w.parse().ok().filter(|&v: &u8| v <= 48).ok_or_else(|| {
                            bad(Error::RecordWord {
                                word: w.to_string(),
                                expected: "a pit count",
                            })
                        })?;
                    }
                    let captured = if words.len() == 16 {
                        if words[13] != "captured" {
                            return Err(bad(Error::RecordWord {
                                word: words[13].to_string(),
                                expected: "'captured'",
                            }));
                        }
                        let num = |w: &str| {
                            w.parse::<u32>().map_err(|_| {
                                bad(Error::RecordWord {
                                    word: w.to_string(),
                                    expected: "a number of seeds",
                                })
                            })
                        };
                        Some([num(words[14])?, num(words[15])?])
                    } else {
                        None
                    };
                    let start = Board::new(pits, captured).map_err(bad)?;
                    game = Some(Game::new(start, rules.unwrap_or_default()));
                }
                Some(g) => {
                    g.play(line).map_err(bad)?;
                }
            }
        }
        game.ok_or(Error::Record {
            line: 1,
            source: Box::new(Error::RecordSyntax("no 'start' line")),
        })
    }
}

/// A legal move of the side to move and what it is worth to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MoveWorth {
    /// The pit label.
    pub label: char,
    /// Seeds it captures.
    pub captures: u8,
    /// Its worth with perfect play afterwards (seeds the mover will capture
    /// from here on, this move's included, minus the opponent's), when the
    /// database holds the layer the move leads to.
    pub worth: Option<i8>,
    /// The layer the move leads to, when the database lacks it.
    pub missing_layer: Option<u32>,
}

/// The legal moves of the side to move in `game`, with their worth from
/// the database (of the game's rule set) where it holds the layers they
/// lead to.
pub fn move_worths(db: &Database, game: &Game) -> Result<Vec<MoveWorth>> {
    let dir = db.dir().unwrap_or(Path::new("(memory)"));
    crate::store::rules_agree(dir, db.rules(), game.rules(), " (the game's rule set)")?;
    let board = game.board();
    let p = board.position();
    let n = p.seeds();
    let mut out = Vec::new();
    for m in p.moves(game.rules()).legal() {
        let left = n - m.captured as u32;
        let (worth, missing_layer) = if m.child.mover_seeds() == 0 {
            (Some((m.captured as u32 + left) as i8), None)
        } else {
            match db.score(&m.child) {
                Ok(s) => (Some((m.captured as i32 - s as i32) as i8), None),
                Err(Error::MissingLayer { layer, .. }) => (None, Some(layer)),
                Err(e) => return Err(e),
            }
        };
        out.push(MoveWorth {
            label: board.to_move.label(m.pit as usize),
            captures: m.captured,
            worth,
            missing_layer,
        });
    }
    Ok(out)
}

/// The labels of the best moves, when every move's worth is known.
pub fn best_labels(worths: &[MoveWorth]) -> Option<Vec<char>> {
    if worths.iter().any(|w| w.worth.is_none()) {
        return None;
    }
    let best = worths.iter().filter_map(|w| w.worth).max()?;
    Some(
        worths
            .iter()
            .filter(|w| w.worth == Some(best))
            .map(|w| w.label)
            .collect(),
    )
}

/// The computer's move and the search behind it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The label played.
    pub label: char,
    /// The search's figures, its value the move's worth (depth 0: every move's worth came from the
    /// tables).
    pub search: Outcome,
    /// The principal variation as labels, this move first.
    pub line: Vec<char>,
}

/// The labels of a line of pits from `board`'s side to move: the mover's
/// and the opponent's pits in turn.
pub fn line_labels(side: Side, pits: &[u8]) -> Vec<char> {
    pits.iter()
        .enumerate()
        .map(|(i, &p)| {
            let s = if i % 2 == 0 { side } else { side.other() };
            s.label(p as usize)
        })
        .collect()
}

/// The computer's move in `game` by `engine` within `limits`: a best move of
/// the tables at once where every move leads into a layer it reads (the
/// lowest label among equals), else the search's; `report` sees each
/// completed iteration. `None` when the game is over.
pub fn choose(
    engine: &Engine,
    game: &Game,
    limits: Limits,
    report: impl FnMut(&Outcome),
) -> Result<Option<Choice>> {
    if game.end().is_some() {
        return Ok(None);
    }
    crate::store::rules_agree(
        Path::new("(search)"),
        engine.rules(),
        game.rules(),
        " (the game's rule set)",
    )?;
    let board = game.board();
    let o = engine.search(&board.position(), &game.history(), limits, report)?;
    Ok(Some(Choice {
        label: board.to_move.label(o.pit as usize),
        line: line_labels(board.to_move, &o.pv),
        search: o,
    }))
}

/// A computer player: its search, its clock (none: unbounded in time) and
/// its deepest search.
pub struct Player<'d> {
    /// The search, with the tables it reads and its transposition table.
    pub engine: Engine<'d>,
    /// Its clock.
    pub clock: Option<Clock>,
    /// The deepest search, in plies.
    pub depth: u32,
    /// Time its moves took, in all.
    pub used: Duration,
    /// A fixed time for every move (within the clock, if any).
    pub move_time: Option<Duration>,
}

/// Time kept back from every move's budget for the work around the search.
const MARGIN: Duration = Duration::from_millis(20);

impl<'d> Player<'d> {
    /// A player searching at most `depth` plies, within `clock` if given.
    pub fn new(engine: Engine<'d>, clock: Option<TimeControl>, depth: u32) -> Player<'d> {
        Player {
            engine,
            clock: clock.map(Clock::new),
            depth,
            used: Duration::ZERO,
            move_time: None,
        }
    }

    /// The limits of its next search.
    pub fn limits(&self) -> Limits {
        let budget = match (&self.clock, self.move_time) {
            (Some(c), None) => c.budget(MARGIN),
            (Some(c), Some(t)) => {
                let t = t.min(c.budget(MARGIN).hard);
                Budget { soft: t, hard: t }
            }
            (None, Some(t)) => Budget { soft: t, hard: t },
            (None, None) => return Limits::depth(self.depth),
        };
        Limits::timed(budget, self.depth)
    }

    /// Chooses a move in `game` and plays it, charging its clock the whole
    /// time taken; the record notes the search's figures. `None` when the
    /// game is over. A player out of time loses the game (the move is not
    /// played).
    pub fn move_in(
        &mut self,
        game: &mut Game,
        report: impl FnMut(&Outcome),
    ) -> Result<Option<(Choice, Duration)>> {
        let started = Instant::now();
        let side = game.board().to_move;
        let Some(c) = choose(&self.engine, game, self.limits(), report)? else {
            return Ok(None);
        };
        let took = started.elapsed();
        self.used += took;
        if let Some(clock) = &mut self.clock {
            if !clock.charge(took) {
                game.flag(side);
                return Ok(Some((c, took)));
            }
        }
        game.play(&c.label.to_string())?;
        game.note(c.note(took));
        Ok(Some((c, took)))
    }
}

impl Choice {
    /// The move's worth: seeds the mover will still capture minus the
    /// opponent's; exact from the tables, or the search's estimate.
    pub fn worth(&self) -> i32 {
        self.search.value
    }

    /// Whether the worth is exact.
    pub fn exact(&self) -> bool {
        self.search.exact
    }

    /// The search's figures in a few words, for the record.
    pub fn note(&self, took: Duration) -> String {
        let o = &self.search;
        let line: String = self
            .line
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(" ");
        if o.depth == 0 && self.exact() {
            format!(
                "{:+} exact (tables); {:.3} s; line {line}",
                self.worth(),
                took.as_secs_f64()
            )
        } else {
            format!(
                "{:+}{} depth {} nodes {} {:.3} s; line {line}",
                self.worth(),
                if self.exact() { " exact" } else { "" },
                o.depth,
                o.nodes,
                took.as_secs_f64()
            )
        }
    }
}

//! The computer player: what each legal move is worth by the tables
//! ([`MoveWorth`], [`move_worths`], [`best_labels`]), the computer's move
//! and the search behind it ([`Choice`], [`choose`]), and a player with its
//! search, clock and deepest depth ([`Player`]).

use super::{Game, Side};
use crate::error::Result;
use crate::probe::{Database, Distance};
use crate::search::{Budget, Clock, Engine, Limits, Outcome, TimeControl};
use crate::store::StoreError;
use std::path::Path;
use std::time::{Duration, Instant};

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
    /// How far the next capture is after it, this move counted, where the
    /// tables have the distance ([`crate::probe::Distance`]).
    pub distance: Option<Distance>,
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
        let (worth, distance, missing_layer) = if m.child.mover_seeds() == 0 {
            (
                Some((m.captured as u32 + left) as i8),
                Some(Distance::Plies(1)),
                None,
            )
        } else {
            match db.score(&m.child) {
                Ok(s) => {
                    let d = if m.captured > 0 {
                        Some(Distance::Plies(1))
                    } else {
                        db.distance(&m.child)?.map(Distance::after_move)
                    };
                    (Some((m.captured as i32 - s as i32) as i8), d, None)
                }
                Err(e) => match e.cause() {
                    Some(&StoreError::MissingLayer { layer, .. }) => (None, None, Some(layer)),
                    _ => return Err(e),
                },
            }
        };
        out.push(MoveWorth {
            label: board.to_move.label(m.pit as usize),
            captures: m.captured,
            worth,
            distance,
            missing_layer,
        });
    }
    Ok(out)
}

/// The labels of the best moves, when every move's worth is known: of
/// best worth, then of best distance where the tables have it
/// ([`crate::probe::best_pits`]), in label order.
pub fn best_labels(worths: &[MoveWorth]) -> Option<Vec<char>> {
    let moves: Option<Vec<(u8, i32, Option<Distance>)>> = worths
        .iter()
        .enumerate()
        .map(|(i, w)| w.worth.map(|v| (i as u8, v as i32, w.distance)))
        .collect();
    let best = crate::probe::best_pits(&moves?);
    (!best.is_empty()).then(|| best.iter().map(|&i| worths[i as usize].label).collect())
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

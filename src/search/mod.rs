//! The player's search: what a position is worth when the tables do not
//! hold it, and the move to play.
//!
//! # Values
//!
//! A value is what the side to move will still capture minus what the
//! opponent will: the tables' score. A position of a built layer (of those
//! the player may use) takes its value from the table, one without a legal
//! move its rule-set end ([`Position::final_score`]): both exact, so the
//! tables cut every line that reaches them. Captures on the way add up
//! move by move. A position at the horizon is worth 0, and so is one that
//! repeats one on the path (no capture since): the seeds left split evenly
//! as at the end of an endless game.
//!
//! # The search
//!
//! Iterative deepening (1, 2, 3, ... plies) of a principal variation search
//! (alpha-beta that searches the first move with the full window and the
//! others with a null window, again with the full one if they beat it) with
//! a transposition table (one slot per key hash, shared by the threads
//! without locks), and moves ordered by the table's best move, then
//! captures (largest first), then two killer moves per ply, then the
//! history of cutoffs. Each iteration reports its depth, value, nodes,
//! time and principal variation.
//!
//! A value is **proven** when no position of the tree it rests on was
//! scored by the horizon or by a repetition: it then rests on table values
//! and rule ends alone and is the exact value, so deeper iterations would
//! not change it; the search stops there. Proven entries of the
//! transposition table serve at any depth. In a position whose every move
//! leads into a built layer (or ends the game) the player plays a best
//! move of the tables at once, by the distance where they have it.
//!
//! # Compressed tables
//!
//! A score read from a compressed table is cached (`cache`), so a leaf
//! reached again is not decoded again.
//!
//! # Time
//!
//! [`Limits`] bound a search by depth and by two times (see
//! [`clock`]): after the *soft* time no deeper iteration starts; at the
//! *hard* time the search stops inside one and plays the move of the last
//! completed iteration. The time is read every 1,024 nodes.
//!
//! # Threads
//!
//! With more than one thread, helpers search the same position at the same
//! and the next depth with their own move ordering ("lazy SMP"), sharing
//! only the transposition table. The main thread's result is played; with
//! threads it may vary from run to run, with one a fixed-depth search is
//! reproducible.

mod error;
pub use error::SearchError;
mod cache;
pub mod clock;
mod tt;

pub use clock::{Budget, Clock, TimeControl};

use crate::error::{Error, Result};
use crate::probe::{Database, Distance};
use crate::rules::{Position, Rules, MAX_SEEDS};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// The deepest search, in plies.
pub const MAX_DEPTH: u32 = 100;
const MAX_PLY: usize = MAX_DEPTH as usize + 2;
const INF: i32 = 200;

/// Which layers the player may read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TableReach {
    /// Every layer the folder holds.
    #[default]
    All,
    /// The layers `0..=n` the folder holds.
    UpTo(u32),
    /// None: the player only searches.
    None,
}

/// A player's fixed settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The layers it may read.
    pub tables: TableReach,
    /// Search threads (1 or more).
    pub threads: usize,
    /// Bytes of the transposition table (a cache of compressed table
    /// scores of a quarter of this on top).
    pub hash_bytes: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            tables: TableReach::All,
            threads: 1,
            hash_bytes: 64 << 20,
        }
    }
}

/// What bounds one search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The deepest iteration, in plies (at most [`MAX_DEPTH`]).
    pub depth: u32,
    /// No iteration starts after this time (unbounded: `None`).
    pub soft: Option<Duration>,
    /// The search stops at this time (unbounded: `None`).
    pub hard: Option<Duration>,
}

impl Limits {
    /// A fixed depth, unbounded in time.
    pub fn depth(depth: u32) -> Limits {
        Limits {
            depth,
            soft: None,
            hard: None,
        }
    }

    /// Within a time budget, at most `depth` plies.
    pub fn timed(budget: Budget, depth: u32) -> Limits {
        Limits {
            depth,
            soft: Some(budget.soft),
            hard: Some(budget.hard),
        }
    }
}

/// The result of a search, or of one of its iterations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The pit to play (0..5, the mover's own numbering).
    pub pit: u8,
    /// Its value: seeds the mover will still capture minus the opponent's.
    pub value: i32,
    /// Whether the value is exact (proven; see the module documentation).
    pub exact: bool,
    /// Plies of the last completed iteration: 0 for a move of the tables
    /// (exact), or when stopped inside the first iteration (not exact:
    /// the first legal move).
    pub depth: u32,
    /// Positions visited by every thread.
    pub nodes: u64,
    /// Time since the search started.
    pub elapsed: Duration,
    /// The principal variation: pits, alternately of the mover and of the
    /// opponent (each in its own numbering), from the position searched;
    /// moves past the search's line follow the tables.
    pub pv: Vec<u8>,
}

impl Outcome {
    /// Positions per second.
    pub fn nodes_per_second(&self) -> f64 {
        self.nodes as f64 / self.elapsed.as_secs_f64().max(1e-6)
    }
}

/// A player's search: the tables it reads, its rule set and its
/// transposition table (kept from move to move; [`Engine::clear`] empties
/// it for a new game).
pub struct Engine<'d> {
    db: &'d Database,
    rules: Rules,
    built: [bool; MAX_SEEDS as usize + 1],
    /// Layers read from compressed tables, whose scores go through `cache`.
    compressed: [bool; MAX_SEEDS as usize + 1],
    tt: tt::TranspositionTable,
    cache: cache::ScoreCache,
    threads: usize,
}

impl<'d> Engine<'d> {
    /// A search under `rules` reading `db` (whose rule set must be the
    /// same) as `settings` allow.
    pub fn new(db: &'d Database, rules: Rules, settings: Settings) -> Result<Engine<'d>> {
        let dir = db.dir().unwrap_or(Path::new("(memory)"));
        crate::store::rules_agree(dir, db.rules(), &rules, " (the game's rule set)")?;
        if settings.threads == 0 {
            return Err(SearchError::NoThreads.into());
        }
        let mut built = [false; MAX_SEEDS as usize + 1];
        let allowed = |n: u32| match settings.tables {
            TableReach::All => true,
            TableReach::UpTo(m) => n <= m,
            TableReach::None => false,
        };
        let mut compressed = [false; MAX_SEEDS as usize + 1];
        for n in db.layers() {
            if allowed(n) && n <= MAX_SEEDS {
                built[n as usize] = true;
                compressed[n as usize] = db.is_compressed(n, crate::format::Kind::Score)?;
            }
        }
        let cache_bytes = if compressed.iter().any(|&c| c) {
            settings.hash_bytes / 4
        } else {
            0
        };
        Ok(Engine {
            db,
            rules,
            built,
            compressed,
            tt: tt::TranspositionTable::new(settings.hash_bytes.max(16)),
            cache: cache::ScoreCache::new(cache_bytes),
            threads: settings.threads,
        })
    }

    /// The layers the search reads.
    pub fn layers(&self) -> Vec<u32> {
        (0..=MAX_SEEDS)
            .filter(|&n| self.built[n as usize])
            .collect()
    }

    /// The rule set.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Empties the transposition table and the score cache (a new game).
    pub fn clear(&self) {
        self.tt.clear();
        self.cache.clear();
    }

    /// The table score of `p` (in a layer the search reads), cached when
    /// its layer is compressed.
    #[inline]
    fn table_score(&self, p: &Position) -> Result<i8> {
        if !self.compressed[p.seeds() as usize] {
            return self.db.score(p);
        }
        let key = tt::key(p);
        if let Some(v) = self.cache.get(p, key) {
            return Ok(v);
        }
        let v = self.db.score(p)?;
        self.cache.put(p, key, v);
        Ok(v)
    }

    /// Whether `p`'s value comes from a table the search reads.
    #[inline]
    fn in_tables(&self, p: &Position) -> bool {
        self.built[p.seeds() as usize] && p.is_indexable()
    }

    /// Searches `root` (which must have a legal move) within `limits`;
    /// `history`: the game's positions before it, oldest first, each from
    /// its own mover. `report` sees every completed iteration.
    pub fn search(
        &self,
        root: &Position,
        history: &[Position],
        limits: Limits,
        mut report: impl FnMut(&Outcome),
    ) -> Result<Outcome> {
        let legal: Vec<u8> = root.moves(&self.rules).legal().map(|m| m.pit).collect();
        let Some(&first) = legal.first() else {
            return Err(SearchError::GameOver.into());
        };
        let start = Instant::now();
        if let Some((pit, value)) = self.table_move(root)? {
            let o = Outcome {
                pit,
                value,
                exact: true,
                depth: 0,
                nodes: 1,
                elapsed: start.elapsed(),
                pv: self.pv(root, &[pit], 16),
            };
            report(&o);
            return Ok(o);
        }
        let depth = limits.depth.clamp(1, MAX_DEPTH);
        let stop = AtomicBool::new(false);
        let nodes = AtomicU64::new(0);
        let result = std::thread::scope(|s| {
            for id in 1..self.threads {
                let (stop, nodes) = (&stop, &nodes);
                s.spawn(move || {
                    let mut w = Worker::new(self, stop, nodes, start, limits.hard, history);
                    for d in 1 + (id as u32 % 2)..=depth {
                        w.root(root, d, None);
                        if w.aborted {
                            break;
                        }
                    }
                    w.flush();
                });
            }
            let mut w = Worker::new(self, &stop, &nodes, start, limits.hard, history);
            let mut best: Option<Outcome> = None;
            for d in 1..=depth {
                let h0 = w.horizon;
                let found = w.root(root, d, best.as_ref().map(|b| b.pit));
                if let Some(e) = w.error.take() {
                    stop.store(true, Relaxed);
                    return Err(e);
                }
                if w.aborted {
                    break;
                }
                let (value, pit) = found.expect("a completed iteration has a move");
                w.flush();
                let o = Outcome {
                    pit,
                    value,
                    exact: w.horizon == h0,
                    depth: d,
                    nodes: nodes.load(Relaxed),
                    elapsed: start.elapsed(),
                    pv: self.pv(root, &w.lines[0], d as usize + 8),
                };
                report(&o);
                let done =
                    o.exact || legal.len() == 1 || limits.soft.is_some_and(|s| o.elapsed * 2 >= s);
                best = Some(o);
                if done {
                    break;
                }
            }
            stop.store(true, Relaxed);
            w.flush();
            Ok(best)
        })?;
        // Stopped inside the first iteration: the first legal move.
        let mut o = result.unwrap_or_else(|| Outcome {
            pit: first,
            value: 0,
            exact: false,
            depth: 0,
            nodes: 0,
            elapsed: Duration::ZERO,
            pv: vec![first],
        });
        o.nodes = nodes.load(Relaxed);
        o.elapsed = start.elapsed();
        Ok(o)
    }

    /// When every legal move of `root` ends the game or leads into a
    /// layer the search reads: a best move by the tables (best worth, then
    /// best distance: [`crate::probe::best_pits`]) and its value.
    pub fn table_move(&self, root: &Position) -> Result<Option<(u8, i32)>> {
        let mut moves = Vec::with_capacity(6);
        for m in root.moves(&self.rules).legal() {
            let c = &m.child;
            let (v, d) = if c.moves(&self.rules).legal().next().is_none() {
                (c.final_score(&self.rules), Some(Distance::Plies(0)))
            } else if self.in_tables(c) {
                (self.db.score(c)? as i32, self.db.distance(c)?)
            } else {
                return Ok(None);
            };
            let d = d.map(|d| {
                if m.captured > 0 {
                    Distance::Plies(0)
                } else {
                    d
                }
            });
            moves.push((m.pit, m.captured as i32 - v, d.map(Distance::after_move)));
        }
        let best = crate::probe::best_pits(&moves);
        Ok(best
            .first()
            .and_then(|&p| moves.iter().find(|m| m.0 == p))
            .map(|m| (m.0, m.1)))
    }

    /// The principal variation from `root`: the search's `line`, then the
    /// transposition table's best moves, then the tables' best moves once
    /// a built layer is reached; at most `len` moves, none repeating a
    /// position.
    fn pv(&self, root: &Position, searched: &[u8], len: usize) -> Vec<u8> {
        let mut line = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut p = *root;
        let mut next = searched.first().copied();
        while line.len() < len {
            let Some(pit) = next else { break };
            let moves = p.moves(&self.rules);
            let Some(m) = moves.from_pit(pit as usize).filter(|m| m.legal) else {
                break;
            };
            line.push(pit);
            p = m.child;
            if !seen.insert(p) || p.moves(&self.rules).legal().next().is_none() {
                break;
            }
            if self.in_tables(&p) {
                if let Ok(pv) = self.db.principal_variation(&p, len - line.len()) {
                    line.extend(pv.steps.iter().map(|s| s.pit));
                }
                break;
            }
            next = match searched.get(line.len()) {
                Some(&pit) => Some(pit),
                None => self.tt.probe(tt::key(&p)).and_then(|e| e.pit),
            };
        }
        line
    }
}

/// One thread's search state.
struct Worker<'e, 'd> {
    e: &'e Engine<'d>,
    stop: &'e AtomicBool,
    shared_nodes: &'e AtomicU64,
    start: Instant,
    hard: Option<Duration>,
    nodes: u64,
    /// Positions scored by the horizon or a repetition (and transposition
    /// entries resting on such): a subtree is proven when this did not
    /// grow while it was searched.
    horizon: u64,
    /// The game's positions, then the search's path to the current node.
    path: Vec<Position>,
    killers: Vec<[u8; 2]>,
    history: [[u32; 6]; 2],
    /// The principal variation below each ply (a triangular array).
    lines: Vec<Vec<u8>>,
    aborted: bool,
    error: Option<Error>,
}

const NO_PIT: u8 = 255;

impl<'e, 'd> Worker<'e, 'd> {
    fn new(
        e: &'e Engine<'d>,
        stop: &'e AtomicBool,
        shared_nodes: &'e AtomicU64,
        start: Instant,
        hard: Option<Duration>,
        history: &[Position],
    ) -> Self {
        Worker {
            e,
            stop,
            shared_nodes,
            start,
            hard,
            nodes: 0,
            horizon: 0,
            path: history.to_vec(),
            killers: vec![[NO_PIT; 2]; MAX_PLY],
            history: [[0; 6]; 2],
            lines: vec![Vec::new(); MAX_PLY + 1],
            aborted: false,
            error: None,
        }
    }

    fn flush(&mut self) {
        self.shared_nodes.fetch_add(self.nodes, Relaxed);
        self.nodes = 0;
    }

    #[inline]
    fn poll(&mut self) {
        self.flush();
        if self.stop.load(Relaxed) || self.hard.is_some_and(|h| self.start.elapsed() >= h) {
            self.stop.store(true, Relaxed);
            self.aborted = true;
        }
    }

    /// The line at `ply`: `pit`, then the line below it.
    fn extend_line(&mut self, ply: usize, pit: u8) {
        let (upper, lower) = self.lines.split_at_mut(ply + 1);
        let line = &mut upper[ply];
        line.clear();
        line.push(pit);
        line.extend_from_slice(&lower[0]);
    }

    /// Whether `p` occurred on the path with the same side to move and no
    /// capture since.
    fn repeats(&self, p: &Position) -> bool {
        let n = p.seeds();
        let mut j = self.path.len();
        while j >= 2 {
            j -= 2;
            let q = &self.path[j];
            if q.seeds() != n {
                return false;
            }
            if q == p {
                return true;
            }
        }
        false
    }

    /// One iteration at the root: the best value and pit, `None` when
    /// stopped before any move was searched.
    fn root(&mut self, p: &Position, depth: u32, previous: Option<u8>) -> Option<(i32, u8)> {
        let moves = p.moves(&self.e.rules);
        let mut order: Vec<_> = moves.legal().copied().collect();
        order.sort_by_key(|m| (Some(m.pit) != previous, std::cmp::Reverse(m.captured)));
        let (mut alpha, beta) = (-INF, INF);
        let mut best: Option<(i32, u8)> = None;
        self.lines[0].clear();
        self.path.push(*p);
        for (i, m) in order.iter().enumerate() {
            let c = m.captured as i32;
            let v = if i == 0 {
                c - self.node(&m.child, depth - 1, c - beta, c - alpha, 1)
            } else {
                let v = c - self.node(&m.child, depth - 1, c - alpha - 1, c - alpha, 1);
                if v > alpha && !self.aborted {
                    c - self.node(&m.child, depth - 1, c - beta, c - alpha, 1)
                } else {
                    v
                }
            };
            if self.aborted {
                break;
            }
            if best.map_or(true, |(b, _)| v > b) {
                best = Some((v, m.pit));
                alpha = alpha.max(v);
                self.extend_line(0, m.pit);
            }
        }
        self.path.pop();
        if let Some((v, pit)) = best.filter(|_| !self.aborted) {
            self.e.tt.store(
                tt::key(p),
                tt::Entry {
                    value: v,
                    depth,
                    bound: tt::Bound::Exact,
                    proven: false,
                    pit: Some(pit),
                },
            );
        }
        best
    }

    /// The value of `p` for its mover within `(alpha, beta)`, searched
    /// `depth` plies.
    fn node(&mut self, p: &Position, depth: u32, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.nodes += 1;
        if self.nodes & 1023 == 0 {
            self.poll();
        }
        if self.aborted {
            return 0;
        }
        self.lines[ply].clear();
        let moves = p.moves(&self.e.rules);
        if moves.legal().next().is_none() {
            return p.final_score(&self.e.rules);
        }
        if self.e.in_tables(p) {
            return match self.e.table_score(p) {
                Ok(s) => s as i32,
                Err(e) => {
                    self.error = Some(e);
                    self.stop.store(true, Relaxed);
                    self.aborted = true;
                    0
                }
            };
        }
        if self.repeats(p) || depth == 0 || ply >= MAX_PLY - 1 {
            self.horizon += 1;
            return 0;
        }
        let key = tt::key(p);
        let mut tt_pit = NO_PIT;
        if let Some(e) = self.e.tt.probe(key) {
            tt_pit = e.pit.unwrap_or(NO_PIT);
            if e.proven || e.depth >= depth {
                let cut = match e.bound {
                    tt::Bound::Exact => true,
                    tt::Bound::Lower => e.value >= beta,
                    tt::Bound::Upper => e.value <= alpha,
                };
                if cut {
                    if !e.proven {
                        self.horizon += 1;
                    }
                    return e.value;
                }
            }
        }
        // Order: the table's move, captures (largest first), killers, history.
        let side = ply & 1;
        let killers = self.killers[ply];
        let mut order: [(u32, usize); 6] = [(0, 0); 6];
        let mut len = 0;
        for (i, m) in moves.as_slice().iter().enumerate() {
            if !m.legal {
                continue;
            }
            let score = if m.pit == tt_pit {
                u32::MAX
            } else if m.captured > 0 {
                u32::MAX - 100 + m.captured as u32
            } else if m.pit == killers[0] {
                u32::MAX - 200
            } else if m.pit == killers[1] {
                u32::MAX - 201
            } else {
                self.history[side][m.pit as usize].min(u32::MAX - 300)
            };
            // Insertion, highest first.
            let mut k = len;
            while k > 0 && order[k - 1].0 < score {
                order[k] = order[k - 1];
                k -= 1;
            }
            order[k] = (score, i);
            len += 1;
        }
        let h0 = self.horizon;
        let alpha0 = alpha;
        let mut best = -INF;
        let mut best_pit = NO_PIT;
        self.path.push(*p);
        for (k, &(_, i)) in order[..len].iter().enumerate() {
            let m = &moves.as_slice()[i];
            let c = m.captured as i32;
            let v = if k == 0 {
                c - self.node(&m.child, depth - 1, c - beta, c - alpha, ply + 1)
            } else {
                let v = c - self.node(&m.child, depth - 1, c - alpha - 1, c - alpha, ply + 1);
                if v > alpha && v < beta && !self.aborted {
                    c - self.node(&m.child, depth - 1, c - beta, c - alpha, ply + 1)
                } else {
                    v
                }
            };
            if self.aborted {
                self.path.pop();
                return 0;
            }
            if v > best {
                best = v;
                best_pit = m.pit;
                if v > alpha {
                    alpha = v;
                    self.extend_line(ply, m.pit);
                    if alpha >= beta {
                        if m.captured == 0 {
                            let kl = &mut self.killers[ply];
                            if kl[0] != m.pit {
                                kl[1] = kl[0];
                                kl[0] = m.pit;
                            }
                            let h = &mut self.history[side][m.pit as usize];
                            *h = h.saturating_add(depth * depth);
                        }
                        break;
                    }
                }
            }
        }
        self.path.pop();
        let bound = if best >= beta {
            tt::Bound::Lower
        } else if best > alpha0 {
            tt::Bound::Exact
        } else {
            tt::Bound::Upper
        };
        self.e.tt.store(
            key,
            tt::Entry {
                value: best,
                depth,
                bound,
                proven: self.horizon == h0,
                pit: (best_pit != NO_PIT).then_some(best_pit),
            },
        );
        best
    }
}

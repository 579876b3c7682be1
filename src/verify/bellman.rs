//! The forward Bellman check: every stored score and envelope bound of a
//! layer recomputed from its children and compared, and the distance to
//! the next capture checked against its recurrence
//! ([`crate::solve::distance`], whose solution is unique: a table that
//! obeys it everywhere is the table).

use crate::error::Result;
use crate::format::Kind;
use crate::index::{layer_size, rank};
use crate::probe::Database;
use crate::rules::Position;
use crate::solve::distance::{MAX, NONE};
use rayon::prelude::*;
use serde::Serialize;
use std::sync::Mutex;

/// One stored value that its children contradict.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct BellmanMismatch {
    /// Seeds.
    pub seeds: u32,
    /// Goedel index.
    pub index: u64,
    /// The board.
    pub pits: [u8; 12],
    /// `scores`, `lower`, `upper` or `dist`.
    pub table: &'static str,
    /// What is stored (a distance as its byte: 255 for none).
    pub stored: i16,
    /// What the children give.
    pub recomputed: i16,
}

/// The Bellman check of one layer.
#[derive(Clone, Debug, Serialize)]
pub struct BellmanVerdict {
    /// Seeds.
    pub seeds: u32,
    /// Positions checked.
    pub positions: u64,
    /// Whether the envelope was checked too.
    pub envelope: bool,
    /// Whether the distance was checked too.
    #[serde(default)]
    pub distance: bool,
    /// Mismatching values.
    pub mismatches: u64,
    /// The first of them.
    pub first_mismatches: Vec<BellmanMismatch>,
}

/// Recomputes every stored score (and envelope bound) of layer `n` forward
/// from its children and compares: `score(P) = max over legal moves of
/// (captures - score(child))` (`-n` without a move; a child whose mover has
/// no seeds scores minus its seeds), and likewise `lower` from the
/// children's `upper` and `upper` from their `lower`; where the layer
/// has a distance table, each distance from the stored score and the
/// children's scores and distances (its recurrence, [`crate::solve::distance`]).
///
/// Memory: layer `n`'s own tables, read whole (a move without capture
/// stays in the layer, anywhere in it), and buffers per thread
/// ([`CHECK_BATCH_BYTES`]): the lower layers are read in index order, a
/// batch of positions at a time, through the database's readers
/// (`pread`, or the blocks of a compressed copy), never held ([`crate::plan::check_need`], which the caller
/// checks against its budget with [`crate::plan::fit_check`]).
///
/// The positions are visited grouped by the mover's row (pits 0..5): the
/// children of one row's positions by one move share the child's top row
/// (the sown mover row), the most significant pits of the child's index,
/// so they lie in one run of each lower layer. A batch gathers its
/// capture children's `(layer, index)`, sorts them, reads the runs they
/// fall in, and then compares.
pub fn bellman_check(db: &Database, n: u32, max_listed: usize) -> Result<BellmanVerdict> {
    let size = layer_size(n);
    let score = db
        .read_table(n, Kind::Score)?
        .ok_or(crate::index::IndexError::NoSuchLayer(n))?;
    let envelope = db.has_envelope(n)?;
    let (lower, upper) = if envelope {
        (
            db.read_table(n, Kind::Lower)?,
            db.read_table(n, Kind::Upper)?,
        )
    } else {
        (None, None)
    };
    let own: [&[u8]; 3] = [
        &score,
        lower.as_deref().unwrap_or(&score),
        upper.as_deref().unwrap_or(&score),
    ];
    let dist = if db.has_distance(n)? {
        db.read_table(n, Kind::Distance)?
    } else {
        None
    };
    let rows = Rows::new(n);
    let batches = rows.batches(BATCH);
    let listed = Mutex::new(Listed::new(max_listed));
    let ctx = Ctx {
        db,
        n,
        envelope,
        own,
        dist: dist.as_deref(),
        rows: &rows,
        listed: &listed,
    };
    let mismatches: u64 = batches
        .par_iter()
        .map_init(Scratch::default, |scratch, b| ctx.batch(b.clone(), scratch))
        .try_reduce(|| 0, |a, b| Ok(a + b))?;
    Ok(BellmanVerdict {
        seeds: n,
        positions: size,
        envelope,
        distance: dist.is_some(),
        mismatches,
        first_mismatches: listed.into_inner().expect("list lock").0,
    })
}

/// Positions of a batch (about; a batch holds whole mover rows).
const BATCH: u64 = 1 << 17;

/// Bytes a thread of [`bellman_check`] needs for a batch: per position
/// its index and recomputed values, per capture child a request, and
/// the runs read (at most `RUN` bytes of each table).
pub const CHECK_BATCH_BYTES: u64 = BATCH * (16 + 6 * 16) + 3 * RUN as u64;

/// Most bytes read from a lower table at once.
const RUN: usize = 1 << 20;

/// Largest gap between two wanted entries read in one run (a `pread` of
/// a few KiB costs about what one of a byte does).
const GAP: u64 = 4096;

/// The rows (6 pits) of each seed count `0..=n`, in the order of the
/// index (pit 5 of the row most significant).
struct Rows {
    by_sum: Vec<Vec<[u8; 6]>>,
    /// Every mover row of layer `n` in that order, as (sum, place).
    order: Vec<(u8, u32)>,
    n: u32,
}

impl Rows {
    fn new(n: u32) -> Rows {
        let mut by_sum: Vec<Vec<[u8; 6]>> = vec![Vec::new(); n as usize + 1];
        let mut order = Vec::new();
        let mut r = [0u8; 6];
        fn walk(
            pit: usize,
            left: u32,
            r: &mut [u8; 6],
            by_sum: &mut [Vec<[u8; 6]>],
            order: &mut Vec<(u8, u32)>,
            n: u32,
        ) {
            if pit == usize::MAX {
                let s = n - left;
                order.push((s as u8, by_sum[s as usize].len() as u32));
                by_sum[s as usize].push(*r);
                return;
            }
            for v in 0..=left {
                r[pit] = v as u8;
                walk(pit.wrapping_sub(1), left - v, r, by_sum, order, n);
            }
            r[pit] = 0;
        }
        walk(5, n, &mut r, &mut by_sum, &mut order, n);
        Rows { by_sum, order, n }
    }

    /// Positions of layer `n` whose mover row holds `s` seeds: opponent
    /// rows of `n - s` seeds with an empty pit.
    fn positions(&self, s: u32) -> u64 {
        self.by_sum[(self.n - s) as usize]
            .iter()
            .filter(|o| o.contains(&0))
            .count() as u64
    }

    /// The mover rows cut into batches of about `batch` positions.
    fn batches(&self, batch: u64) -> Vec<std::ops::Range<usize>> {
        let per_sum: Vec<u64> = (0..=self.n).map(|s| self.positions(s)).collect();
        let mut out = Vec::new();
        let (mut from, mut count) = (0, 0);
        for (i, &(s, _)) in self.order.iter().enumerate() {
            count += per_sum[s as usize];
            if count >= batch {
                out.push(from..i + 1);
                from = i + 1;
                count = 0;
            }
        }
        if from < self.order.len() {
            out.push(from..self.order.len());
        }
        out
    }
}

/// A thread's buffers, kept from batch to batch.
#[derive(Default)]
struct Scratch {
    /// Per position: its index, the values recomputed so far and its
    /// distance so far ([`Reach`]).
    parents: Vec<(u64, [i8; 3], Reach)>,
    /// Per capture child: `layer << 40 | index`, the position's slot and
    /// the seeds captured.
    wants: Vec<(u64, u32, u8)>,
    runs: [Vec<u8>; 3],
}

/// The first mismatches, by index and table.
struct Listed(Vec<BellmanMismatch>, usize);

impl Listed {
    fn new(max: usize) -> Listed {
        Listed(Vec::new(), max)
    }

    fn add(&mut self, m: BellmanMismatch) {
        if self.1 == 0 {
            return;
        }
        let at = self
            .0
            .partition_point(|x| (x.index, x.table) < (m.index, m.table));
        if at < self.1 {
            self.0.insert(at, m);
            self.0.truncate(self.1);
        }
    }
}

/// What every batch of one layer's check shares.
struct Ctx<'a> {
    db: &'a Database,
    n: u32,
    envelope: bool,
    /// The layer's own tables (score, lower, upper; the score thrice
    /// without the envelope).
    own: [&'a [u8]; 3],
    /// The layer's distance table, if it has one.
    dist: Option<&'a [u8]>,
    rows: &'a Rows,
    listed: &'a Mutex<Listed>,
}

/// The table names, in the order of the values.
const NAMES: [&str; 3] = ["scores", "lower", "upper"];

impl Ctx<'_> {
    /// Checks the positions of the mover rows `batch`; their mismatches.
    fn batch(&self, batch: std::ops::Range<usize>, s: &mut Scratch) -> Result<u64> {
        let n = self.n;
        let rules = self.db.rules();
        s.parents.clear();
        s.wants.clear();
        for &(sum, at) in &self.rows.order[batch] {
            let mover = self.rows.by_sum[sum as usize][at as usize];
            for opp in &self.rows.by_sum[(n - sum as u32) as usize] {
                if !opp.contains(&0) {
                    continue;
                }
                let mut pits = [0u8; 12];
                pits[..6].copy_from_slice(&mover);
                pits[6..].copy_from_slice(opp);
                let p = Position(pits);
                let slot = s.parents.len() as u32;
                let g = rank(&p);
                let mut best = [i32::MIN; 3];
                let mut reach = Reach::new(self.own[0][g as usize] as i8);
                let mut any = false;
                for m in p.moves(rules).legal() {
                    any = true;
                    let c = m.captured as i32;
                    let left = n - m.captured as u32;
                    let child = if m.child.mover_seeds() == 0 {
                        reach.exit(c + left as i32);
                        [-(left as i32); 3]
                    } else if m.captured == 0 {
                        let g = rank(&m.child) as usize;
                        if let Some(d) = self.dist {
                            reach.internal(-(self.own[0][g] as i8 as i32), d[g]);
                        }
                        self.own.map(|t| t[g] as i8 as i32)
                    } else {
                        let key = (left as u64) << 40 | rank(&m.child);
                        s.wants.push((key, slot, m.captured));
                        continue;
                    };
                    take(&mut best, c, child);
                }
                let best = if any {
                    best.map(|b| b.max(-128) as i8)
                } else {
                    reach.over();
                    [p.final_score(rules) as i8; 3]
                };
                s.parents.push((g, best, reach));
            }
        }
        self.capture_children(s)?;
        let mut bad = 0;
        for &(g, want, reach) in &s.parents {
            let mut differ = |table, stored: i16, recomputed: i16| {
                bad += 1;
                self.listed.lock().expect("list lock").add(BellmanMismatch {
                    seeds: n,
                    index: g,
                    pits: crate::index::unrank_unchecked(n, g).0,
                    table,
                    stored,
                    recomputed,
                });
            };
            for t in 0..if self.envelope { 3 } else { 1 } {
                let stored = self.own[t][g as usize] as i8;
                if stored != want[t] {
                    differ(NAMES[t], stored.into(), want[t].into());
                }
            }
            if let Some(d) = self.dist {
                let (stored, want) = (d[g as usize], reach.byte());
                if stored != want {
                    differ("dist", stored.into(), want.into());
                }
            }
        }
        Ok(bad)
    }

    /// Reads the values of the batch's capture children, in index order,
    /// a run of each lower table at a time, and takes them into their
    /// positions' values.
    fn capture_children(&self, s: &mut Scratch) -> Result<()> {
        s.wants.sort_unstable_by_key(|w| w.0);
        let tables = if self.envelope { 3 } else { 1 };
        let mut i = 0;
        while i < s.wants.len() {
            let first = s.wants[i].0;
            let layer = (first >> 40) as u32;
            let mut j = i + 1;
            while j < s.wants.len() {
                let k = s.wants[j].0;
                if k >> 40 != first >> 40 || k - s.wants[j - 1].0 > GAP || k - first >= RUN as u64 {
                    break;
                }
                j += 1;
            }
            let start = first & ((1 << 40) - 1);
            let len = (s.wants[j - 1].0 - first) as usize + 1;
            for (run, kind) in s.runs.iter_mut().zip(KINDS).take(tables) {
                run.resize(len, 0);
                if layer == 47 || !self.db.read_range(layer, kind, start, run)? {
                    run.fill(0);
                }
            }
            for &(k, slot, c) in &s.wants[i..j] {
                let at = (k - first) as usize;
                let v = s.runs[0][at] as i8 as i32;
                let child = if self.envelope {
                    [v, s.runs[1][at] as i8 as i32, s.runs[2][at] as i8 as i32]
                } else {
                    [v; 3]
                };
                let p = &mut s.parents[slot as usize];
                let mut best = p.1.map(|b| b as i32);
                take(&mut best, c as i32, child);
                p.1 = best.map(|b| b as i8);
                p.2.exit(c as i32 - v);
            }
            i = j;
        }
        Ok(())
    }
}

/// A position's distance as its kept moves give it
/// ([`crate::solve::distance`]): the least (score `>= 0`) or greatest
/// (below) of 1 for a kept exit and one more than the child's distance
/// for a kept internal move, 0 without a legal move.
#[derive(Clone, Copy)]
struct Reach {
    score: i32,
    /// The distance so far; [`Reach::ENDLESS`] for an endless child,
    /// [`Reach::UNSET`] before the first kept move.
    best: u32,
    over: bool,
}

impl Reach {
    const ENDLESS: u32 = 1 << 20;
    const UNSET: u32 = u32::MAX;

    fn new(score: i8) -> Reach {
        Reach {
            score: score as i32,
            best: Self::UNSET,
            over: false,
        }
    }
    fn take(&mut self, d: u32) {
        self.best = match self.best {
            Self::UNSET => d,
            b if self.score < 0 => b.max(d),
            b => b.min(d),
        };
    }
    /// An exit worth `worth`.
    fn exit(&mut self, worth: i32) {
        if worth == self.score {
            self.take(1);
        }
    }
    /// A move into the layer worth `worth`, to a child of distance byte `d`.
    fn internal(&mut self, worth: i32, d: u8) {
        if worth == self.score {
            self.take(if d == NONE {
                Self::ENDLESS
            } else {
                1 + d as u32
            });
        }
    }
    fn over(&mut self) {
        self.over = true;
    }
    /// The byte the table must hold.
    fn byte(self) -> u8 {
        match self.best {
            _ if self.over => 0,
            d if d <= MAX as u32 => d as u8,
            _ => NONE,
        }
    }
}

/// The tables in the order of the values.
const KINDS: [Kind; 3] = [Kind::Score, Kind::Lower, Kind::Upper];

/// Takes a move capturing `c` to a child of values `child` into `best`.
#[inline]
fn take(best: &mut [i32; 3], c: i32, child: [i32; 3]) {
    best[0] = best[0].max(c - child[0]);
    best[1] = best[1].max(c - child[2]);
    best[2] = best[2].max(c - child[1]);
}

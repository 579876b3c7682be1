//! Probing positions: the score of one or many positions, the cycle
//! [`Envelope`], and the six moves with their worth ([`MoveInfo`]).

use super::Database;
use super::Distance;
use crate::error::{Error, Result};
use crate::format::Kind;
use crate::index::IndexError;
use crate::index::{layer_size, rank};
use crate::mem::prefetch;
use crate::probe::ProbeError;
use crate::rules::RulesError;
use crate::rules::{Position, MAX_SEEDS};
use crate::store::StoreError;

/// A batch's nearby entries of a table read with `pread` are read
/// together when no gap between them is over `GAP` bytes ...
const GAP: u64 = 4096;
/// ... and they span at most `SPAN` bytes.
const SPAN: u64 = 1 << 16;

/// How far the cycle rule could move a score.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Envelope {
    /// The score if endless play went to the opponent.
    pub lower: i8,
    /// The score if endless play went to the mover.
    pub upper: i8,
}

impl Envelope {
    /// Whether the score cannot depend on the cycle rule.
    pub fn pinned(&self) -> bool {
        self.lower == self.upper
    }
}

/// One of the mover's six pits as a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MoveInfo {
    /// The pit, 0..5.
    pub pit: u8,
    /// Whether the pit holds seeds.
    pub nonempty: bool,
    /// Whether the move is legal.
    pub legal: bool,
    /// Seeds it captures (0 for an empty pit).
    pub captures: u8,
    /// Its worth for the mover (`captures - score of the child`, or
    /// `captures + seeds left` when the opponent is left without seeds);
    /// `None` for an empty pit or an illegal move.
    pub score: Option<i8>,
    /// How far the next capture is after it, this move counted (1 for a
    /// capture or a move that ends the game); `None` for an empty pit or
    /// an illegal move, or where the tables have no distance.
    pub distance: Option<Distance>,
    /// The position after the move, from the opponent's side.
    #[serde(skip)]
    pub child: Option<Position>,
}

impl Database {
    /// The layer and Goedel index of a board, checking it has them.
    #[inline]
    pub(super) fn locate(p: &Position) -> Result<(u32, u64)> {
        let n = p.seeds();
        if n > MAX_SEEDS {
            return Err(RulesError::TooManySeeds(n).into());
        }
        if !p.is_indexable() {
            return Err(RulesError::OpponentFull.into());
        }
        if n == 47 {
            return Err(IndexError::Layer47.into());
        }
        Ok((n, rank(p)))
    }

    /// `v`, read at index `g` of table `kind` of layer `n`, if a score of
    /// that layer can take it (`-n..=n`); else the table is damaged.
    #[inline]
    pub(super) fn checked(&self, n: u32, kind: Kind, g: u64, v: i8) -> Result<i8> {
        if v.unsigned_abs() as u32 <= n {
            return Ok(v);
        }
        Err(self.bad_value(n, kind, g, v))
    }

    #[cold]
    fn bad_value(&self, n: u32, kind: Kind, g: u64, value: i8) -> Error {
        StoreError::BadValue {
            path: self
                .dir()
                .unwrap_or(std::path::Path::new("(memory)"))
                .join(kind.file_name(n)),
            layer: n,
            index: g,
            value,
        }
        .into()
    }

    /// The score of a position for the side to move.
    #[inline]
    ///
    /// A board without a Goedel number (every opponent pit holds seeds, as
    /// at the opening: no move leads to it, so no table holds it) is
    /// answered from its moves, whose children have numbers: its score is
    /// its best move's worth.
    pub fn score(&self, p: &Position) -> Result<i8> {
        if !p.is_indexable() {
            return self.score_from_moves(p, &self.moves_of(p)?);
        }
        let (n, g) = Self::locate(p)?;
        self.score_entry(n, g, p)
    }

    /// The score of `p` from its `moves`: the best worth, or the end's
    /// score when it has no legal move.
    pub(super) fn score_from_moves(&self, p: &Position, moves: &[MoveInfo; 6]) -> Result<i8> {
        Ok(match moves.iter().filter_map(|m| m.score).max() {
            Some(s) => s,
            None => p.final_score(&self.rules) as i8,
        })
    }

    /// The scores of many positions, written to `out` (one per position).
    /// Table reads are prefetched a group at a time, so their cache misses
    /// overlap: much faster than one [`score`](Self::score) after another
    /// on random positions. Positions in compressed tables are looked up
    /// last, in index order, so that each block is decompressed once per
    /// call; boards without a Goedel number are answered from their moves
    /// as [`score`](Self::score) answers them. Stops at the first position
    /// that fails.
    pub fn scores(&self, ps: &[Position], out: &mut [i8]) -> Result<()> {
        if ps.len() != out.len() {
            return Err(ProbeError::Lengths {
                positions: ps.len(),
                outputs: out.len(),
            }
            .into());
        }
        const GROUP: usize = 16;
        static NONE: [u8; 1] = [0];
        let mut at = [(&NONE[..], 0usize, 0u32); GROUP];
        let mut later: Vec<(u32, u64, usize)> = Vec::new();
        let mut from_moves: Vec<usize> = Vec::new();
        for (c, (pc, oc)) in ps.chunks(GROUP).zip(out.chunks_mut(GROUP)).enumerate() {
            for (k, p) in pc.iter().enumerate() {
                let (n, g) = match Self::locate(p) {
                    Ok(at) => at,
                    Err(e) if matches!(e.cause(), Some(RulesError::OpponentFull)) => {
                        // No Goedel number: answered from its moves, last.
                        Self::seeds_of(p)?;
                        from_moves.push(c * GROUP + k);
                        at[k] = (&NONE[..], 0, 0);
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                match self.layer(n)?.score.as_slice() {
                    Some(t) => {
                        let g = g as usize;
                        prefetch(t[g..].as_ptr());
                        at[k] = (t, g, n);
                    }
                    None => {
                        later.push((n, g, c * GROUP + k));
                        at[k] = (&NONE[..], 0, 0);
                    }
                }
            }
            for (o, &(t, g, n)) in oc.iter_mut().zip(&at) {
                *o = self.checked(n, Kind::Score, g as u64, t[g] as i8)?;
            }
        }
        later.sort_unstable();
        self.scores_in_order(&later, ps, out)?;
        for i in from_moves {
            out[i] = self.score(&ps[i])?;
        }
        Ok(())
    }

    /// [`scores`](Self::scores), where a board whose score needs a layer
    /// the folder does not hold gets `None` ("not available") instead of
    /// failing the whole batch; every other failure (a bad board, a
    /// damaged table) still fails it. The number of boards not available.
    pub fn scores_where_built(&self, ps: &[Position], out: &mut [Option<i8>]) -> Result<usize> {
        if ps.len() != out.len() {
            return Err(ProbeError::Lengths {
                positions: ps.len(),
                outputs: out.len(),
            }
            .into());
        }
        let mut built = [false; MAX_SEEDS as usize + 1];
        for n in self.layers() {
            built[n as usize] = true;
        }
        // The boards of built layers go through the batch; a board without
        // a Goedel number needs its children's layers: answered alone.
        let mut at = Vec::with_capacity(ps.len());
        let mut batch = Vec::with_capacity(ps.len());
        let mut missing = 0;
        for (i, p) in ps.iter().enumerate() {
            out[i] = None;
            if !p.is_indexable() {
                match self.score(p) {
                    Ok(v) => out[i] = Some(v),
                    Err(e) if matches!(e.cause(), Some(StoreError::MissingLayer { .. })) => {
                        missing += 1
                    }
                    Err(e) => return Err(e),
                }
                continue;
            }
            let (n, _) = Self::locate(p)?;
            if built[n as usize] {
                at.push(i);
                batch.push(*p);
            } else {
                missing += 1;
            }
        }
        let mut scores = vec![0i8; batch.len()];
        self.scores(&batch, &mut scores)?;
        for (i, v) in at.into_iter().zip(scores) {
            out[i] = Some(v);
        }
        Ok(missing)
    }

    /// The scores [`scores`](Self::scores) left for last, `(layer, index,
    /// output)` in index order: entries of a raw table read with `pread`
    /// that lie close together (no gap over [`GAP`] bytes, at most
    /// [`SPAN`] bytes in all) are read with one `pread`, so a large batch
    /// reads a table in long runs instead of one system call per position;
    /// compressed tables decode each block once.
    fn scores_in_order(
        &self,
        later: &[(u32, u64, usize)],
        ps: &[Position],
        out: &mut [i8],
    ) -> Result<()> {
        let mut buf = Vec::new();
        let (mut gs, mut vs) = (Vec::new(), Vec::new());
        let mut k = 0;
        while k < later.len() {
            let (n, first, i) = later[k];
            let t = &self.layer(n)?.score;
            let mut end = k + 1;
            if t.is_compressed() && !t.is_dont_care() {
                // A layer's run, each block decoded once.
                while end < later.len() && later[end].0 == n {
                    end += 1;
                }
                gs.clear();
                gs.extend(later[k..end].iter().map(|l| l.1));
                vs.clear();
                vs.resize(gs.len(), 0);
                t.get_many(&gs, &mut vs)?;
                for (&(_, g, i), &v) in later[k..end].iter().zip(&vs) {
                    out[i] = self.checked(n, Kind::Score, g, v)?;
                }
                k = end;
                continue;
            }
            if !t.is_compressed() && !t.is_dont_care() {
                while end < later.len()
                    && later[end].0 == n
                    && later[end].1 - first < SPAN
                    && later[end].1 - later[end - 1].1 <= GAP
                {
                    end += 1;
                }
            }
            if end == k + 1 {
                out[i] = self.score_entry(n, first, &ps[i])?;
            } else {
                buf.resize((later[end - 1].1 - first + 1) as usize, 0);
                t.read_range(first, &mut buf)?;
                for &(_, g, i) in &later[k..end] {
                    let v = buf[(g - first) as usize] as i8;
                    out[i] = self.checked(n, Kind::Score, g, v)?;
                }
            }
            k = end;
        }
        Ok(())
    }

    /// The score at Goedel index `g` of layer `n`.
    pub fn score_at(&self, n: u32, g: u64) -> Result<i8> {
        if n > MAX_SEEDS || g >= layer_size(n) {
            crate::index::unrank(n, g)?;
        }
        let t = &self.layer(n)?.score;
        if t.is_dont_care() {
            return self.score_entry(n, g, &crate::index::unrank(n, g)?);
        }
        let v = t.get(g)?;
        self.checked(n, Kind::Score, g, v)
    }

    /// The cycle envelope of a position (`None` for tables without one).
    /// Its score is read too: a score outside its envelope means one of
    /// the three tables is damaged ([`ProbeError::OutsideEnvelope`]).
    ///
    /// A board without a Goedel number (the opening) is answered from its
    /// moves: the best of their envelopes.
    pub fn envelope(&self, p: &Position) -> Result<Option<Envelope>> {
        if !p.is_indexable() {
            Self::seeds_of(p)?;
            let moves = self.moves_of(p)?;
            return self.envelope_from_moves(p, &moves);
        }
        let (n, g) = Self::locate(p)?;
        let Some((lo, hi)) = &self.layer(n)?.envelope else {
            return Ok(None);
        };
        let e = Envelope {
            lower: self.checked(n, Kind::Lower, g, lo.get(g)?)?,
            upper: self.checked(n, Kind::Upper, g, hi.get(g)?)?,
        };
        let score = self.score_entry(n, g, p)?;
        if e.lower <= score && score <= e.upper {
            return Ok(Some(e));
        }
        Err(ProbeError::OutsideEnvelope {
            dir: self
                .dir()
                .unwrap_or(std::path::Path::new("(memory)"))
                .into(),
            layer: n,
            index: g,
            score,
            lower: e.lower,
            upper: e.upper,
        }
        .into())
    }

    /// The seeds of a board that may lack a Goedel number (the opening):
    /// at most 48, and not 47.
    pub(super) fn seeds_of(p: &Position) -> Result<u32> {
        let n = p.seeds();
        if n > MAX_SEEDS {
            return Err(RulesError::TooManySeeds(n).into());
        }
        if n == 47 {
            return Err(IndexError::Layer47.into());
        }
        Ok(n)
    }

    /// The six pits as moves, with their legality, captures and worth (of
    /// any board of at most 48 seeds, not 47: one without a Goedel number
    /// too, its children have one).
    pub fn moves(&self, p: &Position) -> Result<[MoveInfo; 6]> {
        self.moves_of(p)
    }

    /// [`moves`](Self::moves).
    pub(super) fn moves_of(&self, p: &Position) -> Result<[MoveInfo; 6]> {
        let n = Self::seeds_of(p)?;
        let list = p.moves(&self.rules);
        let mut out = [MoveInfo {
            pit: 0,
            nonempty: false,
            legal: false,
            captures: 0,
            score: None,
            distance: None,
            child: None,
        }; 6];
        // A layer not built has no distance; the moves' children may
        // still be in built layers (a capture from just above them).
        let with_distance = match self.has_distance(n) {
            Err(e) if matches!(e.cause(), Some(StoreError::MissingLayer { .. })) => false,
            other => other?,
        };
        for (pit, m) in out.iter_mut().enumerate() {
            m.pit = pit as u8;
        }
        for mv in list.as_slice() {
            let m = &mut out[mv.pit as usize];
            m.nonempty = true;
            m.legal = mv.legal;
            m.captures = mv.captured;
            m.child = Some(mv.child);
            if mv.legal {
                let left = n - mv.captured as u32;
                let child_score = if mv.child.mover_seeds() == 0 {
                    // The opponent has no move: we take every seed left.
                    -(left as i32)
                } else {
                    self.score_entry(left, rank(&mv.child), &mv.child)? as i32
                };
                m.score = Some((mv.captured as i32 - child_score) as i8);
                if with_distance {
                    m.distance = Some(if mv.captured > 0 || mv.child.mover_seeds() == 0 {
                        Distance::Plies(1)
                    } else {
                        match self.distance_at(n, rank(&mv.child))? {
                            Some(d) => d.after_move(),
                            None => Distance::Endless,
                        }
                    });
                }
            }
        }
        Ok(out)
    }

    /// The best moves: of best worth and, where the tables have the
    /// distance, of the best distance among those (the least when the
    /// score is 0 or more, the greatest when it is below: see
    /// [`crate::solve::distance`]), so that play by them reaches the
    /// score; every one of them, in pit order; empty when the game is
    /// over. Without the distance, every move of best worth: best play by
    /// them may repeat a position before the capture the score needs.
    pub fn best_moves(&self, p: &Position) -> Result<Vec<u8>> {
        Ok(super::distance::best_of(&self.moves(p)?))
    }
}

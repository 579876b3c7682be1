//! Probing positions: the score of one or many positions, the cycle
//! [`Envelope`], and the six moves with their worth ([`MoveInfo`]).

use super::Database;
use crate::error::{Error, Result};
use crate::format::Kind;
use crate::index::{layer_size, rank};
use crate::mem::prefetch;
use crate::rules::{Position, MAX_SEEDS};

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
            return Err(Error::TooManySeeds(n));
        }
        if !p.is_indexable() {
            return Err(Error::OpponentFull);
        }
        if n == 47 {
            return Err(Error::Layer47);
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
        Error::BadValue {
            path: self
                .dir()
                .unwrap_or(std::path::Path::new("(memory)"))
                .join(kind.file_name(n)),
            layer: n,
            index: g,
            value,
        }
    }

    /// The score of a position for the side to move.
    #[inline]
    pub fn score(&self, p: &Position) -> Result<i8> {
        let (n, g) = Self::locate(p)?;
        self.score_entry(n, g, p)
    }

    /// The scores of many positions, written to `out` (one per position).
    /// Table reads are prefetched a group at a time, so their cache misses
    /// overlap: much faster than one [`score`](Self::score) after another
    /// on random positions. Positions in compressed tables are looked up
    /// last, in index order, so that each block is decompressed once per
    /// call. Stops at the first position that fails.
    pub fn scores(&self, ps: &[Position], out: &mut [i8]) -> Result<()> {
        if ps.len() != out.len() {
            return Err(Error::Lengths {
                positions: ps.len(),
                outputs: out.len(),
            });
        }
        const GROUP: usize = 16;
        static NONE: [u8; 1] = [0];
        let mut at = [(&NONE[..], 0usize, 0u32); GROUP];
        let mut later: Vec<(u32, u64, usize)> = Vec::new();
        for (c, (pc, oc)) in ps.chunks(GROUP).zip(out.chunks_mut(GROUP)).enumerate() {
            for (k, p) in pc.iter().enumerate() {
                let (n, g) = Self::locate(p)?;
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
        self.scores_in_order(&later, ps, out)
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
        let mut k = 0;
        while k < later.len() {
            let (n, first, i) = later[k];
            let t = &self.layer(n)?.score;
            let mut end = k + 1;
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
    pub fn envelope(&self, p: &Position) -> Result<Option<Envelope>> {
        let (n, g) = Self::locate(p)?;
        match &self.layer(n)?.envelope {
            Some((lo, hi)) => Ok(Some(Envelope {
                lower: self.checked(n, Kind::Lower, g, lo.get(g)?)?,
                upper: self.checked(n, Kind::Upper, g, hi.get(g)?)?,
            })),
            None => Ok(None),
        }
    }

    /// The seeds of a board that may lack a Goedel number (the opening):
    /// at most 48, and not 47.
    pub(super) fn seeds_of(p: &Position) -> Result<u32> {
        let n = p.seeds();
        if n > MAX_SEEDS {
            return Err(Error::TooManySeeds(n));
        }
        if n == 47 {
            return Err(Error::Layer47);
        }
        Ok(n)
    }

    /// The six pits as moves, with their legality, captures and worth.
    pub fn moves(&self, p: &Position) -> Result<[MoveInfo; 6]> {
        Self::locate(p)?;
        self.moves_of(p)
    }

    /// [`moves`](Self::moves) of a board that need not have a Goedel
    /// number (its children do).
    pub(super) fn moves_of(&self, p: &Position) -> Result<[MoveInfo; 6]> {
        let n = Self::seeds_of(p)?;
        let list = p.moves(&self.rules);
        let mut out = [MoveInfo {
            pit: 0,
            nonempty: false,
            legal: false,
            captures: 0,
            score: None,
            child: None,
        }; 6];
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
            }
        }
        Ok(out)
    }

    /// The legal moves of best worth (empty when the mover has no seeds).
    pub fn best_moves(&self, p: &Position) -> Result<Vec<u8>> {
        Ok(best_of(&self.moves(p)?))
    }
}

/// The pits of `moves` of best worth (every one of them).
pub(super) fn best_of(moves: &[MoveInfo; 6]) -> Vec<u8> {
    let best = moves.iter().filter_map(|m| m.score).max();
    moves
        .iter()
        .filter(|m| m.score.is_some() && m.score == best)
        .map(|m| m.pit)
        .collect()
}

//! A board from outside: twelve pit counts, checked pit by pit, in the
//! words every front end (the command line, the server, Python, C) gives.

use super::{Position, RulesError, MAX_SEEDS, PITS};
use crate::error::Result;

impl Position {
    /// A position from 12 pit counts: no pit over 48 seeds (named by its
    /// label, [`RulesError::PitOverflow`]), at most 48 in all
    /// ([`RulesError::TooManySeeds`]).
    pub fn new(pits: [u8; PITS]) -> Result<Self> {
        if let Some(k) = pits.iter().position(|&c| u32::from(c) > MAX_SEEDS) {
            return Err(RulesError::PitOverflow {
                pit: Self::label(k),
                seeds: i64::from(pits[k]),
            }
            .into());
        }
        let p = Position(pits);
        let n = p.seeds();
        if n > MAX_SEEDS {
            return Err(RulesError::TooManySeeds(n).into());
        }
        Ok(p)
    }

    /// A position from counts given by a caller (any whole numbers, as
    /// Python or JSON hand them over): 12 of them
    /// ([`RulesError::PitsLength`]), each a seed count
    /// ([`RulesError::NotASeedCount`], [`RulesError::PitOverflow`]), as
    /// [`new`](Self::new) checks them.
    pub fn from_counts(counts: &[i64]) -> Result<Self> {
        if counts.len() != PITS {
            return Err(RulesError::PitsLength(counts.len()).into());
        }
        let mut pits = [0u8; PITS];
        for (k, (&v, pit)) in counts.iter().zip(&mut pits).enumerate() {
            if v < 0 {
                return Err(RulesError::NotASeedCount {
                    pit: Self::label(k),
                    value: v.to_string(),
                }
                .into());
            }
            if v > i64::from(MAX_SEEDS) {
                return Err(RulesError::PitOverflow {
                    pit: Self::label(k),
                    seeds: v,
                }
                .into());
            }
            *pit = v as u8;
        }
        Self::new(pits)
    }

    /// A position that is also in the index: at most 48 seeds and some
    /// opponent pit empty.
    pub fn indexable(pits: [u8; PITS]) -> Result<Self> {
        let p = Self::new(pits)?;
        if !p.is_indexable() {
            return Err(RulesError::OpponentFull.into());
        }
        Ok(p)
    }

    /// The label of pit `k` (0..12) of a board seen from its mover: the
    /// mover's `A`..`F`, then the opponent's `a`..`f`.
    pub fn label(k: usize) -> char {
        if k < 6 {
            (b'A' + k as u8) as char
        } else {
            (b'a' + (k - 6) as u8) as char
        }
    }
}

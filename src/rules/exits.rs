//! A position's exits (see [`crate::solve`]): the legal moves that leave
//! the layer or end the game at once, whose worth needs no table of the
//! position's own layer.

use super::{Position, Rules};

/// The exits of one position: the best of those whose worth needs no
/// table, and the captures whose worth needs their child's score.
///
/// The position's score is the larger of its best exit and its best
/// internal move: `score >= best exit` always.
#[derive(Clone, Copy, Debug)]
pub struct Exits {
    /// The best exit known without a table: `-n` when the mover has no
    /// seeds, `+n` when a move leaves the opponent without seeds (the
    /// capture plus every seed left), the final score when there is no
    /// legal move; `None` without such an exit.
    pub known: Option<i32>,
    captures: [(u8, Position); 6],
    len: u8,
}

impl Exits {
    /// The legal captures whose child's mover has seeds: seeds captured
    /// and the child (in layer `n - captured`, seen from its mover). Each
    /// is worth `captured - score(child)`.
    pub fn captures(&self) -> &[(u8, Position)] {
        &self.captures[..self.len as usize]
    }

    /// The best exit, valuing each capture's child with `child(layer,
    /// child)`; `None` if the position has no exit.
    pub fn best<E>(
        &self,
        n: u32,
        mut child: impl FnMut(u32, &Position) -> Result<i32, E>,
    ) -> Result<Option<i32>, E> {
        let mut best = self.known;
        for &(c, ref q) in self.captures() {
            let v = c as i32 - child(n - c as u32, q)?;
            best = Some(best.map_or(v, |b| b.max(v)));
        }
        Ok(best)
    }
}

impl Position {
    /// The exits of the position under `rules`, exactly as the solver
    /// values them.
    pub fn exits(&self, rules: &Rules) -> Exits {
        let n = self.seeds() as i32;
        let mut e = Exits {
            known: None,
            captures: [(0, Position::default()); 6],
            len: 0,
        };
        if self.mover_seeds() == 0 {
            // No move: the opponent takes everything left.
            e.known = Some(-n);
            return e;
        }
        let mut any = false;
        for m in self.moves(rules).legal() {
            any = true;
            if m.child.mover_seeds() == 0 {
                // The opponent is left without seeds: the mover gets the
                // capture plus every seed left.
                e.known = Some(n);
            } else if m.captured > 0 {
                e.captures[e.len as usize] = (m.captured, m.child);
                e.len += 1;
            }
        }
        if !any {
            // No legal move (mandatory feeding that cannot feed): each
            // side takes its own row.
            e.known = Some(self.final_score(rules));
        }
        e
    }
}

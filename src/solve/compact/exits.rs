//! The compact solver's exits: every position's forward facts (computed
//! once per layer), the exits passes that stream each lower table once and
//! hand each capture's value to its predecessors, and the exits sorted
//! into per-threshold lists.

use super::lists::{write_lists, Disk, List, Lists};
use super::{Lower, Ranks, CHUNK, MAX_CAPTURE, RECEIVED_BATCH, ROUND_CHUNKS};
use crate::comm::Part;
use crate::error::{Error, Result};
use crate::format::Kind;
use crate::index::{layer_size, rank, LayerIter};
use crate::mem::{prefetch, Buffer};
use crate::rules::{Position, Rules};
use crate::solve::kernel::BATCH;
use crate::solve::{dec, enc, Observer, NO_EXIT};
use rayon::prelude::*;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::Ordering::Relaxed;

/// A position's exits that need no lower layer, and its internal moves:
/// `NO_EXIT`, `-n` (no legal move, the mover has no seeds), or `+n` (a
/// move leaves the opponent empty, or under mandatory feeding no move
/// reaches an empty opponent: the mover keeps its row, every seed).
#[inline]
pub(super) fn forward(n: u32, rules: &Rules, p: &Position) -> (i32, u8) {
    let ni = n as i32;
    if p.mover_seeds() == 0 {
        return (-ni, 0);
    }
    let mut e = NO_EXIT;
    let mut internal = 0;
    let mut any = false;
    for m in p.moves(rules).legal() {
        any = true;
        if m.child.mover_seeds() == 0 {
            e = ni;
        } else if m.captured == 0 {
            internal += 1;
        }
    }
    if !any {
        e = p.final_score(rules);
    }
    (e, internal)
}

/// Every position's [`forward`] facts, computed once per layer and kept
/// in an unnamed scratch file, half a byte per position: 0..=6 internal
/// moves and no exit without a lower layer, 7 no move (`-n`), `8 + k` a
/// move that leaves the opponent empty (`+n`) and `k` internal moves (0
/// under awari and abapa, where then no move feeds the opponent; up to 5
/// under olympiad, a grand slam beside moves that feed, and awale, a move
/// that does not feed an empty opponent beside moves that do).
pub(super) struct Facts {
    pub(super) disk: Disk,
    /// The rule set of the layer.
    pub(super) rules: Rules,
    pub(super) file: File,
    pub(super) n: u32,
    /// The part of the layer they cover.
    pub(super) part: Part,
}

impl Drop for Facts {
    fn drop(&mut self) {
        self.disk.freed(self.part.len().div_ceil(2));
    }
}

pub(super) const NO_MOVE: u8 = 7;
pub(super) const EMPTIES: u8 = 8;

impl Facts {
    pub(super) fn compute(disk: &Disk, n: u32, rules: &Rules, part: Part) -> Result<Self> {
        let file = tempfile::tempfile_in(disk.dir()).map_err(|e| disk.err(e))?;
        (0..part.len().div_ceil(CHUNK))
            .into_par_iter()
            .try_for_each(|c| {
                let start = part.lo + c * CHUNK;
                let end = (start + CHUNK).min(part.hi);
                let mut out = vec![0u8; (end - start).div_ceil(2) as usize];
                for (g, p) in LayerIter::range(n, start, end) {
                    let (e, internal) = forward(n, rules, &p);
                    let v = match e {
                        NO_EXIT => internal,
                        e if e < 0 => NO_MOVE,
                        _ => EMPTIES + internal,
                    };
                    let o = (g - start) as usize;
                    out[o / 2] |= v << (o % 2 * 4);
                }
                disk.wrote(out.len() as u64);
                file.write_all_at(&out, (start - part.lo) / 2)
                    .map_err(|e| disk.err(e))
            })?;
        Ok(Facts {
            disk: disk.clone(),
            rules: *rules,
            file,
            n,
            part,
        })
    }

    /// The facts of positions `start..start + out.len()` of the part
    /// (`start` even), one per byte.
    pub(super) fn read(&self, disk: &Disk, start: u64, out: &mut [u8]) -> Result<()> {
        let mut packed = vec![0u8; out.len().div_ceil(2)];
        disk.0.read.fetch_add(packed.len() as u64, Relaxed);
        self.file
            .read_exact_at(&mut packed, (start - self.part.lo) / 2)
            .map_err(|e| disk.err(e))?;
        for (o, v) in out.iter_mut().enumerate() {
            *v = packed[o / 2] >> (o % 2 * 4) & 0xf;
        }
        Ok(())
    }

    /// The internal moves a fact counts.
    pub(super) fn internal(v: u8) -> u8 {
        match v {
            NO_MOVE => 0,
            EMPTIES.. => v - EMPTIES,
            k => k,
        }
    }

    /// The exit a fact stands for.
    pub(super) fn exit(&self, v: u8) -> i32 {
        match v {
            NO_MOVE => -(self.n as i32),
            EMPTIES.. => self.n as i32,
            _ => NO_EXIT,
        }
    }
}

/// Best exits of this rank's positions of layer `n` into `x` (encoded,
/// `enc`), capture children valued by table `kind` of the lower layers.
/// Each rank streams its share of every lower table and sends the exits it
/// finds for other ranks' positions to them, a round of chunks at a time.
pub(super) fn exits(
    disk: &Disk,
    ranks: Ranks,
    facts: &Facts,
    lower: &dyn Lower,
    kind: Kind,
    x: &mut Buffer,
    obs: &dyn Observer,
) -> Result<()> {
    let (n, part) = (facts.n, ranks.part);
    x.as_mut_slice()[..part.len() as usize]
        .par_chunks_mut(CHUNK as usize)
        .enumerate()
        .try_for_each(|(c, out)| {
            facts.read(disk, part.lo + c as u64 * CHUNK, out)?;
            for o in out.iter_mut() {
                *o = enc(facts.exit(*o));
            }
            Ok::<(), Error>(())
        })?;
    let xa = x.atomic();
    let lo = part.lo;
    let (me, nr) = (ranks.comm.rank() as u64, ranks.comm.size() as u64);
    for c in 2..=MAX_CAPTURE.min(n) {
        let k = n - c;
        if k == 47 {
            continue;
        }
        let ks = layer_size(k);
        let chunks = ks.div_ceil(CHUNK);
        // This rank's chunks of the lower table; every rank makes as many
        // rounds as the largest share needs (one round alone).
        let (from, to) = (me * chunks / nr, (me + 1) * chunks / nr);
        let per = if nr == 1 { chunks.max(1) } else { ROUND_CHUNKS };
        for round in 0..chunks.div_ceil(nr).div_ceil(per) {
            let a = (from + round * per).min(to);
            let b = (a + per).min(to);
            let remote: Vec<Vec<u64>> = (a..b)
                .into_par_iter()
                .map_init(
                    || (vec![0u8; CHUNK as usize], Vec::with_capacity(BATCH * 4)),
                    |(buf, batch), i| {
                        let start = i * CHUNK;
                        let end = (start + CHUNK).min(ks);
                        let buf = &mut buf[..(end - start) as usize];
                        lower.read(k, kind, start, buf)?;
                        disk.0.lower.fetch_add(buf.len() as u64, Relaxed);
                        let mut remote = Vec::new();
                        let flush = |batch: &mut Vec<(usize, u8)>| {
                            for &(i, v) in batch.iter() {
                                xa[i].fetch_max(v, Relaxed);
                            }
                            batch.clear();
                        };
                        for (g, child) in LayerIter::range(k, start, end) {
                            if child.mover_seeds() == 0 {
                                continue;
                            }
                            let v = enc(c as i32 - buf[(g - start) as usize] as i8 as i32);
                            child.for_each_capture_predecessor(c, |p| {
                                let g = rank(&p);
                                if part.has(g) {
                                    let i = (g - lo) as usize;
                                    prefetch(xa[i].as_ptr());
                                    batch.push((i, v));
                                } else {
                                    remote.push(g << 8 | v as u64);
                                }
                            });
                            if batch.len() >= BATCH {
                                flush(batch);
                            }
                        }
                        flush(batch);
                        Ok::<_, Error>(remote)
                    },
                )
                .collect::<Result<_, _>>()?;
            if nr > 1 {
                let got = ranks.exchange(disk, remote.concat(), 8)?;
                got.par_chunks(RECEIVED_BATCH).for_each(|ms| {
                    for &m in ms {
                        xa[((m >> 8) - lo) as usize].fetch_max(m as u8, Relaxed);
                    }
                });
            }
        }
    }
    obs.advance(part.len());
    Ok(())
}

/// The lists of one sweep: for each threshold `t` (at `n - t`), the
/// positions whose win exit is `t`, and those whose lose exit is `-t`;
/// the positions without any exit on the lose side (their flag is set
/// from the start).
pub(super) struct ExitLists {
    pub(super) win: Lists,
    pub(super) lose: Lists,
    pub(super) none: Option<List>,
}

/// Threshold range of a sweep: `n` down to `last`.
pub(super) fn last_threshold(n: u32, envelope: bool) -> i32 {
    if envelope {
        1 - n as i32
    } else {
        1
    }
}

/// Sorts exits `x` into threshold lists: `win` side, `lose` side, or both.
pub(super) fn sort_exits(
    disk: &Disk,
    n: u32,
    part: Part,
    last: i32,
    x: &mut Buffer,
    win: Option<&mut Lists>,
    lose: Option<(&mut Lists, &mut Option<List>)>,
) -> Result<()> {
    let ni = n as i32;
    let count = (ni - last + 1).max(0) as usize;
    let (want_win, want_lose) = (win.is_some(), lose.is_some());
    // Lists 0..count: win at threshold n - i; count..2 count: lose at
    // threshold n - (i - count); 2 count: no exit.
    let mut lists: Vec<List> = (0..2 * count + 1)
        .map(|_| List::new(disk))
        .collect::<Result<_, _>>()?;
    write_lists(
        disk,
        &mut lists,
        &mut x.as_mut_slice()[..part.len() as usize],
        part,
        |_, bytes, emit| {
            for (o, &b) in bytes.iter().enumerate() {
                let e = dec(b);
                if want_win && e >= last && e <= ni {
                    emit((ni - e) as usize, o as u32);
                }
                if want_lose {
                    if e == NO_EXIT {
                        emit(2 * count, o as u32);
                    } else if -e >= last && -e <= ni {
                        emit(count + (ni + e) as usize, o as u32);
                    }
                }
            }
        },
    )?;
    let none = lists.pop();
    let lose_lists: Lists = lists.drain(count..).map(Some).collect();
    let win_lists: Lists = lists.into_iter().map(Some).collect();
    if let Some(w) = win {
        *w = win_lists;
    }
    if let Some((l, nl)) = lose {
        *l = lose_lists;
        *nl = none;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under every rule set: every capture move of layers 2..=11 is found
    /// from its child, and every position the un-capture finds has that
    /// capture (the un-capture does not depend on the rule set: a capture
    /// whose child's mover has seeds is legal under both).
    #[test]
    pub(super) fn capture_predecessors_are_exactly_the_captures() {
        for rules in crate::rules::PRESETS {
            for n in 2..=11u32 {
                for (_, p) in LayerIter::new(n) {
                    for m in p.moves(&rules).legal() {
                        if m.captured > 0 && m.child.mover_seeds() > 0 {
                            let mut found = false;
                            m.child
                                .for_each_capture_predecessor(m.captured as u32, |q| {
                                    found |= q == p
                                });
                            assert!(found, "{p:?} pit {} not found from {:?}", m.pit, m.child);
                        }
                    }
                }
            }
            for k in 0..=9u32 {
                for (_, child) in LayerIter::new(k) {
                    for c in 2..=MAX_CAPTURE {
                        child.for_each_capture_predecessor(c, |p| {
                            assert!(p.is_indexable());
                            assert_eq!(p.seeds(), k + c);
                            assert!(
                                p.moves(&rules)
                                    .legal()
                                    .any(|m| m.child == child && m.captured as u32 == c),
                                "{rules}: {p:?} has no capture of {c} into {child:?}"
                            );
                        });
                    }
                }
            }
        }
    }
}

//! The compact state (one byte per position: counter, flag, and two bits
//! per side) and the threshold games on it: exit lists applied, the
//! settlements propagated through [`crate::solve::kernel`], updates for
//! other ranks exchanged, and each threshold's results harvested into
//! lists.

use super::exits::{ExitLists, Facts};
use super::lists::{for_each_index, segments, unpack, write_lists, Disk, List, Lists};
use super::{Ranks, APPLY_WINDOWS, CHUNK, RECEIVED_BATCH, WINDOW};
use crate::comm::Part;
use crate::error::{Error, Result};
use crate::index::unrank_unchecked;
use crate::mem::{prefetch, Buffer};
use crate::solve::kernel::{self, Item, Work};
use crate::solve::waves::{Exchange, Target, Waves};
use crate::solve::{Observer, Silent};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

pub(super) const CNT: u8 = 0x07;
pub(super) const FLAG: u8 = 0x08;
pub(super) const LOSE_NOW: u8 = 0x10;
pub(super) const LOSE_DONE: u8 = 0x20;
pub(super) const WIN_NOW: u8 = 0x40;
pub(super) const WIN_DONE: u8 = 0x80;
pub(super) const LOSE_BITS: u8 = LOSE_NOW | LOSE_DONE;
pub(super) const WIN_BITS: u8 = WIN_NOW | WIN_DONE;

/// One threshold game on the compact state of this rank's part.
pub(super) struct Sweep<'a> {
    pub(super) n: u32,
    /// The part's state: index `g` at `g - part.lo`.
    pub(super) st: &'a [AtomicU8],
    pub(super) part: Part,
    /// The score: one value per position, so settling either side settles
    /// both.
    pub(super) joint: bool,
    /// The rule set (for the predecessors).
    pub(super) rules: crate::rules::Rules,
    /// Propagation in waves ([`crate::solve::waves`]): what the exit
    /// lists settle is marked, not propagated.
    pub(super) waves: Option<&'a Waves>,
}

impl Sweep<'_> {
    #[inline(always)]
    pub(super) fn win_open(&self, b: u8) -> bool {
        b & if self.joint {
            WIN_BITS | LOSE_BITS
        } else {
            WIN_BITS
        } == 0
    }
    #[inline(always)]
    pub(super) fn lose_open(&self, b: u8) -> bool {
        b & if self.joint {
            WIN_BITS | LOSE_BITS
        } else {
            LOSE_BITS
        } == 0
    }
    #[inline(always)]
    pub(super) fn settle_win(&self, g: usize) -> bool {
        self.st[g]
            .fetch_update(Relaxed, Relaxed, |b| {
                self.win_open(b).then_some(b | WIN_NOW)
            })
            .is_ok()
    }
    #[inline(always)]
    pub(super) fn settle_lose(&self, g: usize) -> bool {
        self.st[g]
            .fetch_update(Relaxed, Relaxed, |b| {
                (self.lose_open(b) && b & CNT == 0 && b & FLAG != 0).then_some(b | LOSE_NOW)
            })
            .is_ok()
    }

    /// Applies an exit list at threshold `t`: `lose` lists set the flag
    /// (and settle a position with no child left), win lists settle.
    /// Returns the settlements and the updates for other ranks.
    /// With several ranks, the updates for other ranks go out after each
    /// group of windows (every rank makes as many rounds as the largest
    /// part needs), so they never pile up; those left are in `outbox`.
    pub(super) fn apply(
        &self,
        disk: &Disk,
        ranks: Ranks,
        list: &List,
        lose: bool,
        outbox: &mut Vec<u64>,
    ) -> Result<u64> {
        let part = self.part;
        let windows = part.windows() as usize;
        let several = ranks.comm.size() > 1;
        let groups = if several {
            part.most_windows() as usize
        } else {
            windows
        }
        .div_ceil(APPLY_WINDOWS);
        let mut total = 0;
        let mut bufs: Vec<(usize, Vec<u8>, usize)> = Vec::new();
        for first in (0..groups).map(|g| g * APPLY_WINDOWS) {
            bufs.clear();
            for w in first..(first + APPLY_WINDOWS).min(windows) {
                let mut buf = Vec::new();
                let raw = list.read_stored(disk, w, &mut buf)?;
                if !buf.is_empty() {
                    bufs.push((w, buf, raw));
                }
            }
            bufs.par_iter_mut()
                .try_for_each(|(_, buf, raw)| unpack(disk, buf, *raw))?;
            let segs: Vec<(u64, usize, &[u8])> = bufs
                .iter()
                .flat_map(|(w, buf, _)| segments(buf, part.lo + *w as u64 * WINDOW))
                .collect();
            let settle = |g: u64| {
                let i = (g - part.lo) as usize;
                if lose {
                    let old = self.st[i].fetch_or(FLAG, Relaxed);
                    old & CNT == 0 && self.lose_open(old) && self.settle_lose(i)
                } else {
                    self.settle_win(i)
                }
            };
            if let Some(waves) = self.waves {
                total += segs
                    .par_iter()
                    .map(|&(base, count, gaps)| {
                        let mut marked = 0;
                        for_each_index(base, count, gaps, |g| {
                            if settle(g) {
                                waves.mark(g - part.lo, lose);
                                marked += 1;
                            }
                        });
                        marked
                    })
                    .sum::<u64>();
                continue;
            }
            total += self.settle_each(&segs, outbox, |&(base, count, gaps), stack| {
                for_each_index(base, count, gaps, |g| {
                    if settle(g) {
                        stack.push(Item {
                            pos: unrank_unchecked(self.n, g),
                            lose,
                        });
                    }
                });
            });
            if several {
                total += self.round(disk, ranks, outbox)?;
            }
        }
        Ok(total)
    }

    /// What an update does to the predecessor at state offset `i`: a
    /// child settled on the lose side settles it on the win side; one
    /// settled on the win side takes one from its counter, which may settle
    /// it on the lose side. Returns the side it settled on (`true`: lose).
    #[inline(always)]
    pub(super) fn visit(&self, i: usize, from_lose: bool) -> Option<bool> {
        if from_lose {
            return self.settle_win(i).then_some(false);
        }
        let old = self.st[i].fetch_sub(1, Relaxed);
        (old & CNT == 1 && old & FLAG != 0 && self.lose_open(old) && self.settle_lose(i))
            .then_some(true)
    }

    /// Propagates the settlements on the stack to closure in this rank's
    /// part; updates of other ranks' positions go to `remote` as
    /// `g << 1 | from_lose`.
    pub(super) fn drain(&self, work: &mut Work, remote: &mut Vec<u64>) -> u64 {
        let part = self.part;
        let locate = |g: u64| {
            if part.has(g) {
                prefetch(self.st[(g - part.lo) as usize].as_ptr());
            }
            g as usize
        };
        kernel::drain(work, &self.rules, locate, |g, p, from_lose, stack| {
            let g = g as u64;
            if !part.has(g) {
                remote.push(g << 1 | from_lose as u64);
            } else if let Some(lose) = self.visit((g - part.lo) as usize, from_lose) {
                stack.push(Item { pos: p, lose });
            }
        })
    }

    /// Exchanges the updates for other ranks' positions until no rank has
    /// any left (at once with one rank). Returns the settlements.
    pub(super) fn settle_remote(
        &self,
        disk: &Disk,
        ranks: Ranks,
        mut outbox: Vec<u64>,
    ) -> Result<u64> {
        let mut total = 0;
        loop {
            let mut pending = [outbox.len() as u64];
            ranks.comm.sum(&mut pending)?;
            if pending[0] == 0 {
                return Ok(total);
            }
            total += self.round(disk, ranks, &mut outbox)?;
        }
    }

    /// One exchange: sends `outbox` to the owners, applies what arrives,
    /// and leaves in `outbox` the updates that causes for other ranks.
    /// Returns the settlements.
    pub(super) fn round(&self, disk: &Disk, ranks: Ranks, outbox: &mut Vec<u64>) -> Result<u64> {
        let lo = self.part.lo;
        let got = ranks.exchange(disk, std::mem::take(outbox), 1)?;
        let batches: Vec<&[u64]> = got.chunks(RECEIVED_BATCH).collect();
        Ok(self.settle_each(&batches, outbox, |ms, stack| {
            for &m in ms.iter() {
                let g = m >> 1;
                if let Some(lose) = self.visit((g - lo) as usize, m & 1 != 0) {
                    stack.push(Item {
                        pos: unrank_unchecked(self.n, g),
                        lose,
                    });
                }
            }
        }))
    }

    /// [`Sweep::visit`] by the one thread that applies `i`'s region: plain
    /// loads and stores.
    #[inline(always)]
    fn visit_owned(&self, i: usize, from_lose: bool) -> Option<bool> {
        let s = &self.st[i];
        let b = s.load(Relaxed);
        if from_lose {
            if !self.win_open(b) {
                return None;
            }
            s.store(b | WIN_NOW, Relaxed);
            return Some(false);
        }
        let b = b.wrapping_sub(1);
        if b & CNT == 0 && b & FLAG != 0 && self.lose_open(b) {
            s.store(b | LOSE_NOW, Relaxed);
            return Some(true);
        }
        s.store(b, Relaxed);
        None
    }

    /// Runs `seed` on every unit in parallel (it pushes the settlements it
    /// makes), propagates them to closure in this rank's part, and adds the
    /// updates for other ranks to `outbox`. Returns the settlements.
    pub(super) fn settle_each<T: Sync>(
        &self,
        units: &[T],
        outbox: &mut Vec<u64>,
        seed: impl Fn(&T, &mut Vec<Item>) + Sync,
    ) -> u64 {
        let done: Vec<(u64, Vec<u64>)> = units
            .par_iter()
            .map_init(Work::default, |work, u| {
                seed(u, &mut work.stack);
                let mut remote = Vec::new();
                let c = self.drain(work, &mut remote);
                (c, remote)
            })
            .collect();
        let mut total = 0;
        for (c, r) in done {
            total += c;
            outbox.extend(r);
        }
        total
    }
}

impl Target for Sweep<'_> {
    fn layer(&self) -> u32 {
        self.n
    }
    fn part(&self) -> Part {
        self.part
    }
    fn rules(&self) -> &crate::rules::Rules {
        &self.rules
    }
    #[inline(always)]
    fn prefetch(&self, i: u64) {
        prefetch(self.st[i as usize].as_ptr());
    }
    #[inline(always)]
    fn visit_owned(&self, i: u64, from_lose: bool) -> Option<bool> {
        Sweep::visit_owned(self, i as usize, from_lose)
    }
    fn drain(&self, work: &mut Work) -> u64 {
        // Only with one rank: every predecessor is this rank's.
        let mut remote = Vec::new();
        let count = Sweep::drain(self, work, &mut remote);
        debug_assert!(remote.is_empty());
        count
    }
}

/// The ranks, as the waves exchange updates with them.
struct Exchanger<'a> {
    disk: &'a Disk,
    ranks: Ranks<'a>,
}

impl Exchange for Exchanger<'_> {
    fn exchange(&self, out: Vec<u64>) -> Result<Vec<u64>> {
        self.ranks.exchange(self.disk, out, 1)
    }
    fn sum(&self, x: u64) -> Result<u64> {
        let mut v = [x];
        self.ranks.comm.sum(&mut v)?;
        Ok(v[0])
    }
}

/// One sweep: layer `n`, thresholds `n` down to `last`, the score's
/// single value (`joint`) or the envelope's two, and the settlements each
/// position can make (its progress units).
#[derive(Clone, Copy)]
pub(super) struct Game {
    pub(super) n: u32,
    pub(super) last: i32,
    pub(super) joint: bool,
    pub(super) per_position: u64,
    /// Propagation in waves.
    pub(super) waves: bool,
}

/// Runs one sweep (thresholds `n` down to `last`) on a fresh state; returns
/// the result lists (win side, lose side, per threshold at `n - t`) and the
/// settlements.
pub(super) fn sweep(
    disk: &Disk,
    ranks: Ranks,
    facts: &Facts,
    game: Game,
    mut lists: ExitLists,
    obs: &dyn Observer,
) -> Result<(Lists, Lists, u64)> {
    let Game {
        n,
        last,
        joint,
        per_position,
        waves,
    } = game;
    let part = ranks.part;
    let size = part.len();
    let waves = match waves {
        true => Some(Waves::new(size)?),
        false => None,
    };
    let mut pools = waves
        .as_ref()
        .map(|w| w.buckets.lock().expect("not poisoned"));
    let mut state = Buffer::zeroed(size.next_multiple_of(8) as usize)?;
    state.as_mut_slice()[..size as usize]
        .par_chunks_mut(CHUNK as usize)
        .enumerate()
        .try_for_each(|(c, out)| {
            facts.read(disk, part.lo + c as u64 * CHUNK, out)?;
            for o in out.iter_mut() {
                *o = Facts::internal(*o);
            }
            Ok::<(), Error>(())
        })?;
    let count = (n as i32 - last + 1).max(0) as usize;
    let mut rwin: Lists = (0..count).map(|_| None).collect();
    let mut rlose: Lists = (0..count).map(|_| None).collect();
    let mut total = 0;
    let middle = (n as i32 + last) / 2;
    for t in (last..=n as i32).rev() {
        if t == middle {
            let point = if joint { "mid-score" } else { "mid-envelope" };
            crate::fault::point(point, &n);
        }
        let ti = (n as i32 - t) as usize;
        let mut settled = 0;
        {
            let sw = Sweep {
                n,
                st: state.atomic(),
                part,
                joint,
                rules: facts.rules,
                waves: waves.as_ref(),
            };
            let mut outbox = Vec::new();
            // Every rank applies the same lists (a rank's part of a list
            // may be empty), so the rounds inside match.
            let mut apply = |l: Option<List>, lose: bool| -> Result<()> {
                if let Some(l) = l {
                    settled += sw.apply(disk, ranks, &l, lose, &mut outbox)?;
                }
                Ok(())
            };
            if ti == 0 {
                apply(lists.none.take(), true)?;
            }
            apply(lists.lose[ti].take(), true)?;
            apply(lists.win[ti].take(), false)?;
            if let (Some(waves), Some(pools)) = (&waves, pools.as_deref_mut()) {
                // What the lists marked, and what it sets off.
                settled = if ranks.comm.size() > 1 {
                    waves.run_ranks(pools, &sw, &Exchanger { disk, ranks }, settled)?
                } else {
                    waves.run(pools, &sw, settled, &Silent)
                };
            }
            settled += sw.settle_remote(disk, ranks, outbox)?;
        }
        if settled == 0 {
            continue;
        }
        total += settled;
        obs.advance(settled);
        // Harvest: list the positions settled at `t` and mark them done.
        let mut pair = [List::new(disk)?, List::new(disk)?];
        write_lists(
            disk,
            &mut pair,
            &mut state.as_mut_slice()[..size as usize],
            part,
            |_, bytes, emit| {
                const NOW: u64 = 0x5050_5050_5050_5050;
                let mut o = 0;
                while o < bytes.len() {
                    if o + 8 <= bytes.len() {
                        let w = u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
                        if w & NOW == 0 {
                            o += 8;
                            continue;
                        }
                    }
                    let end = (o + 8).min(bytes.len());
                    for (j, b) in bytes[o..end].iter_mut().enumerate() {
                        if *b & WIN_NOW != 0 {
                            emit(0, (o + j) as u32);
                            *b ^= WIN_NOW | WIN_DONE;
                        }
                        if *b & LOSE_NOW != 0 {
                            emit(1, (o + j) as u32);
                            *b ^= LOSE_NOW | LOSE_DONE;
                        }
                    }
                    o = end;
                }
            },
        )?;
        let [w, l] = pair;
        rwin[ti] = Some(w);
        rlose[ti] = Some(l);
    }
    obs.advance((size * per_position).saturating_sub(total));
    Ok((rwin, rlose, total))
}

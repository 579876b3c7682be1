//! Propagation in waves, for both solvers: the random updates of a
//! threshold's propagation applied a region of the state at a time.
//!
//! Depth-first propagation ([`crate::solve::kernel::drain`]) updates each predecessor
//! where it lies in the state, one random access each; above layer 24 the
//! state is past the reach of the TLB and each of those accesses costs
//! more the larger the layer. In waves, what a threshold settles by its
//! exits (the in-memory solver's scan, the compact solver's exit lists) is
//! marked in a bitmap of pending settlements (two bits a position, one a
//! side) instead of propagated. Then, wave by wave ([`Waves::run`]):
//!
//! - **generate**: each thread takes pending settlements of its share of
//!   the regions, clears their bits, and appends each predecessor update
//!   (its offset within its region and the side it comes from, 4 bytes) to
//!   its bucket for the region the predecessor lies in: a chain of blocks
//!   of [`BLOCK`] updates from the thread's fixed pool. A thread stops when
//!   its pool could not hold the next settlement's updates; what is left
//!   stays pending for the next wave;
//! - **apply**: the regions are applied in parallel, each by one thread
//!   alone (every thread's bucket for it), with plain loads and stores and
//!   the updates prefetched a few ahead; a region is 128 Ki positions (at
//!   most 384 KiB of state), so its updates stay within a core's cache and
//!   a few huge pages. What settles there is marked pending.
//!
//! When fewer than 8,192 settlements are pending, the rest of the
//! threshold goes depth-first.
//!
//! With several ranks (the compact solver's partitioned build), each rank
//! runs the waves on its part: a predecessor in another rank's part goes
//! to that rank as a message (its index and side, 8 bytes), the messages
//! of a wave are exchanged after it and bucketed and applied by their
//! owner like its own updates, and the ranks go on wave by wave until
//! none has a settlement pending (no depth-first end: every wave is a
//! step of every rank together).
//!
//! The set of positions that settle at each threshold does not depend on
//! the order of the updates, so the tables are the same bytes as
//! depth-first propagation gives, for any number of threads and ranks.
//!
//! Memory ([`bytes`]): the bitmap (0.25 bytes a position) and the
//! pools (0.2 bytes a position in all), counted by each solver's cost;
//! with several ranks, the messages of a wave too (a thread's at most a
//! quarter of its pool's updates). Waves are on for the in-memory sweeps
//! whose state is at least 4.5 GiB ([`on`]: the envelope's from layer 29,
//! the score's from 30); below, depth-first propagation is faster
//! (1.19x to 1.22x the whole layer at 25..=28, side by side). The compact solver's sweeps (one byte a
//! position) go in waves only when forced: they lost in every measurement
//! (0.91x side by side at layer 27, forced; layer 30 in waves took 1.32x
//! the depth-first time of an earlier build). `AWARI_WAVES=1` or `=0`
//! forces them on or off, in both solvers ([`forced`]; for measurements,
//! [docs/performance.md](../../docs/performance.md)).

use crate::comm::Part;
use crate::error::Result;
use crate::index::{rank_packed, unrank_unchecked};
use crate::mem::{prefetch, U32s, Words};
use crate::rules::Rules;
use crate::solve::kernel::{Item, Work};
use crate::solve::Observer;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Positions a region covers (a power of two).
const REGION: u64 = 1 << 17;
/// Updates a bucket block holds.
const BLOCK: usize = 128;
/// Below this many pending settlements, propagation goes depth-first.
const SMALL: u64 = 1 << 13;
/// The pools hold one byte for each this many positions of the layer.
const POSITIONS_A_POOL_BYTE: u64 = 5;
/// Blocks a thread's pool holds at least (more than one settlement's
/// updates).
const MIN_BLOCKS: usize = 256;
/// Sweeps whose state (3 bytes a position for the envelope, 2 for the
/// score) is at least this large propagate in waves: 4.5 GiB, above
/// layer 28's envelope (4.4 GB) and layer 29's score (4.1 GB);
/// depth-first propagation was measured faster up to layer 28
/// (docs/performance.md).
const FROM_STATE_BYTES: u64 = 9 << 29;
/// No block.
const NONE: u32 = u32::MAX;

/// Whether an in-memory sweep whose state takes `state` bytes propagates
/// in waves: by that size, unless [`forced`].
pub fn on(state: u64) -> bool {
    forced().unwrap_or(state >= FROM_STATE_BYTES)
}

/// What `AWARI_WAVES` says: `1` (on), `all` (on, and no threshold ends
/// depth-first: for the tests on small layers), `0` (off), or nothing.
pub fn forced() -> Option<bool> {
    match std::env::var("AWARI_WAVES").as_deref() {
        Ok("1" | "all") => Some(true),
        Ok("0") => Some(false),
        _ => None,
    }
}

/// Below this many pending settlements, a threshold ends depth-first.
fn small() -> u64 {
    match std::env::var("AWARI_WAVES").as_deref() {
        Ok("all") => 0,
        _ => SMALL,
    }
}

/// Bytes the waves of a sweep of `size` positions take on one of `ranks`
/// ranks: the pending bitmap (two bits a position, one a side: the score
/// sweep settles on both sides too), the pools, and each thread's bucket
/// heads; with several ranks, the updates for the other ranks of a wave
/// and those received (each about half the pools' bytes, by
/// [`REMOTE_SHARE`]).
pub fn bytes(size: u64, ranks: usize) -> u64 {
    let threads = rayon::current_num_threads() as u64;
    let regions = size.div_ceil(REGION);
    let blocks = pool_blocks(size, threads as usize) as u64;
    let pools = threads * blocks * BLOCK as u64 * 4;
    let exchanged = if ranks > 1 { pools } else { 0 };
    (size * 2).div_ceil(64) * 8
        + regions
        + pools
        + threads * (blocks * 4 + regions * 14)
        + exchanged
}

/// With several ranks, a thread's updates for other ranks in a wave are
/// at most this share of its pool's updates (at 8 bytes each, half its
/// bytes).
const REMOTE_SHARE: usize = 4;

/// Blocks of each thread's pool.
fn pool_blocks(size: u64, threads: usize) -> usize {
    let all = size / POSITIONS_A_POOL_BYTE / (BLOCK as u64 * 4);
    (all as usize / threads.max(1)).max(MIN_BLOCKS)
}

/// The pending settlements of a sweep in waves.
pub(super) struct Waves {
    /// Bit `g * 2 + lose`: position `g` settled on that side and its
    /// predecessors are still to update.
    bits: Words,
    /// Per region, whether it may hold pending bits.
    dirty: Vec<AtomicBool>,
    /// Pending bits in all.
    pending: AtomicU64,
    /// [`small`].
    small: u64,
    /// One pool a thread (taken by the sweep for its run).
    pub(super) buckets: std::sync::Mutex<Vec<Buckets>>,
}

impl Waves {
    /// No settlement pending, for a state of `size` positions.
    pub(super) fn new(size: u64) -> Result<Self> {
        let words = (size * 2).div_ceil(64) as usize;
        let regions = size.div_ceil(REGION) as usize;
        let threads = rayon::current_num_threads();
        let blocks = pool_blocks(size, threads);
        let buckets = (0..threads)
            .map(|_| Buckets::new(blocks, regions))
            .collect::<Result<_>>()?;
        Ok(Waves {
            bits: Words::zeroed(words)?,
            dirty: (0..regions).map(|_| AtomicBool::new(false)).collect(),
            pending: AtomicU64::new(0),
            small: small(),
            buckets: std::sync::Mutex::new(buckets),
        })
    }

    /// Marks the settlement of the position at state index `g` on the
    /// `<= -t` side (when `lose`) pending (not counted: [`Waves::run`] is
    /// told how many were marked).
    #[inline(always)]
    pub(super) fn mark(&self, g: u64, lose: bool) {
        let b = g * 2 + lose as u64;
        self.bits[(b / 64) as usize].fetch_or(1 << (b % 64), Relaxed);
        self.dirty[(g / REGION) as usize].store(true, Relaxed);
    }

    /// [`Waves::mark`] by the one thread applying `g`'s region.
    #[inline(always)]
    fn mark_owned(&self, g: u64, lose: bool) {
        let b = g * 2 + lose as u64;
        let w = &self.bits[(b / 64) as usize];
        w.store(w.load(Relaxed) | 1 << (b % 64), Relaxed);
    }

    /// The words of region `r`'s bits.
    fn words(&self, r: usize) -> std::ops::Range<usize> {
        let per = (REGION * 2 / 64) as usize;
        r * per..((r + 1) * per).min(self.bits.len())
    }
}

/// What an update does to a solver's state, and (with several ranks)
/// how updates reach the other ranks.
pub trait Target: Sync {
    /// The layer.
    fn layer(&self) -> u32;
    /// The part of the layer the state holds: index `part.lo + i` at
    /// state index `i`.
    fn part(&self) -> Part;
    /// The rule set (for the predecessors).
    fn rules(&self) -> &Rules;
    /// Asks for the state of state index `i`.
    fn prefetch(&self, i: u64);
    /// An update of state index `i` from a settlement on the `<= -t` side
    /// when `from_lose`, by the one thread that applies `i`'s region:
    /// `Some(side)` when `i` settles (on the `<= -t` side when `side`).
    fn visit_owned(&self, i: u64, from_lose: bool) -> Option<bool>;
    /// Propagates the settlements on `work`'s stack depth-first to
    /// closure; returns them (one rank only).
    fn drain(&self, work: &mut Work) -> u64;
}

/// How the ranks' waves reach each other ([`Waves::run_ranks`]; every
/// rank calls these together, from one thread).
pub trait Exchange {
    /// Sends each update (`g << 1 | from_lose`, `g` an index of another
    /// rank's part) to its owner; returns the updates the others sent
    /// here.
    fn exchange(&self, out: Vec<u64>) -> Result<Vec<u64>>;
    /// The sum of `x` over the ranks.
    fn sum(&self, x: u64) -> Result<u64>;
}

/// A thread's updates waiting, by region: a chain of blocks each.
pub(super) struct Buckets {
    /// `BLOCK` updates a block: offset in the region `<< 1 | from_lose`.
    pool: U32s,
    /// The block after each block of a chain.
    next: Vec<u32>,
    /// Blocks handed out in this wave.
    used: usize,
    /// Per region: the first and last block of its chain, and the updates
    /// in the last.
    first: Vec<u32>,
    last: Vec<u32>,
    fill: Vec<u16>,
    /// Regions whose chain is not empty.
    touched: Vec<u32>,
    /// Updates for other ranks (`g << 1 | from_lose`), and how many a
    /// wave may make.
    remote: Vec<u64>,
    remote_cap: usize,
}

impl Buckets {
    fn new(blocks: usize, regions: usize) -> Result<Self> {
        Ok(Buckets {
            pool: U32s::zeroed(blocks * BLOCK)?,
            next: vec![NONE; blocks],
            used: 0,
            first: vec![NONE; regions],
            last: vec![NONE; regions],
            fill: vec![0; regions],
            touched: Vec::with_capacity(regions),
            remote: Vec::new(),
            remote_cap: blocks * BLOCK / REMOTE_SHARE,
        })
    }

    /// Whether an update of region `r` fits.
    fn fits(&self, r: usize) -> bool {
        self.free() > 0 || (self.first[r] != NONE && (self.fill[r] as usize) < BLOCK)
    }

    /// Blocks still free.
    fn free(&self) -> usize {
        self.next.len() - self.used
    }

    /// Appends `e` to region `r`'s chain (a block must be free).
    #[inline(always)]
    fn push(&mut self, r: usize, e: u32) {
        if self.first[r] == NONE || self.fill[r] as usize == BLOCK {
            let b = self.used as u32;
            self.used += 1;
            self.next[b as usize] = NONE;
            if self.first[r] == NONE {
                self.first[r] = b;
                self.touched.push(r as u32);
            } else {
                self.next[self.last[r] as usize] = b;
            }
            self.last[r] = b;
            self.fill[r] = 0;
        }
        let at = self.last[r] as usize * BLOCK + self.fill[r] as usize;
        self.pool[at] = e;
        self.fill[r] += 1;
    }

    /// Every chain emptied.
    fn clear(&mut self) {
        for r in self.touched.drain(..) {
            self.first[r as usize] = NONE;
        }
        self.used = 0;
    }

    /// Region `r`'s updates, block by block.
    fn chain(&self, r: usize) -> impl Iterator<Item = &[u32]> {
        let mut b = self.first[r];
        std::iter::from_fn(move || {
            if b == NONE {
                return None;
            }
            let len = if b == self.last[r] {
                self.fill[r] as usize
            } else {
                BLOCK
            };
            let at = b as usize * BLOCK;
            b = self.next[b as usize];
            Some(&self.pool[at..at + len])
        })
    }
}

impl Waves {
    /// Settles, wave by wave, what the `marked` pending settlements set
    /// off in `target`'s state ([module docs](self)), with one pool of
    /// `buckets` a thread; returns the settlements propagated (the marked
    /// ones and those they caused).
    pub fn run(
        &self,
        buckets: &mut [Buckets],
        target: &impl Target,
        marked: u64,
        obs: &dyn Observer,
    ) -> u64 {
        self.pending.store(marked, Relaxed);
        let regions = self.dirty.len();
        let mut total = 0;
        // A wave that took nothing (no pool could hold a settlement's
        // updates) hands the rest to depth-first propagation, which needs
        // no pool: the threshold always ends.
        let mut stalled = false;
        loop {
            let pending = self.pending.load(Relaxed);
            if pending == 0 {
                break;
            }
            if pending < self.small || stalled {
                let count: u64 = (0..regions)
                    .into_par_iter()
                    .filter(|&r| self.dirty[r].load(Relaxed))
                    .map(|r| {
                        let mut work = Work::default();
                        self.take(target, r, &mut work.stack);
                        target.drain(&mut work)
                    })
                    .sum();
                obs.advance(count);
                total += count;
                break;
            }
            let threads = buckets.len();
            let consumed: u64 = buckets
                .par_iter_mut()
                .enumerate()
                .map(|(k, b)| self.generate(target, b, k, threads))
                .sum();
            let settled = self.apply_all(target, buckets);
            self.pending.store(pending - consumed + settled, Relaxed);
            stalled = consumed == 0;
            obs.advance(consumed);
            total += consumed;
        }
        total
    }

    /// [`Waves::run`] with several ranks: after each wave the updates for
    /// other ranks are exchanged and applied (bucketed a pool's worth at a
    /// time), until no rank has a settlement pending. Every wave is a step
    /// of every rank together, so the threshold has no depth-first end.
    pub fn run_ranks(
        &self,
        buckets: &mut [Buckets],
        target: &impl Target,
        ranks: &dyn Exchange,
        marked: u64,
    ) -> Result<u64> {
        self.pending.store(marked, Relaxed);
        let threads = buckets.len();
        let lo = target.part().lo;
        let mut total = 0;
        loop {
            let pending = self.pending.load(Relaxed);
            let consumed: u64 = buckets
                .par_iter_mut()
                .enumerate()
                .map(|(k, b)| self.generate(target, b, k, threads))
                .sum();
            let out: Vec<u64> = buckets
                .iter_mut()
                .flat_map(|b| b.remote.drain(..))
                .collect();
            let mut settled = self.apply_all(target, buckets);
            let got = ranks.exchange(out)?;
            // Each thread buckets its share of what came, as much as its
            // pool holds, until all of it is applied.
            let per = got.len().div_ceil(threads).max(1);
            let mut shares: Vec<&[u64]> = got.chunks(per).collect();
            shares.resize(threads, &[]);
            while shares.iter().any(|s| !s.is_empty()) {
                buckets
                    .par_iter_mut()
                    .zip(shares.par_iter_mut())
                    .for_each(|(b, share)| {
                        let mut k = 0;
                        for &m in share.iter() {
                            let i = (m >> 1) - lo;
                            let r = (i / REGION) as usize;
                            if !b.fits(r) {
                                break;
                            }
                            b.push(r, ((i % REGION) as u32) << 1 | (m & 1) as u32);
                            k += 1;
                        }
                        *share = &share[k..];
                    });
                settled += self.apply_all(target, buckets);
            }
            let left = pending - consumed + settled;
            self.pending.store(left, Relaxed);
            total += consumed;
            if ranks.sum(left)? == 0 {
                return Ok(total);
            }
        }
    }

    /// The applying step of a wave for every region; the pools emptied.
    /// Returns the settlements made.
    fn apply_all(&self, target: &impl Target, buckets: &mut [Buckets]) -> u64 {
        let full = &*buckets;
        let settled = (0..self.dirty.len())
            .into_par_iter()
            .map(|r| self.apply(target, full, r))
            .sum();
        buckets.par_iter_mut().for_each(Buckets::clear);
        settled
    }

    /// Region `r`'s pending settlements onto `out`, their bits cleared.
    fn take(&self, target: &impl Target, r: usize, out: &mut Vec<Item>) {
        let (n, first) = (target.layer(), target.part().lo);
        for wi in self.words(r) {
            let mut word = self.bits[wi].swap(0, Relaxed);
            while word != 0 {
                let b = wi as u64 * 64 + word.trailing_zeros() as u64;
                out.push(Item {
                    pos: unrank_unchecked(n, first + b / 2),
                    lose: b % 2 == 1,
                });
                word &= word - 1;
            }
        }
        self.dirty[r].store(false, Relaxed);
    }

    /// The generating step of a wave for thread `k` of `threads`: the
    /// pending settlements of regions `k`, `k + threads`, ... until its
    /// pool is full, their updates appended to `b`; returns the
    /// settlements taken.
    fn generate(&self, target: &impl Target, b: &mut Buckets, k: usize, threads: usize) -> u64 {
        let (n, part, rules) = (target.layer(), target.part(), target.rules());
        let mut preds: Vec<u64> = Vec::with_capacity(64);
        let mut count = 0;
        for r in (k..self.dirty.len()).step_by(threads) {
            if !self.dirty[r].load(Relaxed) {
                continue;
            }
            for wi in self.words(r) {
                if wi % 8 == 0 {
                    // The bitmap is read in order: its line 8 ahead.
                    prefetch(self.bits.as_ptr().wrapping_add(wi + 64) as *const u8);
                }
                let mut word = self.bits[wi].load(Relaxed);
                while word != 0 {
                    let bit = wi as u64 * 64 + word.trailing_zeros() as u64;
                    let (g, lose) = (bit / 2, bit % 2 == 1);
                    preds.clear();
                    unrank_unchecked(n, part.lo + g)
                        .for_each_predecessor_packed(rules, |p| preds.push(rank_packed(p)));
                    if b.free() < preds.len() || b.remote.len() + preds.len() > b.remote_cap {
                        // The pool is full: the rest waits for a later wave.
                        self.bits[wi].store(word, Relaxed);
                        return count;
                    }
                    for &q in &preds {
                        if !part.has(q) {
                            b.remote.push(q << 1 | lose as u64);
                            continue;
                        }
                        let i = q - part.lo;
                        b.push(
                            (i / REGION) as usize,
                            ((i % REGION) as u32) << 1 | lose as u32,
                        );
                    }
                    word &= word - 1;
                    count += 1;
                }
                self.bits[wi].store(0, Relaxed);
            }
            self.dirty[r].store(false, Relaxed);
        }
        count
    }

    /// The applying step of a wave for region `r` (by one thread alone):
    /// every thread's updates of the region; returns the settlements made.
    fn apply(&self, target: &impl Target, buckets: &[Buckets], r: usize) -> u64 {
        const AHEAD: usize = 16;
        let base = r as u64 * REGION;
        let at = |e: u32| base + (e >> 1) as u64;
        let mut settled = 0;
        for b in buckets {
            for block in b.chain(r) {
                for (k, &e) in block.iter().enumerate() {
                    if let Some(&a) = block.get(k + AHEAD) {
                        // Its state, and its pending bit (marked if it
                        // settles).
                        target.prefetch(at(a));
                        prefetch(
                            self.bits.as_ptr().wrapping_add((at(a) / 32) as usize) as *const u8
                        );
                    }
                    if let Some(lose) = target.visit_owned(at(e), e & 1 != 0) {
                        self.mark_owned(at(e), lose);
                        settled += 1;
                    }
                }
            }
        }
        if settled > 0 {
            self.dirty[r].store(true, Relaxed);
        }
        settled
    }
}

//! Propagation in waves: the random updates of a threshold's propagation
//! applied a region of the state at a time.
//!
//! Depth-first propagation ([`Sweep::drain`]) updates each predecessor
//! where it lies in the state, one random access each; above layer 24 the
//! state is past the reach of the TLB and each of those accesses costs
//! more the larger the layer. In waves, a threshold's scan marks what
//! settles in a bitmap of pending settlements (two bits a position, one a
//! side) instead of propagating it. Then, wave by
//! wave:
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
//! threshold goes depth-first. The set of positions that settle at each
//! threshold does not depend on the order of the updates, so the tables
//! are the same bytes as depth-first propagation gives, for any number of
//! threads.
//!
//! Memory ([`bytes`]): the bitmap (0.25 bytes a position) and the
//! pools (0.2 bytes a position in all), within the 3.5 bytes a position the
//! solver may use. Waves are on for the sweeps whose state is at least
//! 1.5 GiB ([`on`]: the envelope's from layer 25, the score's from 26);
//! `AWARI_WAVES=1` or `=0` forces them on or off (for measurements,
//! [docs/performance.md](../../../docs/performance.md)).

use super::sweep::{Patterns, Sweep};
use super::CHUNK;
use crate::error::Result;
use crate::index::{layer_size, rank_packed, unrank_unchecked};
use crate::mem::{prefetch, U32s, Words};
use crate::solve::kernel::{Item, Work};
use crate::solve::Observer;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Positions a region covers (a power of two, a multiple of [`CHUNK`]).
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
/// score) is at least this large propagate in waves.
const FROM_STATE_BYTES: u64 = 3 << 29;
/// No block.
const NONE: u32 = u32::MAX;

/// Whether a sweep of layer `n` whose state holds `stride` bytes a
/// position (3 for the envelope, 2 for the score) propagates in waves: by
/// the size of that state, unless `AWARI_WAVES` is `1` (on), `all` (on,
/// and no threshold ends depth-first: for the tests on small layers) or
/// `0` (off).
pub fn on(n: u32, stride: u64) -> bool {
    match std::env::var("AWARI_WAVES").as_deref() {
        Ok("1" | "all") => true,
        Ok("0") => false,
        _ => layer_size(n) * stride >= FROM_STATE_BYTES,
    }
}

/// Below this many pending settlements, a threshold ends depth-first.
fn small() -> u64 {
    match std::env::var("AWARI_WAVES").as_deref() {
        Ok("all") => 0,
        _ => SMALL,
    }
}

/// Bytes the waves add to the solver of layer `n` (0 when no sweep of it
/// propagates in waves):
/// the pending bitmap (two bits a position, one a side: the score sweep
/// settles on both sides too), the pools, and each thread's bucket heads.
pub fn bytes(n: u32, envelope: bool) -> u64 {
    // The envelope's sweep has the larger state: waves for the score
    // alone come only with waves for the envelope.
    if !on(n, if envelope { 3 } else { 2 }) {
        return 0;
    }
    let size = layer_size(n);
    let threads = rayon::current_num_threads() as u64;
    let regions = size.div_ceil(REGION);
    let blocks = pool_blocks(size, threads as usize) as u64;
    (size * 2).div_ceil(64) * 8
        + regions
        + threads * (blocks * (BLOCK as u64 * 4 + 4) + regions * 14)
}

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
    /// No settlement pending, for a layer of `size` positions.
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

    /// Marks `g`'s settlement on the `<= -t` side (when `lose`) pending
    /// (not counted in `pending`: the callers add their marks).
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
        })
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

impl Sweep<'_> {
    /// Settles everything that settles at threshold `t`: the scan marks
    /// what settles by exits and waits, then waves propagate it
    /// ([module docs](self)); returns the settlements made.
    pub(super) fn threshold_in_waves(
        &self,
        waves: &Waves,
        buckets: &mut [Buckets],
        t: i32,
        patterns: &Patterns,
        obs: &dyn Observer,
    ) -> u64 {
        let size = self.size;
        let marked: u64 = (0..size.div_ceil(CHUNK))
            .into_par_iter()
            .map_init(Work::default, |work, c| {
                let first = c * CHUNK;
                let end = (first + CHUNK).min(size);
                let mut count = 0;
                for lo in (first..end).step_by(super::SUB as usize) {
                    if self.masks.has((lo / super::SUB) as usize, t) {
                        let hi = (lo + super::SUB).min(end);
                        count += self.scan_any::<true>(work, lo, hi, t, patterns);
                    }
                }
                count
            })
            .sum();
        waves.pending.store(marked, Relaxed);
        let regions = waves.dirty.len();
        let mut total = 0;
        // A wave that took nothing (no pool could hold a settlement's
        // updates) hands the rest to depth-first propagation, which needs
        // no pool: the threshold always ends.
        let mut stalled = false;
        loop {
            let pending = waves.pending.load(Relaxed);
            if pending == 0 {
                break;
            }
            if pending < waves.small || stalled {
                let count: u64 = (0..regions)
                    .into_par_iter()
                    .filter(|&r| waves.dirty[r].load(Relaxed))
                    .map(|r| {
                        let mut work = Work::default();
                        self.take(waves, r, &mut work.stack);
                        self.drain(&mut work, t)
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
                .map(|(k, b)| self.generate(waves, b, k, threads))
                .sum();
            let full = &*buckets;
            let settled: u64 = (0..regions)
                .into_par_iter()
                .map(|r| self.apply(waves, full, r, t))
                .sum();
            buckets.par_iter_mut().for_each(Buckets::clear);
            waves.pending.store(pending - consumed + settled, Relaxed);
            stalled = consumed == 0;
            obs.advance(consumed);
            total += consumed;
        }
        total
    }

    /// Region `r`'s pending settlements onto `out`, their bits cleared.
    fn take(&self, waves: &Waves, r: usize, out: &mut Vec<Item>) {
        for wi in waves.words(r) {
            let mut word = waves.bits[wi].swap(0, Relaxed);
            while word != 0 {
                let b = wi as u64 * 64 + word.trailing_zeros() as u64;
                out.push(Item {
                    pos: unrank_unchecked(self.n, b / 2),
                    lose: b % 2 == 1,
                });
                word &= word - 1;
            }
        }
        waves.dirty[r].store(false, Relaxed);
    }

    /// The generating step of a wave for thread `k` of `threads`: the
    /// pending settlements of regions `k`, `k + threads`, ... until its
    /// pool is full, their updates appended to `b`; returns the
    /// settlements taken.
    fn generate(&self, waves: &Waves, b: &mut Buckets, k: usize, threads: usize) -> u64 {
        let mut preds: Vec<u64> = Vec::with_capacity(64);
        let mut count = 0;
        for r in (k..waves.dirty.len()).step_by(threads) {
            if !waves.dirty[r].load(Relaxed) {
                continue;
            }
            for wi in waves.words(r) {
                let mut word = waves.bits[wi].load(Relaxed);
                while word != 0 {
                    let bit = wi as u64 * 64 + word.trailing_zeros() as u64;
                    let (g, lose) = (bit / 2, bit % 2 == 1);
                    preds.clear();
                    unrank_unchecked(self.n, g)
                        .for_each_predecessor_packed(&self.rules, |p| preds.push(rank_packed(p)));
                    if b.free() < preds.len() {
                        // The pool is full: the rest waits for a later wave.
                        waves.bits[wi].store(word, Relaxed);
                        return count;
                    }
                    for &q in &preds {
                        let e = ((q % REGION) as u32) << 1 | lose as u32;
                        b.push((q / REGION) as usize, e);
                    }
                    word &= word - 1;
                    count += 1;
                }
                waves.bits[wi].store(0, Relaxed);
            }
            waves.dirty[r].store(false, Relaxed);
        }
        count
    }

    /// The applying step of a wave for region `r` (by one thread alone):
    /// every thread's updates of the region; returns the settlements made.
    fn apply(&self, waves: &Waves, buckets: &[Buckets], r: usize, t: i32) -> u64 {
        const AHEAD: usize = 16;
        let base = r as u64 * REGION;
        let at = |e: u32| (base + (e >> 1) as u64) as usize * self.stride;
        let mut settled = 0;
        for b in buckets {
            for block in b.chain(r) {
                for (k, &e) in block.iter().enumerate() {
                    if let Some(&a) = block.get(k + AHEAD) {
                        prefetch(self.st[at(a) / 8].as_ptr() as *const u8);
                    }
                    if let Some(lose) = self.visit::<true>(at(e), e & 1 != 0, t) {
                        waves.mark_owned(base + (e >> 1) as u64, lose);
                        settled += 1;
                    }
                }
            }
        }
        if settled > 0 {
            waves.dirty[r].store(true, Relaxed);
        }
        settled
    }
}

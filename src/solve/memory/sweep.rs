//! The in-memory solver's threshold sweeps: the scan of each threshold
//! (8 positions compared at once, blocks skipped by their masks) and the
//! propagation of what settles (through [`crate::solve::kernel`]).

use super::{CHUNK, CNT, SETTLED, SUB};
use crate::index::unrank_unchecked;
use crate::mem::prefetch;
use crate::solve::kernel::{drain, Item, Work, BATCH};
use crate::solve::waves::{Target, Waves};
use crate::solve::{dec, enc, Observer};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One threshold game: `win` holds the `>= t` side, `lose` the `<= -t` side
/// (the same array for the score), `cnt >> shift & 7` the internal children
/// not yet known to be `>= t`.
pub(super) struct Sweep<'a> {
    pub(super) n: u32,
    /// Positions in the layer.
    pub(super) size: u64,
    /// Interleaved state, `stride` bytes per position, as 64-bit words
    /// (padded to whole groups of 8 positions): every access is a word
    /// access, so the scan can read eight positions' bytes at once while
    /// other threads update single bytes.
    pub(super) st: &'a [AtomicU64],
    pub(super) stride: usize,
    pub(super) win: usize,
    pub(super) lose: usize,
    pub(super) shift: u32,
    /// Lowest threshold of the sweep.
    pub(super) last: i32,
    pub(super) masks: Masks,
    /// Settlements each position can make in this sweep (the progress
    /// units of the sweep, per position).
    pub(super) per_position: u64,
    /// The rule set (for the predecessors).
    pub(super) rules: crate::rules::Rules,
    /// Propagation in waves ([`crate::solve::waves`]) rather than
    /// depth-first.
    pub(super) waves: Option<&'a Waves>,
}

/// Per `SUB` positions, the thresholds at which a scan of them can
/// find something: bit `t + 64` is set when some position of the chunk has
/// a `>= t` exit equal to `t`, or waits (all internal children known, exits
/// too high so far) to settle at `-t`. Chunks without the bit are skipped.
pub(super) struct Masks(Vec<[AtomicU64; 2]>);

impl Masks {
    pub(super) fn new(chunks: u64) -> Self {
        Masks((0..chunks).map(|_| Default::default()).collect())
    }
    #[inline]
    fn set(&self, chunk: usize, t: i32) {
        let b = (t + 64) as usize;
        self.0[chunk][b / 64].fetch_or(1 << (b % 64), Relaxed);
    }
    /// Sets a whole chunk's bits at once.
    pub(super) fn store(&self, chunk: usize, bits: u128) {
        self.0[chunk][0].store(bits as u64, Relaxed);
        self.0[chunk][1].store((bits >> 64) as u64, Relaxed);
    }
    #[inline]
    pub(super) fn has(&self, chunk: usize, t: i32) -> bool {
        let b = (t + 64) as usize;
        self.0[chunk][b / 64].load(Relaxed) >> (b % 64) & 1 != 0
    }
}

/// Bit of threshold `t` in a chunk's mask, if `t` is one the sweep visits.
#[inline]
pub(super) fn bit(t: i32, n: u32, last: i32) -> u128 {
    if t >= last && t <= n as i32 {
        1u128 << (t + 64)
    } else {
        0
    }
}

/// `0x80` in each byte of `x` that is zero, `0` elsewhere (exact).
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// Positions the scan looks at together: 8 positions are `stride` words.
pub(super) const GROUP: u64 = 8;

/// Per word of a group of 8 positions (at most 3 words): the byte a scan
/// looks for in the group's `>= t` lanes and in its `<= -t` lanes, and
/// 0x01 in the other lanes (never zero after the exclusive or). When the
/// two sides are different lanes (the envelope), `want_win` and
/// `other_win` look for both at once and the `lose` pair is not used.
#[derive(Clone, Copy, Default)]
pub(super) struct Patterns {
    want_win: [u64; 3],
    want_lose: [u64; 3],
    other_win: [u64; 3],
    other_lose: [u64; 3],
}

impl Sweep<'_> {
    /// Byte `i` of the state.
    #[inline(always)]
    fn byte(&self, i: usize) -> u8 {
        (self.st[i / 8].load(Relaxed) >> (i % 8 * 8)) as u8
    }

    /// Sets byte `i` from `old` to `new` unless it is no longer `old`
    /// (another thread settled it first); whether it did. `OWNED`: no other
    /// thread touches the word now (a region being applied), so a plain
    /// load and store do.
    #[inline(always)]
    fn claim<const OWNED: bool>(&self, i: usize, old: u8, new: u8) -> bool {
        let shift = i % 8 * 8;
        let word = &self.st[i / 8];
        if OWNED {
            let cur = word.load(Relaxed);
            if (cur >> shift) as u8 != old {
                return false;
            }
            word.store((cur & !(0xff << shift)) | (new as u64) << shift, Relaxed);
            return true;
        }
        let mut cur = word.load(Relaxed);
        loop {
            if (cur >> shift) as u8 != old {
                return false;
            }
            let next = (cur & !(0xff << shift)) | (new as u64) << shift;
            match word.compare_exchange_weak(cur, next, Relaxed, Relaxed) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// Subtracts one from the counter at `self.shift` in byte `i` (it is
    /// never 0 there, so nothing borrows from the neighbouring bits); the
    /// byte before. `OWNED` as for [`Sweep::claim`].
    #[inline(always)]
    fn take_counter<const OWNED: bool>(&self, i: usize) -> u8 {
        let shift = i % 8 * 8;
        if OWNED {
            let w = &self.st[i / 8];
            let cur = w.load(Relaxed);
            w.store(cur - (1 << (shift as u32 + self.shift)), Relaxed);
            return (cur >> shift) as u8;
        }
        (self.st[i / 8].fetch_sub(1 << (shift as u32 + self.shift), Relaxed) >> shift) as u8
    }

    /// The words a scan at threshold `t` compares a group's words with.
    pub(super) fn patterns(&self, t: i32) -> Patterns {
        let mut p = Patterns::default();
        for j in 0..GROUP as usize * self.stride {
            let (k, b) = (j / 8, j % 8 * 8);
            let lane = j % self.stride;
            if lane == self.win {
                p.want_win[k] |= (enc(t) as u64) << b;
            } else {
                p.other_win[k] |= 1 << b;
            }
            if lane == self.lose {
                p.want_lose[k] |= (enc(-t) as u64) << b;
            } else {
                p.other_lose[k] |= 1 << b;
            }
        }
        if self.win != self.lose {
            for k in 0..3 {
                p.want_win[k] |= p.want_lose[k];
                p.other_win[k] &= p.other_lose[k];
            }
        }
        p
    }

    /// Runs thresholds `n` down to `last`; returns the settlements made.
    pub(super) fn run(&self, obs: &dyn Observer) -> u64 {
        let size = self.size;
        let chunks = size.div_ceil(CHUNK);
        let total = AtomicU64::new(0);
        let middle = (self.n as i32 + self.last) / 2;
        let mut pools = self.waves.map(|w| w.buckets.lock().expect("not poisoned"));
        for t in (self.last..=self.n as i32).rev() {
            if t == middle {
                let point = if self.last < 1 {
                    "mid-envelope"
                } else {
                    "mid-score"
                };
                crate::fault::point(point, &self.n);
            }
            let patterns = self.patterns(t);
            if let (Some(waves), Some(pools)) = (self.waves, pools.as_deref_mut()) {
                let marked = self.mark_all(t, &patterns);
                let count = waves.run(pools, &At { sweep: self, t }, marked, obs);
                total.fetch_add(count, Relaxed);
                continue;
            }
            (0..chunks)
                .into_par_iter()
                .for_each_init(Work::default, |work, c| {
                    let mut count = 0u64;
                    let first = c * CHUNK;
                    let end = (first + CHUNK).min(size);
                    let subs = (first..end).step_by(SUB as usize);
                    for lo in subs.filter(|&lo| self.masks.has((lo / SUB) as usize, t)) {
                        let hi = (lo + SUB).min(end);
                        count += self.scan_any::<false>(work, lo, hi, t, &patterns);
                    }
                    count += self.drain(work, t);
                    if count > 0 {
                        total.fetch_add(count, Relaxed);
                        obs.advance(count);
                    }
                });
        }
        let total = total.into_inner();
        // Positions that never settled (their value depends on the cycle
        // rule) complete the sweep's share of the work.
        obs.advance((size * self.per_position).saturating_sub(total));
        total
    }

    /// Scans every chunk whose mask has threshold `t` and marks what
    /// settles for the waves ([`Sweep::scan`] with `DEFER`); returns the
    /// settlements marked.
    fn mark_all(&self, t: i32, patterns: &Patterns) -> u64 {
        let size = self.size;
        (0..size.div_ceil(CHUNK))
            .into_par_iter()
            .map_init(Work::default, |work, c| {
                let first = c * CHUNK;
                let end = (first + CHUNK).min(size);
                let mut count = 0;
                for lo in (first..end).step_by(SUB as usize) {
                    if self.masks.has((lo / SUB) as usize, t) {
                        let hi = (lo + SUB).min(end);
                        count += self.scan_any::<true>(work, lo, hi, t, patterns);
                    }
                }
                count
            })
            .sum()
    }

    /// [`Sweep::scan`] for either kind of sweep.
    #[inline]
    pub(super) fn scan_any<const DEFER: bool>(
        &self,
        work: &mut Work,
        lo: u64,
        hi: u64,
        t: i32,
        patterns: &Patterns,
    ) -> u64 {
        if self.win != self.lose {
            self.scan::<true, DEFER>(work, lo, hi, t, patterns)
        } else {
            self.scan::<false, DEFER>(work, lo, hi, t, patterns)
        }
    }

    /// Settles the positions `lo..hi` that reach threshold `t` by their
    /// exits (or, on the `<= -t` side, wait for it with every internal child
    /// known), propagating a batch at a time; returns the settlements made.
    /// `lo` is a multiple of [`GROUP`].
    ///
    /// The thresholds above `t` are done, so an unsettled `>= t` byte that
    /// reaches `t` holds an exit equal to `t` (a larger one settled at its
    /// own threshold), and an unsettled `<= -t` byte whose counter is 0 holds
    /// exactly `-t` (it waited for this threshold). The scan therefore
    /// compares 8 positions' bytes at once with those two values, and looks
    /// at single positions only in the groups where one matches.
    ///
    /// `APART`: the two sides are different lanes, so that one comparison
    /// per word finds both ([`Sweep::patterns`] folds them together).
    /// `DEFER`: what settles is marked for the next wave
    /// ([`Waves::mark`]) instead of propagated; returns the marks made.
    #[inline]
    fn scan<const APART: bool, const DEFER: bool>(
        &self,
        work: &mut Work,
        lo: u64,
        hi: u64,
        t: i32,
        patterns: &Patterns,
    ) -> u64 {
        let mut count = 0;
        let (win, lose, shift, stride) = (self.win, self.lose, self.shift, self.stride);
        let Patterns {
            want_win,
            want_lose,
            other_win,
            other_lose,
        } = *patterns;
        let first_word = lo as usize * stride / 8;
        let mut g = lo;
        while g < hi {
            let w0 = first_word + ((g - lo) as usize / 8) * stride;
            let mut hit = 0;
            for k in 0..stride {
                let w = self.st[w0 + k].load(Relaxed);
                hit |= zero_bytes((w ^ want_win[k]) | other_win[k]);
                if !APART {
                    hit |= zero_bytes((w ^ want_lose[k]) | other_lose[k]);
                }
            }
            let end = (g + GROUP).min(hi);
            if hit != 0 {
                for g in g..end {
                    let i = g as usize * stride;
                    let w = self.byte(i + win);
                    if w == enc(t) && self.claim::<false>(i + win, w, SETTLED | enc(t)) {
                        if DEFER {
                            count += self.mark(g, false);
                        } else {
                            work.stack.push(Item {
                                pos: unrank_unchecked(self.n, g),
                                lose: false,
                            });
                        }
                    }
                    let l = self.byte(i + lose);
                    if l == enc(-t)
                        && (self.byte(i + CNT) >> shift) & 7 == 0
                        && self.claim::<false>(i + lose, l, SETTLED | enc(-t))
                    {
                        if DEFER {
                            count += self.mark(g, true);
                        } else {
                            work.stack.push(Item {
                                pos: unrank_unchecked(self.n, g),
                                lose: true,
                            });
                        }
                    }
                }
                if !DEFER && work.stack.len() >= BATCH {
                    count += self.drain(work, t);
                }
            }
            g = end;
        }
        count
    }

    /// Marks position `g`'s settlement (on the `<= -t` side when `lose`)
    /// for the next wave; 1.
    #[inline(always)]
    fn mark(&self, g: u64, lose: bool) -> u64 {
        self.waves.expect("a sweep in waves").mark(g, lose);
        1
    }

    /// Propagates the settlements on the stack at threshold `t` to closure,
    /// a batch at a time.
    pub(super) fn drain(&self, work: &mut Work, t: i32) -> u64 {
        let locate = |g: u64| {
            let i = g as usize * self.stride;
            prefetch(self.st[i / 8].as_ptr() as *const u8);
            i
        };
        drain(work, &self.rules, locate, |i, p, from_lose, stack| {
            if let Some(lose) = self.visit::<false>(i, from_lose, t) {
                stack.push(Item { pos: p, lose });
            }
        })
    }

    /// What a settlement at threshold `t` does to the predecessor whose
    /// state starts at byte `i`, reached from a `<= -t` settlement when
    /// `from_lose`: `Some(side)` when the predecessor settles (on the
    /// `<= -t` side when `side`). `OWNED` as for [`Sweep::claim`].
    #[inline(always)]
    pub(super) fn visit<const OWNED: bool>(
        &self,
        i: usize,
        from_lose: bool,
        t: i32,
    ) -> Option<bool> {
        if from_lose {
            // A child is at -t: the predecessor reaches t.
            let w = self.byte(i + self.win);
            let won = w < SETTLED && self.claim::<OWNED>(i + self.win, w, SETTLED | enc(t));
            return won.then_some(false);
        }
        // A child is >= t: one fewer keeps the predecessor above -t.
        let old = self.take_counter::<OWNED>(i + CNT);
        if (old >> self.shift) & 7 != 1 {
            return None;
        }
        let l = self.byte(i + self.lose);
        if l >= SETTLED {
            return None;
        }
        if dec(l) > -t {
            // Waits for threshold -exit: wake its chunk then.
            if -dec(l) >= self.last {
                self.masks.set(i / self.stride / SUB as usize, -dec(l));
            }
            None
        } else {
            self.claim::<OWNED>(i + self.lose, l, SETTLED | enc(-t))
                .then_some(true)
        }
    }
}

/// A sweep at threshold `t`, as propagation in waves updates it.
struct At<'s, 'a> {
    sweep: &'s Sweep<'a>,
    t: i32,
}

impl Target for At<'_, '_> {
    fn layer(&self) -> u32 {
        self.sweep.n
    }
    fn part(&self) -> crate::comm::Part {
        crate::comm::Part::new(self.sweep.size, 1, 0, 1)
    }
    fn rules(&self) -> &crate::rules::Rules {
        &self.sweep.rules
    }
    #[inline(always)]
    fn prefetch(&self, g: u64) {
        let i = g as usize * self.sweep.stride;
        prefetch(self.sweep.st[i / 8].as_ptr() as *const u8);
    }
    #[inline(always)]
    fn visit_owned(&self, g: u64, from_lose: bool) -> Option<bool> {
        self.sweep
            .visit::<true>(g as usize * self.sweep.stride, from_lose, self.t)
    }
    fn drain(&self, work: &mut Work) -> u64 {
        self.sweep.drain(work, self.t)
    }
}

/// Turns the settled bytes at `offsets` into signed values in place;
/// unsettled ones become `unsettled[k]`.
pub(super) fn decode(state: &mut [u8], stride: usize, offsets: &[(usize, i8)]) {
    state.par_chunks_mut(CHUNK as usize * stride).for_each(|c| {
        for s in c.chunks_exact_mut(stride) {
            for &(o, unsettled) in offsets {
                let b = s[o];
                s[o] = if b & SETTLED != 0 {
                    dec(b) as i8 as u8
                } else {
                    unsettled as u8
                };
            }
        }
    });
}

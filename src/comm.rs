//! Ranks of a partitioned build and the messages between them.
//!
//! A layer is cut into index ranges, one per rank ([`Part`]); each rank
//! holds the state of its range only and sends the updates aimed at other
//! ranges to their owners in batches ([`Comm::exchange`]). One process is
//! the case of one rank ([`Single`]), so the single-process build and the
//! cluster build run the same code. [`Threads`] runs several ranks as
//! threads of one process (the tests use it to check that any number of
//! ranks makes the same bytes without an MPI installation); the `mpi`
//! feature adds ranks that are MPI processes.
//!
//! Every rank calls the collective operations in the same order, from the
//! thread that drives its solve (never from inside a parallel section).

use std::sync::{Barrier, Mutex};

#[cfg(feature = "mpi")]
mod mpi;

#[cfg(feature = "mpi")]
pub use self::mpi::Mpi;
use crate::error::{Cause, ErrorKind, Result};

/// The ranks of a build, as one of them sees them. Not `Sync`: only the
/// thread that drives a rank's solve talks to the other ranks (MPI is
/// initialized for that, `MPI_THREAD_FUNNELED`).
pub trait Comm {
    /// This rank, `0..size()`.
    fn rank(&self) -> usize;
    /// Ranks in all.
    fn size(&self) -> usize;
    /// All-to-all with varying counts: `out[r]` goes to rank `r` (`out` has
    /// `size()` entries); returns what every rank sent to this one, in rank
    /// order.
    fn exchange(&self, out: Vec<Vec<u64>>) -> Result<Vec<u64>>;
    /// Element-wise sum over the ranks, in place.
    fn sum(&self, v: &mut [u64]) -> Result<()>;
    /// Element-wise maximum over the ranks, in place.
    fn max(&self, v: &mut [u64]) -> Result<()>;
    /// Rank 0's values, on every rank.
    fn broadcast(&self, v: &mut [u64]) -> Result<()> {
        if self.rank() != 0 {
            v.fill(0);
        }
        self.sum(v)
    }
    /// Waits until every rank is here.
    fn barrier(&self) -> Result<()>;
}

/// One process, one rank: nothing to send.
pub struct Single;

impl Comm for Single {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn exchange(&self, mut out: Vec<Vec<u64>>) -> Result<Vec<u64>> {
        Ok(out.pop().unwrap_or_default())
    }
    fn sum(&self, _: &mut [u64]) -> Result<()> {
        Ok(())
    }
    fn max(&self, _: &mut [u64]) -> Result<()> {
        Ok(())
    }
    fn barrier(&self) -> Result<()> {
        Ok(())
    }
}

/// A rank's share of a layer of `size` positions: whole windows of `unit`
/// positions, as even as they divide (ranks beyond the number of windows
/// hold nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    /// First index.
    pub lo: u64,
    /// One past the last index.
    pub hi: u64,
    unit: u64,
    ranks: u64,
    windows: u64,
}

impl Part {
    /// Rank `rank`'s part of a layer of `size` positions cut for `ranks`
    /// in windows of `unit`.
    pub fn new(size: u64, unit: u64, rank: usize, ranks: usize) -> Self {
        let windows = size.div_ceil(unit);
        let (r, n) = (rank as u64, ranks as u64);
        let at = |r: u64| (r * windows / n * unit).min(size);
        Part {
            lo: at(r),
            hi: at(r + 1),
            unit,
            ranks: n,
            windows,
        }
    }
    /// Positions in the part.
    pub fn len(&self) -> u64 {
        self.hi - self.lo
    }
    /// Whether the part holds no position.
    pub fn is_empty(&self) -> bool {
        self.hi == self.lo
    }
    /// Whether index `g` is in the part.
    #[inline]
    pub fn has(&self, g: u64) -> bool {
        g >= self.lo && g < self.hi
    }
    /// The rank that owns index `g` (of the same layer).
    #[inline]
    pub fn owner(&self, g: u64) -> usize {
        // Rank r starts at window floor(r W / N): the owner of window w is
        // the largest r with floor(r W / N) <= w.
        (((g / self.unit + 1) * self.ranks - 1) / self.windows) as usize
    }
    /// The first window of the part (windows are numbered in the layer).
    pub fn first_window(&self) -> u64 {
        self.lo / self.unit
    }
    /// Windows in the part.
    pub fn windows(&self) -> u64 {
        self.len().div_ceil(self.unit)
    }
    /// Windows in the largest part of any rank.
    pub fn most_windows(&self) -> u64 {
        self.windows.div_ceil(self.ranks)
    }
}

/// Several ranks as threads of one process, for tests: [`Threads::ranks`]
/// gives one handle per rank; each must be driven by its own thread (with
/// its own rayon pool).
pub struct Threads {
    rank: usize,
    hub: std::sync::Arc<Hub>,
}

struct Hub {
    size: usize,
    barrier: Barrier,
    /// `boxes[from][to]`.
    boxes: Mutex<Vec<Vec<Vec<u64>>>>,
    sums: Mutex<Vec<Vec<u64>>>,
}

impl Threads {
    /// Handles for `size` ranks.
    pub fn ranks(size: usize) -> Vec<Threads> {
        let hub = std::sync::Arc::new(Hub {
            size,
            barrier: Barrier::new(size),
            boxes: Mutex::new(vec![vec![Vec::new(); size]; size]),
            sums: Mutex::new(vec![Vec::new(); size]),
        });
        (0..size)
            .map(|rank| Threads {
                rank,
                hub: hub.clone(),
            })
            .collect()
    }
}

impl Threads {
    fn reduce(&self, v: &mut [u64], op: fn(u64, u64) -> u64) {
        self.hub.sums.lock().unwrap()[self.rank] = v.to_vec();
        self.hub.barrier.wait();
        {
            let s = self.hub.sums.lock().unwrap();
            for (i, x) in v.iter_mut().enumerate() {
                *x = s.iter().map(|r| r[i]).fold(0, op);
            }
        }
        self.hub.barrier.wait();
    }
}

impl Comm for Threads {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.hub.size
    }
    fn exchange(&self, out: Vec<Vec<u64>>) -> Result<Vec<u64>> {
        assert_eq!(out.len(), self.hub.size, "one outbox per rank");
        self.hub.boxes.lock().unwrap()[self.rank] = out;
        self.hub.barrier.wait();
        let got = {
            let mut b = self.hub.boxes.lock().unwrap();
            (0..self.hub.size)
                .flat_map(|from| std::mem::take(&mut b[from][self.rank]))
                .collect()
        };
        self.hub.barrier.wait();
        Ok(got)
    }
    fn sum(&self, v: &mut [u64]) -> Result<()> {
        self.reduce(v, |a, b| a + b);
        Ok(())
    }
    fn max(&self, v: &mut [u64]) -> Result<()> {
        self.reduce(v, u64::max);
        Ok(())
    }
    fn barrier(&self) -> Result<()> {
        self.hub.barrier.wait();
        Ok(())
    }
}

/// The ranks of a build: MPI not started as the build needs it, another rank stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommError {
    /// MPI cannot be started as the build needs it.
    #[error("{0}")]
    Mpi(String),
    /// Another rank of a build stopped.
    #[error("rank {rank} of {ranks} stopped: {reason}")]
    Stopped {
        /// The rank that saw it.
        rank: usize,
        /// Ranks in all.
        ranks: usize,
        /// What it saw.
        reason: String,
    },
}

impl Cause for CommError {
    fn kind(&self) -> ErrorKind {
        match self {
            CommError::Stopped { .. } => ErrorKind::Stopped,
            _ => ErrorKind::Input,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const WINDOW: u64 = 1 << 20;

    #[test]
    fn parts_cover_the_layer_and_owners_agree() {
        for size in [
            1,
            5,
            WINDOW - 1,
            WINDOW,
            WINDOW + 1,
            7 * WINDOW + 3,
            40 * WINDOW,
        ] {
            for ranks in 1..=9 {
                let parts: Vec<Part> = (0..ranks)
                    .map(|r| Part::new(size, WINDOW, r, ranks))
                    .collect();
                assert_eq!(parts[0].lo, 0);
                assert_eq!(parts[ranks - 1].hi, size);
                for w in parts.windows(2) {
                    assert_eq!(w[0].hi, w[1].lo);
                }
                for (r, p) in parts.iter().enumerate() {
                    assert_eq!(p.lo % WINDOW, 0);
                    for g in [p.lo, p.hi.saturating_sub(1), (p.lo + p.hi) / 2] {
                        if p.has(g) {
                            assert_eq!(parts[0].owner(g), r, "size {size}, {ranks} ranks, g {g}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn threads_exchange_and_sum() {
        let ranks = Threads::ranks(3);
        std::thread::scope(|s| {
            for c in &ranks {
                s.spawn(move || {
                    let me = c.rank() as u64;
                    let out = (0..3).map(|to| vec![me * 10 + to]).collect();
                    let got = c.exchange(out).unwrap();
                    assert_eq!(got, (0..3).map(|from| from * 10 + me).collect::<Vec<_>>());
                    let mut v = [me, 1];
                    c.sum(&mut v).unwrap();
                    assert_eq!(v, [3, 3]);
                    let mut v = [me, 7 - me];
                    c.max(&mut v).unwrap();
                    assert_eq!(v, [2, 7]);
                    let mut v = [me + 5];
                    c.broadcast(&mut v).unwrap();
                    assert_eq!(v, [5]);
                });
            }
        });
    }
}

//! A solved layer's tables assembled from the sweeps' result lists, a
//! window at a time, in the file format.

use super::lists::{for_each_index, segments, Disk, List, Lists};
use super::WINDOW;
use crate::comm::Part;
use crate::error::Result;
use crate::format::Kind;
use std::sync::Mutex;

/// A solved layer's tables (this rank's part of them), assembled from
/// result lists on request: the envelope after the envelope sweep, the
/// score after the score sweep.
pub struct Assembled {
    pub(super) n: u32,
    pub(super) part: Part,
    pub(super) disk: Disk,
    pub(super) envelope: bool,
    /// Win side: `lower` or the score's positive values; lose side: `upper`
    /// or the score's negative ones. Per threshold at `n - t`.
    pub(super) win: Lists,
    pub(super) lose: Lists,
    /// The window last assembled for each kind: (kind, window, bytes).
    pub(super) cache: Mutex<Option<(Kind, u64, Vec<u8>)>>,
}

impl Assembled {
    /// The tables of layer `n`'s part `part` from a sweep's result lists:
    /// the envelope (`envelope`) or the score.
    pub(super) fn new(
        n: u32,
        part: Part,
        disk: &Disk,
        envelope: bool,
        win: Lists,
        lose: Lists,
    ) -> Assembled {
        Assembled {
            n,
            part,
            disk: disk.clone(),
            envelope,
            win,
            lose,
            cache: Mutex::new(None),
        }
    }

    /// Seeds of the layer.
    pub fn seeds(&self) -> u32 {
        self.n
    }
    /// The part of the layer this rank holds (all of it in one process).
    pub fn part(&self) -> Part {
        self.part
    }
    /// Whether `kind` can be read.
    pub fn has(&self, kind: Kind) -> bool {
        match kind {
            Kind::Score => !self.envelope,
            Kind::Lower | Kind::Upper => self.envelope,
            // Computed from the finished scores, not by the solver.
            Kind::Distance => false,
        }
    }

    /// Values of window `w` (of the part) of table `kind` into `out`.
    pub(super) fn window(&self, kind: Kind, w: u64, out: &mut Vec<u8>) -> Result<()> {
        let start = self.part.lo + w * WINDOW;
        let len = (start + WINDOW).min(self.part.hi) - start;
        let ni = self.n as i32;
        type Side<'a> = (&'a Lists, bool);
        let (default, sides): (i32, &[Side]) = match kind {
            Kind::Lower => (-ni, &[(&self.win, false)]),
            Kind::Upper => (ni, &[(&self.lose, true)]),
            Kind::Score => (0, &[(&self.win, false), (&self.lose, true)]),
            Kind::Distance => unreachable!("the solver hands out no distance (`has`)"),
        };
        out.clear();
        out.resize(len as usize, default as i8 as u8);
        let mut buf = Vec::new();
        for &(lists, negate) in sides {
            for (ti, l) in lists.iter().enumerate() {
                let Some(l) = l else { continue };
                let t = ni - ti as i32;
                let v = if negate { -t } else { t } as i8 as u8;
                l.blob(&self.disk, w as usize, &mut buf)?;
                for (base, count, gaps) in segments(&buf, start) {
                    for_each_index(base, count, gaps, |g| out[(g - start) as usize] = v);
                }
            }
        }
        Ok(())
    }

    /// Copies entries `start..start + out.len()` of table `kind` into `out`,
    /// in the file format (indices of the layer, within the part). Calls
    /// should run through a table in order: the last window assembled is
    /// kept.
    pub fn extract(&self, kind: Kind, start: usize, out: &mut [u8]) -> Result<()> {
        assert!(self.has(kind), "table not available now");
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let lo = self.part.lo;
        let mut pos = start as u64 - lo;
        let end = pos + out.len() as u64;
        assert!(end <= self.part.len(), "outside the part");
        while pos < end {
            let w = pos / WINDOW;
            let fresh = matches!(&*cache, Some((k, cw, _)) if *k == kind && *cw == w);
            if !fresh {
                let mut bytes = cache.take().map(|c| c.2).unwrap_or_default();
                self.window(kind, w, &mut bytes)?;
                *cache = Some((kind, w, bytes));
            }
            let bytes = &cache.as_ref().expect("just filled").2;
            let from = (pos - w * WINDOW) as usize;
            let take = (bytes.len() - from).min((end - pos) as usize);
            let at = (pos + lo - start as u64) as usize;
            out[at..at + take].copy_from_slice(&bytes[from..from + take]);
            pos += take as u64;
        }
        Ok(())
    }

    /// Positions per score, from `-n` to `n` (with the score), in the part.
    pub fn histogram(&self) -> Vec<u64> {
        assert!(self.has(Kind::Score), "score not available now");
        let ni = self.n as i32;
        let mut h = vec![0u64; 2 * ni as usize + 1];
        let mut settled = 0;
        let entries = |l: &Option<List>| l.as_ref().map_or(0, |l| l.entries);
        for (ti, (w, l)) in self.win.iter().zip(&self.lose).enumerate() {
            let t = ni - ti as i32;
            h[(t + ni) as usize] += entries(w);
            h[(ni - t) as usize] += entries(l);
            settled += entries(w) + entries(l);
        }
        h[ni as usize] += self.part.len() - settled;
        h
    }

    /// Positions of the part whose envelope is closed (with the envelope).
    pub fn pinned(&self) -> Result<Option<u64>> {
        if !self.envelope {
            return Ok(None);
        }
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        let mut pinned = 0;
        for w in 0..self.part.windows() {
            self.window(Kind::Lower, w, &mut lo)?;
            self.window(Kind::Upper, w, &mut hi)?;
            pinned += lo.iter().zip(&hi).filter(|(a, b)| a == b).count() as u64;
        }
        Ok(Some(pinned))
    }

    /// The part's entries of a table, in the file format.
    pub fn table(&self, kind: Kind) -> Result<Vec<u8>> {
        let mut v = vec![0u8; self.part.len() as usize];
        self.extract(kind, self.part.lo as usize, &mut v)?;
        Ok(v)
    }
}

impl crate::solve::SolvedTables for Assembled {
    fn has(&self, kind: Kind) -> bool {
        Assembled::has(self, kind)
    }
    fn extract(&self, kind: Kind, start: usize, out: &mut [u8]) -> Result<()> {
        Assembled::extract(self, kind, start, out)
    }
    fn pinned(&self) -> Result<Option<u64>> {
        Assembled::pinned(self)
    }
    fn histogram(&self) -> Vec<u64> {
        Assembled::histogram(self)
    }
    fn part(&self) -> Part {
        self.part
    }
}

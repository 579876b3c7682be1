//! Memory helpers shared by the solver and the probe: anonymous buffers on
//! huge pages and cache prefetch hints.

use crate::error::{Cause, ErrorKind};
use memmap2::MmapMut;
use std::io;
use std::sync::atomic::{AtomicU64, AtomicU8};

/// A zero-filled anonymous mapping, advised onto huge pages: the solver's
/// arrays are accessed at random, and huge pages spare most TLB misses.
pub struct Buffer {
    map: MmapMut,
    len: usize,
}

impl Buffer {
    /// `len` zero bytes; [`MemError::Alloc`] when the system cannot give
    /// them.
    pub fn zeroed(len: usize) -> crate::Result<Self> {
        let map = MmapMut::map_anon(len.max(1)).map_err(|source| MemError::Alloc {
            bytes: len as u64,
            source,
        })?;
        #[cfg(target_os = "linux")]
        {
            // Only a hint: a kernel without transparent huge pages ignores it.
            let _ = map.advise(memmap2::Advice::HugePage);
        }
        Ok(Buffer { map, len })
    }
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.map[..self.len]
    }
    /// The bytes, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.map[..self.len]
    }
    /// Keeps the first `len` bytes (a buffer padded to whole words while
    /// it was worked on).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }
    pub(crate) fn atomic(&mut self) -> &[AtomicU8] {
        let s = self.as_mut_slice();
        // SAFETY: AtomicU8 has the size and alignment of u8, and the
        // exclusive borrow of the buffer keeps every other access out for the
        // lifetime of the returned slice.
        unsafe { &*(s as *mut [u8] as *const [AtomicU8]) }
    }
    /// The bytes as 64-bit words, for code that reads eight bytes at once
    /// while other threads update them (every access to the words must then
    /// be a word access: atomics of different sizes must not race). The
    /// length must be a multiple of 8.
    pub(crate) fn atomic_words(&mut self) -> &[AtomicU64] {
        assert_eq!(self.len % 8, 0, "a buffer of whole words");
        let s = self.as_mut_slice();
        // SAFETY: the mapping is page-aligned and its length a multiple of
        // 8, so it is a slice of u64 words with the size and alignment of
        // AtomicU64; the exclusive borrow keeps every other access out for
        // the lifetime of the returned slice.
        unsafe { std::slice::from_raw_parts(s.as_mut_ptr() as *const AtomicU64, s.len() / 8) }
    }
}

impl std::ops::Deref for Buffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

/// Zeroed 64-bit atomic words on huge pages (where the kernel gives
/// them), only ever accessed atomically.
pub(crate) struct Words(Buffer);

impl Words {
    /// `n` zero words.
    pub(crate) fn zeroed(n: usize) -> crate::Result<Self> {
        Ok(Words(Buffer::zeroed(n * 8)?))
    }
}

impl std::ops::Deref for Words {
    type Target = [AtomicU64];
    fn deref(&self) -> &[AtomicU64] {
        let s = self.0.as_slice();
        // SAFETY: the mapping is page-aligned and its length a multiple of
        // 8; the buffer is private to this type, which hands out only
        // atomic access, so shared references may update it.
        unsafe { std::slice::from_raw_parts(s.as_ptr() as *const AtomicU64, s.len() / 8) }
    }
}

/// Zeroed 32-bit words on huge pages (where the kernel gives them).
pub(crate) struct U32s(Buffer);

impl U32s {
    /// `n` zero words.
    pub(crate) fn zeroed(n: usize) -> crate::Result<Self> {
        Ok(U32s(Buffer::zeroed(n * 4)?))
    }
}

impl std::ops::Deref for U32s {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        bytemuck::cast_slice(self.0.as_slice())
    }
}

impl std::ops::DerefMut for U32s {
    fn deref_mut(&mut self) -> &mut [u32] {
        bytemuck::cast_slice_mut(self.0.as_mut_slice())
    }
}

/// Asks for the cache line holding `*p`; only a hint.
#[inline(always)]
pub(crate) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// How the read-modify-write micro-benchmark's updates reach its array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rmw {
    /// One atomic increment at a time, at random offsets (the solver's
    /// pattern today).
    Random,
    /// Random offsets prefetched this many at a time, then incremented
    /// atomically.
    Prefetched(usize),
    /// Delayed updates: each appended to its thread's bucket of the region
    /// of `region` bytes it hits (`entries` a bucket), a bucket applied
    /// when full (and all at the end), atomically.
    Bucketed {
        /// Bytes of a region.
        region: usize,
        /// Updates a bucket holds.
        entries: usize,
    },
    /// As `Bucketed`, but each region is one thread's (its updates routed
    /// to it, as a partitioned build's are), so a bucket is applied with
    /// plain loads and stores.
    Owned {
        /// Bytes of a region.
        region: usize,
        /// Updates a bucket holds.
        entries: usize,
    },
}

/// An array for the read-modify-write micro-benchmark: zero bytes on huge
/// pages or on 4 KiB pages, every page touched so that no timing sees a
/// page fault.
pub struct RmwArray {
    buf: Buffer,
}

impl RmwArray {
    /// `len` bytes, on huge pages (as the solver's state) or, without
    /// `huge`, on 4 KiB pages.
    pub fn new(len: usize, huge: bool) -> crate::Result<Self> {
        let mut buf = Buffer::zeroed(len.max(1))?;
        #[cfg(target_os = "linux")]
        if !huge {
            let _ = buf.map.advise(memmap2::Advice::NoHugePage);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = huge;
        buf.as_mut_slice()
            .iter_mut()
            .step_by(4096)
            .for_each(|b| *b = 1);
        Ok(RmwArray { buf })
    }

    /// Updates a second over all `threads` threads, each making `ops`
    /// increments at pseudo-random offsets, `how` they reach the array.
    /// An owned run has at most as many threads as regions.
    pub fn rate(&mut self, threads: usize, ops: u64, how: Rmw) -> f64 {
        let a = self.buf.atomic();
        let threads = match how {
            Rmw::Owned { region, .. } => threads.min(a.len().div_ceil(region.clamp(1, a.len()))),
            _ => threads,
        }
        .max(1);
        let t0 = std::time::Instant::now();
        std::thread::scope(|s| {
            for t in 0..threads {
                s.spawn(move || rmw_thread(a, t, threads, ops, how));
            }
        });
        (ops * threads as u64) as f64 / t0.elapsed().as_secs_f64()
    }
}

/// Thread `t` of `threads` of [`RmwArray::rate`].
fn rmw_thread(a: &[AtomicU8], t: usize, threads: usize, ops: u64, how: Rmw) {
    use std::sync::atomic::Ordering::Relaxed;
    let len = a.len() as u64;
    // xorshift64*: cheap, and no two threads share a sequence.
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ (t as u64 + 1).wrapping_mul(0xff51_afd7);
    let mut next = move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    match how {
        Rmw::Random => (0..ops).for_each(|_| {
            a[(next() % len) as usize].fetch_add(1, Relaxed);
        }),
        Rmw::Prefetched(batch) => {
            let mut idx = vec![0usize; batch.max(1)];
            let mut done = 0;
            while done < ops {
                for i in idx.iter_mut() {
                    *i = (next() % len) as usize;
                    prefetch(a[*i].as_ptr());
                }
                for &i in &idx {
                    a[i].fetch_add(1, Relaxed);
                }
                done += idx.len() as u64;
            }
        }
        Rmw::Bucketed { region, entries } | Rmw::Owned { region, entries } => {
            let owned = matches!(how, Rmw::Owned { .. });
            let region = region.clamp(1, a.len());
            let regions = a.len().div_ceil(region);
            let entries = entries.max(1);
            let mut fill = vec![0u32; regions];
            let mut bucket = vec![0u32; regions * entries];
            // A bucket applied: atomically, or (owned) with plain loads and
            // stores, which no other thread's race (its regions are its own).
            let apply = |k: usize, offs: &[u32]| {
                let base = k * region;
                for &o in offs {
                    let cell = &a[base + o as usize];
                    if owned {
                        // SAFETY: region `k` is this thread's alone.
                        unsafe { *cell.as_ptr() = (*cell.as_ptr()).wrapping_add(1) };
                    } else {
                        cell.fetch_add(1, Relaxed);
                    }
                }
            };
            // An owned run draws only its own regions (k % threads == t).
            let mine = if owned {
                (regions - t).div_ceil(threads)
            } else {
                regions
            };
            for _ in 0..ops {
                let r = next();
                let k = if owned {
                    ((r >> 40) % mine as u64) as usize * threads + t
                } else {
                    ((r >> 40) % regions as u64) as usize
                };
                let size = (a.len() - k * region).min(region) as u64;
                let o = ((r & 0xff_ffff_ffff) % size) as u32;
                let f = fill[k] as usize;
                bucket[k * entries + f] = o;
                if f + 1 == entries {
                    apply(k, &bucket[k * entries..(k + 1) * entries]);
                    fill[k] = 0;
                } else {
                    fill[k] += 1;
                }
            }
            for k in 0..regions {
                apply(k, &bucket[k * entries..k * entries + fill[k] as usize]);
            }
        }
    }
}

/// Resident memory of this process split by kind, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resident {
    /// Anonymous pages: the solver's arrays, heap and stacks.
    pub anon: u64,
    /// Mapped file pages: the lower layers' tables (page cache the kernel
    /// can take back under pressure).
    pub file: u64,
}

impl Resident {
    /// Now, from `/proc/self/statm`; zero where that file does not exist.
    pub fn now() -> Self {
        let page = 4096u64;
        let text = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
        let f: Vec<u64> = text
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        match f.as_slice() {
            [_, resident, shared, ..] => Resident {
                anon: resident.saturating_sub(*shared) * page,
                file: shared * page,
            },
            _ => Resident::default(),
        }
    }
}

/// Samples [`Resident`] every few milliseconds on a thread of its own and
/// keeps the peak of each kind: the kernel's own high-water mark (`VmHWM`)
/// only knows the total.
pub struct PeakSampler {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<Resident>>,
}

impl PeakSampler {
    /// Starts sampling.
    pub fn start() -> Self {
        use std::sync::atomic::Ordering::Relaxed;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("awari-rss".into())
            .spawn(move || {
                let mut peak = Resident::default();
                loop {
                    let r = Resident::now();
                    peak.anon = peak.anon.max(r.anon);
                    peak.file = peak.file.max(r.file);
                    if flag.load(Relaxed) {
                        return peak;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            })
            .ok();
        PeakSampler { stop, handle }
    }
    /// Stops sampling; the peaks seen (zero if the thread could not start).
    pub fn finish(mut self) -> Resident {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for PeakSampler {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A figure of `/proc/meminfo`, in bytes.
fn meminfo(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Bytes of memory available now (`MemAvailable`).
pub fn available_memory() -> Option<u64> {
    meminfo("MemAvailable:")
}

/// Bytes of memory the machine has (`MemTotal`).
pub fn total_memory() -> Option<u64> {
    meminfo("MemTotal:")
}

/// Gives the heap's freed memory back to the system (glibc keeps freed
/// chunks, and after large blocks were freed it serves even large
/// allocations from the heap): the builder calls it once a layer is
/// compressed, so that the next layer starts from what it holds.
pub fn release_freed_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Resets the peak resident set counter (Linux; ignored elsewhere).
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident set since the last reset, in bytes.
pub fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| {
            let l = t.lines().find(|l| l.starts_with("VmHWM:"))?.to_owned();
            l.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kb| kb * 1024)
}

/// The solver's working arrays that could not be allocated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemError {
    /// The solver's working arrays could not be allocated.
    #[error("cannot allocate the working arrays ({bytes} bytes): {source}")]
    Alloc {
        /// Bytes asked for.
        bytes: u64,
        /// What the system said.
        #[source]
        source: io::Error,
    },
}

impl Cause for MemError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Io
    }
}

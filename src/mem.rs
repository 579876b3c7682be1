//! Memory helpers shared by the solver and the probe: anonymous buffers on
//! huge pages and cache prefetch hints.

use memmap2::MmapMut;
use std::sync::atomic::AtomicU8;

/// A zero-filled anonymous mapping, advised onto huge pages: the solver's
/// arrays are accessed at random, and huge pages spare most TLB misses.
pub struct Buffer {
    map: MmapMut,
    len: usize,
}

impl Buffer {
    /// `len` zero bytes.
    pub fn zeroed(len: usize) -> std::io::Result<Self> {
        let map = MmapMut::map_anon(len.max(1))?;
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
    pub(crate) fn atomic(&mut self) -> &[AtomicU8] {
        let s = self.as_mut_slice();
        // SAFETY: AtomicU8 has the size and alignment of u8, and the
        // exclusive borrow of the buffer keeps every other access out for the
        // lifetime of the returned slice.
        unsafe { &*(s as *mut [u8] as *const [AtomicU8]) }
    }
}

impl std::ops::Deref for Buffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
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

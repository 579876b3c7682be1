//! The per-thread state of the readers: a few recently decoded blocks of
//! any table, each family's decoding scratch, buffers for compressed
//! bytes read with `pread`.

use super::{v3, zstd_blocks};
use std::cell::RefCell;

/// The per-thread cache of decompressed blocks holds at most this many...
pub(super) const CACHE_BLOCKS: usize = 8;
/// ... and at most this many bytes (but always one block).
pub(super) const CACHE_BYTES: usize = 1 << 20;

/// One decompressed block in the per-thread cache.
pub(super) struct Slot {
    /// The table's id (`u64::MAX`: none).
    pub(super) table: u64,
    pub(super) block: u64,
    pub(super) used: u64,
    pub(super) data: Vec<u8>,
}

/// Each family's decoding state of a thread.
pub(super) struct Decoders {
    /// Versions 1 and 2: the zstd context.
    pub(super) zstd: zstd_blocks::Scratch,
    /// Version 3: scratch space.
    pub(super) v3: v3::Scratch,
}

/// Per thread: the decoders, a few recently used blocks, scratch space.
pub(super) struct Cache {
    pub(super) dec: Decoders,
    pub(super) slots: Vec<Slot>,
    pub(super) clock: u64,
    /// A block decoded whole when only part of it is wanted.
    pub(super) scratch: Vec<u8>,
    /// A block's compressed bytes, for tables read with `pread`.
    pub(super) frame: Vec<u8>,
    /// Another block's, when two are decoded at once.
    pub(super) frame2: Vec<u8>,
}

impl Cache {
    const fn new() -> Cache {
        Cache {
            dec: Decoders {
                zstd: zstd_blocks::Scratch::new(),
                v3: v3::Scratch::new(),
            },
            slots: Vec::new(),
            clock: 0,
            scratch: Vec::new(),
            frame: Vec::new(),
            frame2: Vec::new(),
        }
    }
}

thread_local! {
    static CACHE: RefCell<Cache> = const { RefCell::new(Cache::new()) };
}

/// Runs `f` on this thread's cache (on a fresh one while the thread is
/// being torn down).
pub(super) fn with_cache<T>(f: impl FnOnce(&mut Cache) -> T) -> T {
    let mut f = Some(f);
    let r = CACHE.try_with(|c| match c.try_borrow_mut() {
        Ok(mut c) => Some((f.take().expect("called once"))(&mut c)),
        Err(_) => None,
    });
    match r {
        Ok(Some(t)) => t,
        _ => {
            let mut c = Cache::new();
            (f.take().expect("called once"))(&mut c)
        }
    }
}

//! Where a compressed table's bytes come from: [`Bytes`], a buffer or a
//! mapping read in place, or a file read with `pread`.

use std::io;

/// Where a compressed table's bytes come from: a buffer or a mapping
/// (anything `AsRef<[u8]>`, whose frames are read in place), or a file
/// read with `pread` ([`crate::store::FileTable`], whose frames are read
/// into a per-thread buffer).
pub trait Bytes: Sync {
    /// Bytes in all.
    fn total_len(&self) -> u64;
    /// Reads `out.len()` bytes at `at`.
    fn read_at(&self, at: u64, out: &mut [u8]) -> io::Result<()>;
    /// All the bytes, when they are in memory.
    fn slice(&self) -> Option<&[u8]> {
        None
    }
}

impl<T: AsRef<[u8]> + Sync + ?Sized> Bytes for T {
    fn total_len(&self) -> u64 {
        self.as_ref().len() as u64
    }
    fn read_at(&self, at: u64, out: &mut [u8]) -> io::Result<()> {
        let b = self.as_ref();
        let s = usize::try_from(at).unwrap_or(usize::MAX);
        match s.checked_add(out.len()).and_then(|e| b.get(s..e)) {
            Some(src) => {
                out.copy_from_slice(src);
                Ok(())
            }
            None => Err(io::ErrorKind::UnexpectedEof.into()),
        }
    }
    fn slice(&self) -> Option<&[u8]> {
        Some(self.as_ref())
    }
}

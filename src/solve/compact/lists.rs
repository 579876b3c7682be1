//! Lists of positions on disk: unnamed files in the scratch folder, a
//! window at a time, each window's blob of varint segments compressed with
//! zstd when it is long enough; and the traffic they make.

use super::{CHUNK, WINDOW};
use crate::comm::Part;
use crate::error::{Error, Result};
use crate::solve::SolveError;
use rayon::prelude::*;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The scratch folder, the error of a failed access to it, and the
/// traffic.
#[derive(Clone)]
pub(super) struct Disk(pub(super) std::sync::Arc<DiskInner>);

pub(super) struct DiskInner {
    pub(super) dir: PathBuf,
    pub(super) written: AtomicU64,
    pub(super) read: AtomicU64,
    pub(super) live: AtomicU64,
    pub(super) peak: AtomicU64,
    pub(super) lower: AtomicU64,
    pub(super) sent: AtomicU64,
}

impl Disk {
    pub(super) fn new(dir: &Path) -> Self {
        Disk(std::sync::Arc::new(DiskInner {
            dir: dir.to_path_buf(),
            written: AtomicU64::new(0),
            read: AtomicU64::new(0),
            live: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            lower: AtomicU64::new(0),
            sent: AtomicU64::new(0),
        }))
    }
    pub(super) fn dir(&self) -> &Path {
        &self.0.dir
    }
    pub(super) fn err(&self, source: std::io::Error) -> Error {
        SolveError::Scratch {
            dir: self.0.dir.clone(),
            source,
        }
        .into()
    }
    pub(super) fn wrote(&self, k: u64) {
        self.0.written.fetch_add(k, Relaxed);
        let live = self.0.live.fetch_add(k, Relaxed) + k;
        self.0.peak.fetch_max(live, Relaxed);
    }
    pub(super) fn freed(&self, k: u64) {
        self.0.live.fetch_sub(k, Relaxed);
    }
    pub(super) fn figures(&self) -> crate::store::IoFigures {
        crate::store::IoFigures {
            lower_read_bytes: self.0.lower.load(Relaxed),
            scratch_written_bytes: self.0.written.load(Relaxed),
            scratch_read_bytes: self.0.read.load(Relaxed),
            scratch_peak_bytes: self.0.peak.load(Relaxed),
            sent_bytes: self.0.sent.load(Relaxed),
        }
    }
}

/// Lists per threshold (at `n - t`); `None`: empty.
pub(super) type Lists = Vec<Option<List>>;

/// A list of positions in index order, in an unnamed temporary file.
pub(super) struct List {
    pub(super) disk: Disk,
    pub(super) file: File,
    /// Per window: offset and stored length of its blob, and its length
    /// before zstd (0: stored as is; missing windows are empty).
    pub(super) blobs: Vec<(u64, usize, usize)>,
    pub(super) end: u64,
    pub(super) entries: u64,
}

/// Blobs at least this long are stored compressed (zstd level 1): the gaps
/// are small numbers, and the disk the lists take matters more than the
/// time zstd takes.
pub(super) const ZSTD_FROM: usize = 256;

impl List {
    pub(super) fn new(disk: &Disk) -> Result<Self> {
        let file = tempfile::tempfile_in(disk.dir()).map_err(|e| disk.err(e))?;
        Ok(List {
            disk: disk.clone(),
            file,
            blobs: Vec::new(),
            end: 0,
            entries: 0,
        })
    }

    /// A blob as it is stored: compressed when long enough, with its
    /// length before (0: stored as is).
    pub(super) fn pack(disk: &Disk, blob: Vec<u8>) -> Result<(Vec<u8>, usize)> {
        if blob.len() >= ZSTD_FROM {
            let packed = zstd::bulk::compress(&blob, 1).map_err(|e| disk.err(e))?;
            Ok((packed, blob.len()))
        } else {
            Ok((blob, 0))
        }
    }

    /// Appends the blob of window `w` (windows in order, gaps empty), as
    /// [`List::pack`] made it.
    pub(super) fn append(
        &mut self,
        disk: &Disk,
        w: usize,
        (stored, raw): &(Vec<u8>, usize),
        entries: u64,
    ) -> Result<()> {
        let raw = *raw;
        self.blobs.resize(w, (self.end, 0, 0));
        self.file
            .write_all_at(stored, self.end)
            .map_err(|e| disk.err(e))?;
        self.blobs.push((self.end, stored.len(), raw));
        disk.wrote(stored.len() as u64);
        self.end += stored.len() as u64;
        self.entries += entries;
        Ok(())
    }

    /// The blob of window `w`.
    pub(super) fn blob(&self, disk: &Disk, w: usize, buf: &mut Vec<u8>) -> Result<()> {
        let raw = self.read_stored(disk, w, buf)?;
        unpack(disk, buf, raw)
    }

    /// The stored bytes of window `w`'s blob; its length before zstd.
    pub(super) fn read_stored(&self, disk: &Disk, w: usize, buf: &mut Vec<u8>) -> Result<usize> {
        let (at, len, raw) = self.blobs.get(w).copied().unwrap_or((0, 0, 0));
        buf.clear();
        buf.resize(len, 0);
        disk.0.read.fetch_add(len as u64, Relaxed);
        self.file.read_exact_at(buf, at).map_err(|e| disk.err(e))?;
        Ok(raw)
    }
}

/// A stored blob made whole again (`raw` its length before zstd, 0: as is).
pub(super) fn unpack(disk: &Disk, buf: &mut Vec<u8>, raw: usize) -> Result<()> {
    if raw > 0 {
        *buf = zstd::bulk::decompress(buf, raw).map_err(|e| disk.err(e))?;
    }
    Ok(())
}

impl Drop for List {
    fn drop(&mut self) {
        self.disk.freed(self.end);
    }
}

pub(super) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline]
pub(super) fn get_varint(b: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let x = b[*at];
        *at += 1;
        v |= ((x & 0x7f) as u64) << shift;
        if x < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// Appends a segment: chunk `chunk` (of its window) and its sorted offsets.
pub(super) fn put_segment(out: &mut Vec<u8>, chunk: u64, offsets: &[u32], gaps: &mut Vec<u8>) {
    gaps.clear();
    let mut prev = 0u32;
    for (i, &o) in offsets.iter().enumerate() {
        put_varint(gaps, (o - if i == 0 { 0 } else { prev }) as u64);
        prev = o;
    }
    put_varint(out, chunk);
    put_varint(out, offsets.len() as u64);
    put_varint(out, gaps.len() as u64);
    out.extend_from_slice(gaps);
}

/// The segments of a blob: first index of the chunk, count, gap bytes.
pub(super) fn segments(blob: &[u8], window_start: u64) -> Vec<(u64, usize, &[u8])> {
    let mut v = Vec::new();
    let mut at = 0;
    while at < blob.len() {
        let chunk = get_varint(blob, &mut at);
        let count = get_varint(blob, &mut at) as usize;
        let len = get_varint(blob, &mut at) as usize;
        v.push((window_start + chunk * CHUNK, count, &blob[at..at + len]));
        at += len;
    }
    v
}

/// Calls `f` with each index of a segment.
#[inline]
pub(super) fn for_each_index(base: u64, count: usize, gaps: &[u8], mut f: impl FnMut(u64)) {
    let mut at = 0;
    let mut g = base;
    for _ in 0..count {
        g += get_varint(gaps, &mut at);
        f(g);
    }
}

/// Writes lists window by window: `classify(start, bytes, emit)` looks at
/// the bytes of one chunk (which starts at index `start`) and calls
/// `emit(list, offset)` in increasing offset order per list. `bytes` are
/// those of the part, whose windows the lists number from 0. Chunks run in
/// parallel; each window's blobs are appended in order.
pub(super) fn write_lists<F>(
    disk: &Disk,
    lists: &mut [List],
    bytes: &mut [u8],
    part: Part,
    classify: F,
) -> Result<()>
where
    F: Fn(u64, &mut [u8], &mut dyn FnMut(usize, u32)) + Sync,
{
    let nl = lists.len();
    for w in 0..part.windows() {
        let start = part.lo + w * WINDOW;
        let end = (start + WINDOW).min(part.hi);
        let window = &mut bytes[(start - part.lo) as usize..(end - part.lo) as usize];
        let encoded: Vec<Vec<(usize, Vec<u8>, u64)>> = window
            .par_chunks_mut(CHUNK as usize)
            .enumerate()
            .map(|(c, chunk)| {
                let mut per: Vec<Vec<u32>> = vec![Vec::new(); nl];
                classify(start + c as u64 * CHUNK, chunk, &mut |l, o| per[l].push(o));
                let mut gaps = Vec::new();
                per.iter()
                    .enumerate()
                    .filter(|(_, v)| !v.is_empty())
                    .map(|(l, v)| {
                        let mut seg = Vec::new();
                        put_segment(&mut seg, c as u64, v, &mut gaps);
                        (l, seg, v.len() as u64)
                    })
                    .collect()
            })
            .collect();
        let mut blobs: Vec<(Vec<u8>, u64)> = vec![(Vec::new(), 0); nl];
        for (l, seg, count) in encoded.into_iter().flatten() {
            blobs[l].0.extend_from_slice(&seg);
            blobs[l].1 += count;
        }
        let packed: Vec<(usize, (Vec<u8>, usize), u64)> = blobs
            .into_par_iter()
            .enumerate()
            .filter(|(_, (_, count))| *count > 0)
            .map(|(l, (blob, count))| Ok((l, List::pack(disk, blob)?, count)))
            .collect::<Result<_>>()?;
        for (l, stored, count) in packed {
            lists[l].append(disk, w as usize, &stored, count)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn varint_segments_round_trip() {
        let offsets = [0u32, 1, 2, 200, 70_000, 65_535 + 3];
        let mut sorted = offsets.to_vec();
        sorted.sort();
        let mut blob = Vec::new();
        let mut gaps = Vec::new();
        put_segment(&mut blob, 3, &sorted, &mut gaps);
        put_segment(&mut blob, 5, &[7], &mut gaps);
        let segs = segments(&blob, 1000);
        assert_eq!(segs.len(), 2);
        let mut got = Vec::new();
        for (base, count, g) in segs {
            for_each_index(base, count, g, |i| got.push(i));
        }
        let mut want: Vec<u64> = sorted
            .iter()
            .map(|&o| 1000 + 3 * CHUNK + o as u64)
            .collect();
        want.push(1000 + 5 * CHUNK + 7);
        assert_eq!(got, want);
    }
}

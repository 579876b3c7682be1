//! The compact solver: one byte of state per position in memory; exits,
//! results and the lower layers on disk, read and written in index order.
//!
//! It computes what [`super::solve_layer`] computes (the same threshold
//! games, the same bytes) in a third of the memory, and it reads the lower
//! layers only as streams, so they may be kept compressed.
//!
//! # What a threshold game needs at random
//!
//! In the in-memory solver a position's state bytes hold its best exit, its
//! value once settled, and its counters. Of these, the propagation of a
//! settlement (the random part of the work) only asks of a predecessor:
//!
//! * on the `>= t` side ("win"), whether it is settled yet;
//! * on the `<= -t` side ("lose"), whether it is settled, how many internal
//!   children are not yet known to be `>= t` (its counter), and whether its
//!   exits allow `<= -t` at the current threshold (a flag).
//!
//! A settlement's value is the threshold at which it happens, so it need not
//! be kept either. One byte holds all of that: the counter (bits 0..=2), the
//! flag (bit 3), and per side two bits, "settled at this threshold" and
//! "settled before". After each threshold a sequential pass (the *harvest*)
//! appends the positions settled at it to that threshold's result list and
//! marks them as settled before. The tables are assembled from the result
//! lists at the end of a sweep.
//!
//! # Exits as lists
//!
//! The exits are not in memory during a sweep. An exit matters at exactly
//! one threshold: a win exit `e` settles its position at `t = e` (a larger
//! threshold never sees it, a smaller one finds the position settled), and a
//! lose exit `e` sets the flag at `t = -e`. So the exits are written as lists
//! of positions per threshold, and each threshold reads only its own lists.
//!
//! Once per layer, a forward pass generates every position's moves and
//! keeps, half a byte per position in a scratch file, its number of
//! internal moves and the exit that needs no lower layer (no move: `-n`; a
//! move that leaves the opponent empty: `+n`). The exits are computed into a
//! byte array (the layer's one byte per position, before the state exists):
//! those facts first, then the lower layers are streamed in index order, one table at a time, and
//! each child position `C` of layer `n - c` hands `c - value(C)` to every
//! position with a move capturing `c` seeds into `C`
//! ([`Position::for_each_capture_predecessor`]), which keeps the largest. So
//! each lower table is read once, sequentially, per exits pass, whatever its
//! format, and the random accesses are into the layer's own array.
//!
//! # Lists on disk
//!
//! A list holds positions in increasing index order in unnamed temporary
//! files in the scratch folder (they vanish with the process). The layer is
//! cut into windows of [`WINDOW`] positions and chunks of [`CHUNK`]; each
//! window of a list is one blob of segments, one per chunk with entries,
//! each a header (chunk, count, bytes) and LEB128 gaps between indices,
//! compressed with zstd (level 1) when it is long enough. The chunks of a
//! window are encoded and decoded in parallel. An exit list is dropped (its
//! disk space freed) once its threshold is done.
//!
//! # Costs
//!
//! Per layer the compact solver adds to the in-memory solver's work: three
//! exits passes (lower and upper exits for the envelope, score exits)
//! instead of one, each a stream of the lower layers with un-captures; a
//! harvest per threshold (a sequential read of the state); and the lists'
//! I/O, about 3 bytes written and 6 read per position, compressed (layer
//! 24: 1.15 GB written, 2.31 GB read, at most 584 MB on disk at once).
//!
//! # Memory
//!
//! One byte per position (the exits array, then the state, never both) plus
//! the buffers of one window of lists, independent of the layer's size
//! ([`memory_estimate`]).

use super::{dec, enc, Below, Item, Observer, SolveError, SolveStats, Work, BATCH, NO_EXIT};
use crate::comm::{Comm, Part};
use crate::format::Kind;
use crate::index::{layer_size, rank, unrank_unchecked, LayerIter};
use crate::mem::{prefetch, Buffer};
use crate::rules::Position;
use rayon::prelude::*;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

/// Positions per segment of a list: the unit of parallel work.
pub const CHUNK: u64 = 1 << 16;
/// Positions per window: lists are written and read a window at a time.
pub const WINDOW: u64 = 1 << 20;

/// Windows of an exit list read and decompressed together.
const APPLY_WINDOWS: usize = 4;

/// With several ranks, lower-layer chunks each rank streams between two
/// exchanges of the exits it found for other ranks.
const ROUND_CHUNKS: u64 = 16;

/// Updates from other ranks handled per task.
const RECEIVED_BATCH: usize = 4096;

/// The most seeds one capture takes (six pits of 3).
const MAX_CAPTURE: u32 = 18;

const CNT: u8 = 0x07;
const FLAG: u8 = 0x08;
const LOSE_NOW: u8 = 0x10;
const LOSE_DONE: u8 = 0x20;
const WIN_NOW: u8 = 0x40;
const WIN_DONE: u8 = 0x80;
const LOSE_BITS: u8 = LOSE_NOW | LOSE_DONE;
const WIN_BITS: u8 = WIN_NOW | WIN_DONE;

/// Lower layers as the compact solver reads them: ranges of a table, in
/// index order.
pub trait Lower: Sync {
    /// Copies entries `start..start + out.len()` of table `kind` of layer
    /// `layer` into `out`.
    fn read(&self, layer: u32, kind: Kind, start: u64, out: &mut [u8]) -> Result<(), SolveError>;
}

/// Lower layers held as byte slices (in memory or mapped).
pub struct Slices<'a>(pub &'a [Below<'a>]);

impl Lower for Slices<'_> {
    fn read(&self, layer: u32, kind: Kind, start: u64, out: &mut [u8]) -> Result<(), SolveError> {
        let bad = |reason: String| SolveError::Below { layer, reason };
        let b = self
            .0
            .get(layer as usize)
            .ok_or_else(|| bad("not given".into()))?;
        let t = match kind {
            Kind::Score => Some(b.score),
            Kind::Lower => b.lower,
            Kind::Upper => b.upper,
        }
        .ok_or_else(|| bad(format!("no {} table", kind.stem())))?;
        let s = start as usize;
        let src = t
            .get(s..s + out.len())
            .ok_or_else(|| bad(format!("{} table too short", kind.stem())))?;
        out.copy_from_slice(src);
        Ok(())
    }
}

/// Bytes of memory the compact solver needs for layer `n` besides the
/// baseline: one byte per position and the buffers of a window of lists.
pub fn working_bytes(n: u32) -> u64 {
    layer_size(n).next_multiple_of(8) + BUFFER_BYTES
}

/// The buffers of lists and lower-layer chunks, at most.
const BUFFER_BYTES: u64 = 12 << 20;

/// The memory guard's estimate of the compact solver's peak anonymous
/// memory for layer `n`.
pub fn memory_estimate(n: u32) -> u64 {
    working_bytes(n) + super::BASELINE_BYTES
}

/// The memory guard's estimate for each of `ranks` ranks: the largest
/// part's byte per position and buffers, and with several ranks the exits
/// exchanged per round and the sweep's updates in flight.
pub fn memory_estimate_ranks(n: u32, ranks: usize) -> u64 {
    if ranks <= 1 {
        return memory_estimate(n);
    }
    let size = layer_size(n);
    let most = (0..ranks)
        .map(|r| Part::new(size, WINDOW, r, ranks).len())
        .max()
        .unwrap_or(0);
    most.next_multiple_of(8)
        + BUFFER_BYTES
        + EXCHANGE_BYTES
        + SWEEP_EXCHANGE_BYTES
        + most / 32
        + super::BASELINE_BYTES
}

/// The sweep's updates for other ranks in flight (sent, received and the
/// ones they cause), per group of applied windows: an allowance of three
/// 8-byte updates per position of a group, plus 1/32 byte per position of
/// the part (the chains of settlements an update sets off grow with the
/// layer). An allowance, not a bound: measured with two ranks, the updates
/// took 71 MiB on layer 24 and 101 MiB on layer 29.
const SWEEP_EXCHANGE_BYTES: u64 = 3 * APPLY_WINDOWS as u64 * WINDOW * 8;

/// Exits sent and received per round, at most about (one per lower
/// position streamed; measured: about 0.6).
const EXCHANGE_BYTES: u64 = 2 * ROUND_CHUNKS * CHUNK * 8;

/// Units of work of the compact solve of layer `n`: one per position in
/// each exits pass (three with the envelope, one without) and per possible
/// settlement in each sweep (two per position in the envelope sweep, one
/// in the score sweep).
pub fn work_units(n: u32, envelope: bool) -> u64 {
    layer_size(n) * if envelope { 6 } else { 2 }
}

/// The scratch folder, the error of a failed access to it, and the
/// traffic.
#[derive(Clone)]
struct Disk(std::sync::Arc<DiskInner>);

struct DiskInner {
    dir: PathBuf,
    written: AtomicU64,
    read: AtomicU64,
    live: AtomicU64,
    peak: AtomicU64,
    lower: AtomicU64,
    sent: AtomicU64,
}

impl Disk {
    fn new(dir: &Path) -> Self {
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
    fn dir(&self) -> &Path {
        &self.0.dir
    }
    fn err(&self, source: std::io::Error) -> SolveError {
        SolveError::Scratch {
            dir: self.0.dir.clone(),
            source,
        }
    }
    fn wrote(&self, k: u64) {
        self.0.written.fetch_add(k, Relaxed);
        let live = self.0.live.fetch_add(k, Relaxed) + k;
        self.0.peak.fetch_max(live, Relaxed);
    }
    fn freed(&self, k: u64) {
        self.0.live.fetch_sub(k, Relaxed);
    }
    fn figures(&self) -> crate::table::IoFigures {
        crate::table::IoFigures {
            lower_read_bytes: self.0.lower.load(Relaxed),
            scratch_written_bytes: self.0.written.load(Relaxed),
            scratch_read_bytes: self.0.read.load(Relaxed),
            scratch_peak_bytes: self.0.peak.load(Relaxed),
            sent_bytes: self.0.sent.load(Relaxed),
        }
    }
}

/// Lists per threshold (at `n - t`); `None`: empty.
type Lists = Vec<Option<List>>;

/// A list of positions in index order, in an unnamed temporary file.
struct List {
    disk: Disk,
    file: File,
    /// Per window: offset and stored length of its blob, and its length
    /// before zstd (0: stored as is; missing windows are empty).
    blobs: Vec<(u64, usize, usize)>,
    end: u64,
    entries: u64,
}

/// Blobs at least this long are stored compressed (zstd level 1): the gaps
/// are small numbers, and the disk the lists take matters more than the
/// time zstd takes.
const ZSTD_FROM: usize = 256;

impl List {
    fn new(disk: &Disk) -> Result<Self, SolveError> {
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
    fn pack(disk: &Disk, blob: Vec<u8>) -> Result<(Vec<u8>, usize), SolveError> {
        if blob.len() >= ZSTD_FROM {
            let packed = zstd::bulk::compress(&blob, 1).map_err(|e| disk.err(e))?;
            Ok((packed, blob.len()))
        } else {
            Ok((blob, 0))
        }
    }

    /// Appends the blob of window `w` (windows in order, gaps empty), as
    /// [`List::pack`] made it.
    fn append(
        &mut self,
        disk: &Disk,
        w: usize,
        (stored, raw): &(Vec<u8>, usize),
        entries: u64,
    ) -> Result<(), SolveError> {
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
    fn blob(&self, disk: &Disk, w: usize, buf: &mut Vec<u8>) -> Result<(), SolveError> {
        let raw = self.read_stored(disk, w, buf)?;
        unpack(disk, buf, raw)
    }

    /// The stored bytes of window `w`'s blob; its length before zstd.
    fn read_stored(&self, disk: &Disk, w: usize, buf: &mut Vec<u8>) -> Result<usize, SolveError> {
        let (at, len, raw) = self.blobs.get(w).copied().unwrap_or((0, 0, 0));
        buf.clear();
        buf.resize(len, 0);
        disk.0.read.fetch_add(len as u64, Relaxed);
        self.file.read_exact_at(buf, at).map_err(|e| disk.err(e))?;
        Ok(raw)
    }
}

/// A stored blob made whole again (`raw` its length before zstd, 0: as is).
fn unpack(disk: &Disk, buf: &mut Vec<u8>, raw: usize) -> Result<(), SolveError> {
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

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline]
fn get_varint(b: &[u8], at: &mut usize) -> u64 {
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
fn put_segment(out: &mut Vec<u8>, chunk: u64, offsets: &[u32], gaps: &mut Vec<u8>) {
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
fn segments(blob: &[u8], window_start: u64) -> Vec<(u64, usize, &[u8])> {
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
fn for_each_index(base: u64, count: usize, gaps: &[u8], mut f: impl FnMut(u64)) {
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
fn write_lists<F>(
    disk: &Disk,
    lists: &mut [List],
    bytes: &mut [u8],
    part: Part,
    classify: F,
) -> Result<(), SolveError>
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
            .collect::<Result<_, SolveError>>()?;
        for (l, stored, count) in packed {
            lists[l].append(disk, w as usize, &stored, count)?;
        }
    }
    Ok(())
}

/// A position's exits that need no lower layer, and its internal moves:
/// `NO_EXIT`, `-n` (no move) or `+n` (a move leaves the opponent empty).
#[inline]
fn forward(n: u32, p: &Position) -> (i32, u8) {
    let ni = n as i32;
    if p.mover_seeds() == 0 {
        return (-ni, 0);
    }
    let mut e = NO_EXIT;
    let mut internal = 0;
    for m in p.moves().legal() {
        if m.child.mover_seeds() == 0 {
            e = ni;
        } else if m.captured == 0 {
            internal += 1;
        }
    }
    (e, internal)
}

/// This rank's part of the layer, and the other ranks.
#[derive(Clone, Copy)]
struct Ranks<'a> {
    part: Part,
    comm: &'a dyn Comm,
}

impl Ranks<'_> {
    /// Sends each message to the owner of index `m >> shift` (never this
    /// rank); returns the messages other ranks sent to this one.
    fn exchange(&self, disk: &Disk, msgs: Vec<u64>, shift: u32) -> Result<Vec<u64>, SolveError> {
        let mut out = vec![Vec::new(); self.comm.size()];
        disk.0.sent.fetch_add(8 * msgs.len() as u64, Relaxed);
        for m in msgs {
            out[self.part.owner(m >> shift)].push(m);
        }
        Ok(self.comm.exchange(out)?)
    }
}

/// Every position's [`forward`] facts, computed once per layer and kept
/// in an unnamed scratch file, half a byte per position: 0..=6 internal
/// moves and no exit without a lower layer, 7 no move (`-n`), 8 a move
/// that leaves the opponent empty (`+n`; such a position has no internal
/// move, since then no move feeds the opponent).
struct Facts {
    disk: Disk,
    file: File,
    n: u32,
    /// The part of the layer they cover.
    part: Part,
}

impl Drop for Facts {
    fn drop(&mut self) {
        self.disk.freed(self.part.len().div_ceil(2));
    }
}

const NO_MOVE: u8 = 7;
const EMPTIES: u8 = 8;

impl Facts {
    fn compute(disk: &Disk, n: u32, part: Part) -> Result<Self, SolveError> {
        let file = tempfile::tempfile_in(disk.dir()).map_err(|e| disk.err(e))?;
        (0..part.len().div_ceil(CHUNK))
            .into_par_iter()
            .try_for_each(|c| {
                let start = part.lo + c * CHUNK;
                let end = (start + CHUNK).min(part.hi);
                let mut out = vec![0u8; (end - start).div_ceil(2) as usize];
                for (g, p) in LayerIter::range(n, start, end) {
                    let (e, internal) = forward(n, &p);
                    let v = match e {
                        NO_EXIT => internal,
                        e if e < 0 => NO_MOVE,
                        _ => EMPTIES,
                    };
                    let o = (g - start) as usize;
                    out[o / 2] |= v << (o % 2 * 4);
                }
                disk.wrote(out.len() as u64);
                file.write_all_at(&out, (start - part.lo) / 2)
                    .map_err(|e| disk.err(e))
            })?;
        Ok(Facts {
            disk: disk.clone(),
            file,
            n,
            part,
        })
    }

    /// The facts of positions `start..start + out.len()` of the part
    /// (`start` even), one per byte.
    fn read(&self, disk: &Disk, start: u64, out: &mut [u8]) -> Result<(), SolveError> {
        let mut packed = vec![0u8; out.len().div_ceil(2)];
        disk.0.read.fetch_add(packed.len() as u64, Relaxed);
        self.file
            .read_exact_at(&mut packed, (start - self.part.lo) / 2)
            .map_err(|e| disk.err(e))?;
        for (o, v) in out.iter_mut().enumerate() {
            *v = packed[o / 2] >> (o % 2 * 4) & 0xf;
        }
        Ok(())
    }

    /// The exit a fact stands for.
    fn exit(&self, v: u8) -> i32 {
        match v {
            NO_MOVE => -(self.n as i32),
            EMPTIES => self.n as i32,
            _ => NO_EXIT,
        }
    }
}

/// Best exits of this rank's positions of layer `n` into `x` (encoded,
/// `enc`), capture children valued by table `kind` of the lower layers.
/// Each rank streams its share of every lower table and sends the exits it
/// finds for other ranks' positions to them, a round of chunks at a time.
fn exits(
    disk: &Disk,
    ranks: Ranks,
    facts: &Facts,
    lower: &dyn Lower,
    kind: Kind,
    x: &mut Buffer,
    obs: &dyn Observer,
) -> Result<(), SolveError> {
    let (n, part) = (facts.n, ranks.part);
    x.as_mut_slice()[..part.len() as usize]
        .par_chunks_mut(CHUNK as usize)
        .enumerate()
        .try_for_each(|(c, out)| {
            facts.read(disk, part.lo + c as u64 * CHUNK, out)?;
            for o in out.iter_mut() {
                *o = enc(facts.exit(*o));
            }
            Ok::<(), SolveError>(())
        })?;
    let xa = x.atomic();
    let lo = part.lo;
    let (me, nr) = (ranks.comm.rank() as u64, ranks.comm.size() as u64);
    for c in 2..=MAX_CAPTURE.min(n) {
        let k = n - c;
        if k == 47 {
            continue;
        }
        let ks = layer_size(k);
        let chunks = ks.div_ceil(CHUNK);
        // This rank's chunks of the lower table; every rank makes as many
        // rounds as the largest share needs (one round alone).
        let (from, to) = (me * chunks / nr, (me + 1) * chunks / nr);
        let per = if nr == 1 { chunks.max(1) } else { ROUND_CHUNKS };
        for round in 0..chunks.div_ceil(nr).div_ceil(per) {
            let a = (from + round * per).min(to);
            let b = (a + per).min(to);
            let remote: Vec<Vec<u64>> = (a..b)
                .into_par_iter()
                .map_init(
                    || (vec![0u8; CHUNK as usize], Vec::with_capacity(BATCH * 4)),
                    |(buf, batch), i| {
                        let start = i * CHUNK;
                        let end = (start + CHUNK).min(ks);
                        let buf = &mut buf[..(end - start) as usize];
                        lower.read(k, kind, start, buf)?;
                        disk.0.lower.fetch_add(buf.len() as u64, Relaxed);
                        let mut remote = Vec::new();
                        let flush = |batch: &mut Vec<(usize, u8)>| {
                            for &(i, v) in batch.iter() {
                                xa[i].fetch_max(v, Relaxed);
                            }
                            batch.clear();
                        };
                        for (g, child) in LayerIter::range(k, start, end) {
                            if child.mover_seeds() == 0 {
                                continue;
                            }
                            let v = enc(c as i32 - buf[(g - start) as usize] as i8 as i32);
                            child.for_each_capture_predecessor(c, |p| {
                                let g = rank(&p);
                                if part.has(g) {
                                    let i = (g - lo) as usize;
                                    prefetch(xa[i].as_ptr());
                                    batch.push((i, v));
                                } else {
                                    remote.push(g << 8 | v as u64);
                                }
                            });
                            if batch.len() >= BATCH {
                                flush(batch);
                            }
                        }
                        flush(batch);
                        Ok::<_, SolveError>(remote)
                    },
                )
                .collect::<Result<_, _>>()?;
            if nr > 1 {
                let got = ranks.exchange(disk, remote.concat(), 8)?;
                got.par_chunks(RECEIVED_BATCH).for_each(|ms| {
                    for &m in ms {
                        xa[((m >> 8) - lo) as usize].fetch_max(m as u8, Relaxed);
                    }
                });
            }
        }
    }
    obs.advance(part.len());
    Ok(())
}

/// The lists of one sweep: for each threshold `t` (at `n - t`), the
/// positions whose win exit is `t`, and those whose lose exit is `-t`;
/// the positions without any exit on the lose side (their flag is set
/// from the start).
struct ExitLists {
    win: Lists,
    lose: Lists,
    none: Option<List>,
}

/// Threshold range of a sweep: `n` down to `last`.
fn last_threshold(n: u32, envelope: bool) -> i32 {
    if envelope {
        1 - n as i32
    } else {
        1
    }
}

/// Sorts exits `x` into threshold lists: `win` side, `lose` side, or both.
fn sort_exits(
    disk: &Disk,
    n: u32,
    part: Part,
    last: i32,
    x: &mut Buffer,
    win: Option<&mut Lists>,
    lose: Option<(&mut Lists, &mut Option<List>)>,
) -> Result<(), SolveError> {
    let ni = n as i32;
    let count = (ni - last + 1).max(0) as usize;
    let (want_win, want_lose) = (win.is_some(), lose.is_some());
    // Lists 0..count: win at threshold n - i; count..2 count: lose at
    // threshold n - (i - count); 2 count: no exit.
    let mut lists: Vec<List> = (0..2 * count + 1)
        .map(|_| List::new(disk))
        .collect::<Result<_, _>>()?;
    write_lists(
        disk,
        &mut lists,
        &mut x.as_mut_slice()[..part.len() as usize],
        part,
        |_, bytes, emit| {
            for (o, &b) in bytes.iter().enumerate() {
                let e = dec(b);
                if want_win && e >= last && e <= ni {
                    emit((ni - e) as usize, o as u32);
                }
                if want_lose {
                    if e == NO_EXIT {
                        emit(2 * count, o as u32);
                    } else if -e >= last && -e <= ni {
                        emit(count + (ni + e) as usize, o as u32);
                    }
                }
            }
        },
    )?;
    let none = lists.pop();
    let lose_lists: Lists = lists.drain(count..).map(Some).collect();
    let win_lists: Lists = lists.into_iter().map(Some).collect();
    if let Some(w) = win {
        *w = win_lists;
    }
    if let Some((l, nl)) = lose {
        *l = lose_lists;
        *nl = none;
    }
    Ok(())
}

/// One threshold game on the compact state of this rank's part.
struct Sweep<'a> {
    n: u32,
    /// The part's state: index `g` at `g - part.lo`.
    st: &'a [AtomicU8],
    part: Part,
    /// The score: one value per position, so settling either side settles
    /// both.
    joint: bool,
}

impl Sweep<'_> {
    #[inline(always)]
    fn win_open(&self, b: u8) -> bool {
        b & if self.joint {
            WIN_BITS | LOSE_BITS
        } else {
            WIN_BITS
        } == 0
    }
    #[inline(always)]
    fn lose_open(&self, b: u8) -> bool {
        b & if self.joint {
            WIN_BITS | LOSE_BITS
        } else {
            LOSE_BITS
        } == 0
    }
    #[inline(always)]
    fn settle_win(&self, g: usize) -> bool {
        self.st[g]
            .fetch_update(Relaxed, Relaxed, |b| {
                self.win_open(b).then_some(b | WIN_NOW)
            })
            .is_ok()
    }
    #[inline(always)]
    fn settle_lose(&self, g: usize) -> bool {
        self.st[g]
            .fetch_update(Relaxed, Relaxed, |b| {
                (self.lose_open(b) && b & CNT == 0 && b & FLAG != 0).then_some(b | LOSE_NOW)
            })
            .is_ok()
    }

    /// Applies an exit list at threshold `t`: `lose` lists set the flag
    /// (and settle a position with no child left), win lists settle.
    /// Returns the settlements and the updates for other ranks.
    /// With several ranks, the updates for other ranks go out after each
    /// group of windows (every rank makes as many rounds as the largest
    /// part needs), so they never pile up; those left are in `outbox`.
    fn apply(
        &self,
        disk: &Disk,
        ranks: Ranks,
        list: &List,
        lose: bool,
        outbox: &mut Vec<u64>,
    ) -> Result<u64, SolveError> {
        let part = self.part;
        let windows = part.windows() as usize;
        let several = ranks.comm.size() > 1;
        let groups = if several {
            part.most_windows() as usize
        } else {
            windows
        }
        .div_ceil(APPLY_WINDOWS);
        let mut total = 0;
        let mut bufs: Vec<(usize, Vec<u8>, usize)> = Vec::new();
        for first in (0..groups).map(|g| g * APPLY_WINDOWS) {
            bufs.clear();
            for w in first..(first + APPLY_WINDOWS).min(windows) {
                let mut buf = Vec::new();
                let raw = list.read_stored(disk, w, &mut buf)?;
                if !buf.is_empty() {
                    bufs.push((w, buf, raw));
                }
            }
            bufs.par_iter_mut()
                .try_for_each(|(_, buf, raw)| unpack(disk, buf, *raw))?;
            let segs: Vec<(u64, usize, &[u8])> = bufs
                .iter()
                .flat_map(|(w, buf, _)| segments(buf, part.lo + *w as u64 * WINDOW))
                .collect();
            total += self.settle_each(&segs, outbox, |&(base, count, gaps), stack| {
                for_each_index(base, count, gaps, |g| {
                    let i = (g - part.lo) as usize;
                    let settled = if lose {
                        let old = self.st[i].fetch_or(FLAG, Relaxed);
                        old & CNT == 0 && self.lose_open(old) && self.settle_lose(i)
                    } else {
                        self.settle_win(i)
                    };
                    if settled {
                        stack.push(Item {
                            pos: unrank_unchecked(self.n, g),
                            lose,
                        });
                    }
                });
            });
            if several {
                total += self.round(disk, ranks, outbox)?;
            }
        }
        Ok(total)
    }

    /// What an update does to the predecessor at state offset `i`: a
    /// child settled on the lose side settles it on the win side; one
    /// settled on the win side takes one from its counter, which may settle
    /// it on the lose side. Returns the side it settled on (`true`: lose).
    #[inline(always)]
    fn visit(&self, i: usize, from_lose: bool) -> Option<bool> {
        if from_lose {
            return self.settle_win(i).then_some(false);
        }
        let old = self.st[i].fetch_sub(1, Relaxed);
        (old & CNT == 1 && old & FLAG != 0 && self.lose_open(old) && self.settle_lose(i))
            .then_some(true)
    }

    /// Propagates the settlements on the stack to closure in this rank's
    /// part; updates of other ranks' positions go to `remote` as
    /// `g << 1 | from_lose`.
    fn drain(&self, work: &mut Work, remote: &mut Vec<u64>) -> u64 {
        let part = self.part;
        let locate = |p: &Position| {
            let g = rank(p);
            if part.has(g) {
                prefetch(self.st[(g - part.lo) as usize].as_ptr());
            }
            g as usize
        };
        super::drain(work, locate, |g, p, from_lose, stack| {
            let g = g as u64;
            if !part.has(g) {
                remote.push(g << 1 | from_lose as u64);
            } else if let Some(lose) = self.visit((g - part.lo) as usize, from_lose) {
                stack.push(Item { pos: p, lose });
            }
        })
    }

    /// Exchanges the updates for other ranks' positions until no rank has
    /// any left (at once with one rank). Returns the settlements.
    fn settle_remote(
        &self,
        disk: &Disk,
        ranks: Ranks,
        mut outbox: Vec<u64>,
    ) -> Result<u64, SolveError> {
        let mut total = 0;
        loop {
            let mut pending = [outbox.len() as u64];
            ranks.comm.sum(&mut pending)?;
            if pending[0] == 0 {
                return Ok(total);
            }
            total += self.round(disk, ranks, &mut outbox)?;
        }
    }

    /// One exchange: sends `outbox` to the owners, applies what arrives,
    /// and leaves in `outbox` the updates that causes for other ranks.
    /// Returns the settlements.
    fn round(&self, disk: &Disk, ranks: Ranks, outbox: &mut Vec<u64>) -> Result<u64, SolveError> {
        let lo = self.part.lo;
        let got = ranks.exchange(disk, std::mem::take(outbox), 1)?;
        let batches: Vec<&[u64]> = got.chunks(RECEIVED_BATCH).collect();
        Ok(self.settle_each(&batches, outbox, |ms, stack| {
            for &m in ms.iter() {
                let g = m >> 1;
                if let Some(lose) = self.visit((g - lo) as usize, m & 1 != 0) {
                    stack.push(Item {
                        pos: unrank_unchecked(self.n, g),
                        lose,
                    });
                }
            }
        }))
    }

    /// Runs `seed` on every unit in parallel (it pushes the settlements it
    /// makes), propagates them to closure in this rank's part, and adds the
    /// updates for other ranks to `outbox`. Returns the settlements.
    fn settle_each<T: Sync>(
        &self,
        units: &[T],
        outbox: &mut Vec<u64>,
        seed: impl Fn(&T, &mut Vec<Item>) + Sync,
    ) -> u64 {
        let done: Vec<(u64, Vec<u64>)> = units
            .par_iter()
            .map_init(Work::default, |work, u| {
                seed(u, &mut work.stack);
                let mut remote = Vec::new();
                let c = self.drain(work, &mut remote);
                (c, remote)
            })
            .collect();
        let mut total = 0;
        for (c, r) in done {
            total += c;
            outbox.extend(r);
        }
        total
    }
}

/// One sweep: layer `n`, thresholds `n` down to `last`, the score's
/// single value (`joint`) or the envelope's two, and the settlements each
/// position can make (its progress units).
#[derive(Clone, Copy)]
struct Game {
    n: u32,
    last: i32,
    joint: bool,
    per_position: u64,
}

/// Runs one sweep (thresholds `n` down to `last`) on a fresh state; returns
/// the result lists (win side, lose side, per threshold at `n - t`) and the
/// settlements.
fn sweep(
    disk: &Disk,
    ranks: Ranks,
    facts: &Facts,
    game: Game,
    mut lists: ExitLists,
    obs: &dyn Observer,
) -> Result<(Lists, Lists, u64), SolveError> {
    let Game {
        n,
        last,
        joint,
        per_position,
    } = game;
    let part = ranks.part;
    let size = part.len();
    let mut state = Buffer::zeroed(size.next_multiple_of(8) as usize)?;
    state.as_mut_slice()[..size as usize]
        .par_chunks_mut(CHUNK as usize)
        .enumerate()
        .try_for_each(|(c, out)| {
            facts.read(disk, part.lo + c as u64 * CHUNK, out)?;
            for o in out.iter_mut() {
                if *o > 6 {
                    *o = 0;
                }
            }
            Ok::<(), SolveError>(())
        })?;
    let count = (n as i32 - last + 1).max(0) as usize;
    let mut rwin: Lists = (0..count).map(|_| None).collect();
    let mut rlose: Lists = (0..count).map(|_| None).collect();
    let mut total = 0;
    for t in (last..=n as i32).rev() {
        let ti = (n as i32 - t) as usize;
        let mut settled = 0;
        {
            let sw = Sweep {
                n,
                st: state.atomic(),
                part,
                joint,
            };
            let mut outbox = Vec::new();
            // Every rank applies the same lists (a rank's part of a list
            // may be empty), so the rounds inside match.
            let mut apply = |l: Option<List>, lose: bool| -> Result<(), SolveError> {
                if let Some(l) = l {
                    settled += sw.apply(disk, ranks, &l, lose, &mut outbox)?;
                }
                Ok(())
            };
            if ti == 0 {
                apply(lists.none.take(), true)?;
            }
            apply(lists.lose[ti].take(), true)?;
            apply(lists.win[ti].take(), false)?;
            settled += sw.settle_remote(disk, ranks, outbox)?;
        }
        if settled == 0 {
            continue;
        }
        total += settled;
        obs.advance(settled);
        // Harvest: list the positions settled at `t` and mark them done.
        let mut pair = [List::new(disk)?, List::new(disk)?];
        write_lists(
            disk,
            &mut pair,
            &mut state.as_mut_slice()[..size as usize],
            part,
            |_, bytes, emit| {
                const NOW: u64 = 0x5050_5050_5050_5050;
                let mut o = 0;
                while o < bytes.len() {
                    if o + 8 <= bytes.len() {
                        let w = u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
                        if w & NOW == 0 {
                            o += 8;
                            continue;
                        }
                    }
                    let end = (o + 8).min(bytes.len());
                    for (j, b) in bytes[o..end].iter_mut().enumerate() {
                        if *b & WIN_NOW != 0 {
                            emit(0, (o + j) as u32);
                            *b ^= WIN_NOW | WIN_DONE;
                        }
                        if *b & LOSE_NOW != 0 {
                            emit(1, (o + j) as u32);
                            *b ^= LOSE_NOW | LOSE_DONE;
                        }
                    }
                    o = end;
                }
            },
        )?;
        let [w, l] = pair;
        rwin[ti] = Some(w);
        rlose[ti] = Some(l);
    }
    obs.advance((size * per_position).saturating_sub(total));
    Ok((rwin, rlose, total))
}

/// A solved layer's tables (this rank's part of them), assembled from
/// result lists on request: the envelope after the envelope sweep, the
/// score after the score sweep.
pub struct Assembled {
    n: u32,
    part: Part,
    disk: Disk,
    envelope: bool,
    /// Win side: `lower` or the score's positive values; lose side: `upper`
    /// or the score's negative ones. Per threshold at `n - t`.
    win: Lists,
    lose: Lists,
    /// The window last assembled for each kind: (kind, window, bytes).
    cache: Mutex<Option<(Kind, u64, Vec<u8>)>>,
}

impl Assembled {
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
        }
    }

    /// Values of window `w` (of the part) of table `kind` into `out`.
    fn window(&self, kind: Kind, w: u64, out: &mut Vec<u8>) -> Result<(), SolveError> {
        let start = self.part.lo + w * WINDOW;
        let len = (start + WINDOW).min(self.part.hi) - start;
        let ni = self.n as i32;
        type Side<'a> = (&'a Lists, bool);
        let (default, sides): (i32, &[Side]) = match kind {
            Kind::Lower => (-ni, &[(&self.win, false)]),
            Kind::Upper => (ni, &[(&self.lose, true)]),
            Kind::Score => (0, &[(&self.win, false), (&self.lose, true)]),
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
    pub fn extract(&self, kind: Kind, start: usize, out: &mut [u8]) -> Result<(), SolveError> {
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
    pub fn pinned(&self) -> Result<Option<u64>, SolveError> {
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
    pub fn table(&self, kind: Kind) -> Result<Vec<u8>, SolveError> {
        let mut v = vec![0u8; self.part.len() as usize];
        self.extract(kind, self.part.lo as usize, &mut v)?;
        Ok(v)
    }
}

impl super::Tables for Assembled {
    fn has(&self, kind: Kind) -> bool {
        Assembled::has(self, kind)
    }
    fn extract(&self, kind: Kind, start: usize, out: &mut [u8]) -> Result<(), SolveError> {
        Assembled::extract(self, kind, start, out)
    }
    fn pinned(&self) -> Result<Option<u64>, SolveError> {
        Assembled::pinned(self)
    }
    fn histogram(&self) -> Vec<u64> {
        Assembled::histogram(self)
    }
    fn part(&self) -> Part {
        self.part
    }
}

/// Solves layer `n` (not 47) in one byte per position, reading the lower
/// layers through `lower` and keeping lists in unnamed files in `scratch`.
/// With several ranks (`comm`), this rank solves its part of the layer
/// ([`Part`]) together with the others; the tables (this rank's part of
/// them) are handed to `ready` as in [`super::solve_layer`]: the envelope
/// (when built), then the score.
pub fn solve_layer<E: From<SolveError>>(
    n: u32,
    lower: &dyn Lower,
    envelope: bool,
    scratch: &Path,
    comm: &dyn Comm,
    obs: &dyn Observer,
    ready: &mut dyn FnMut(&Assembled) -> Result<(), E>,
) -> Result<SolveStats, E> {
    let disk = Disk::new(scratch);
    let part = Part::new(layer_size(n), WINDOW, comm.rank(), comm.size());
    let ranks = Ranks { part, comm };
    let size = part.len();
    let mut stats = SolveStats::default();
    let t0 = Instant::now();
    let facts = Facts::compute(&disk, n, part)?;
    stats.init_seconds += t0.elapsed().as_secs_f64();
    let new_lists = || ExitLists {
        win: Vec::new(),
        lose: Vec::new(),
        none: None,
    };
    if envelope {
        obs.phase("exits");
        let t0 = Instant::now();
        let last = last_threshold(n, true);
        let mut lists = new_lists();
        {
            let mut x = Buffer::zeroed(size as usize).map_err(SolveError::from)?;
            // lower(P) >= t through an exit c - upper(C).
            exits(&disk, ranks, &facts, lower, Kind::Upper, &mut x, obs)?;
            sort_exits(&disk, n, part, last, &mut x, Some(&mut lists.win), None)?;
            // upper(P) <= -t needs every exit c - lower(C) <= -t.
            x.as_mut_slice().fill(0);
            exits(&disk, ranks, &facts, lower, Kind::Lower, &mut x, obs)?;
            sort_exits(
                &disk,
                n,
                part,
                last,
                &mut x,
                None,
                Some((&mut lists.lose, &mut lists.none)),
            )?;
        }
        stats.init_seconds += t0.elapsed().as_secs_f64();
        obs.phase("envelope");
        let t0 = Instant::now();
        let (win, lose, settled) = sweep(
            &disk,
            ranks,
            &facts,
            Game {
                n,
                last,
                joint: false,
                per_position: 2,
            },
            lists,
            obs,
        )?;
        stats.envelope_settlements = settled;
        stats.envelope_seconds = t0.elapsed().as_secs_f64();
        let tables = Assembled {
            n,
            part,
            disk: disk.clone(),
            envelope: true,
            win,
            lose,
            cache: Mutex::new(None),
        };
        ready(&tables)?;
    }
    obs.phase("exits");
    let t0 = Instant::now();
    let mut lists = new_lists();
    {
        let mut x = Buffer::zeroed(size as usize).map_err(SolveError::from)?;
        exits(&disk, ranks, &facts, lower, Kind::Score, &mut x, obs)?;
        let (mut lose, mut none) = (Vec::new(), None);
        sort_exits(
            &disk,
            n,
            part,
            1,
            &mut x,
            Some(&mut lists.win),
            Some((&mut lose, &mut none)),
        )?;
        lists.lose = lose;
        lists.none = none;
    }
    stats.init_seconds += t0.elapsed().as_secs_f64();
    obs.phase("score");
    let t0 = Instant::now();
    let (win, lose, settled) = sweep(
        &disk,
        ranks,
        &facts,
        Game {
            n,
            last: last_threshold(n, false),
            joint: true,
            per_position: 1,
        },
        lists,
        obs,
    )?;
    stats.score_settlements = settled;
    stats.score_seconds = t0.elapsed().as_secs_f64();
    ready(&Assembled {
        n,
        part,
        disk: disk.clone(),
        envelope: false,
        win,
        lose,
        cache: Mutex::new(None),
    })?;
    stats.io = Some(disk.figures());
    Ok(stats)
}

/// Solves layers `0..=max` with the compact solver, lists in `scratch`, as
/// `ranks` ranks ([`crate::comm::Threads`]: threads of this process, each
/// with `threads` threads of its own); the result is laid out as
/// [`super::solve_in_memory`]'s, the ranks' parts put together.
pub fn solve_in_memory(
    max: u32,
    envelope: bool,
    scratch: &Path,
    ranks: usize,
    threads: usize,
) -> Result<Vec<[Vec<u8>; 3]>, SolveError> {
    super::solve_layers(max, envelope, |n, below| {
        let comms = crate::comm::Threads::ranks(ranks);
        let parts: Vec<Result<[Vec<u8>; 3], SolveError>> = std::thread::scope(|s| {
            let handles: Vec<_> = comms
                .iter()
                .map(|comm| {
                    s.spawn(move || {
                        let pool = rayon::ThreadPoolBuilder::new()
                            .num_threads(threads)
                            .build()
                            .expect("a thread pool");
                        pool.install(|| {
                            let mut tables: [Vec<u8>; 3] = Default::default();
                            solve_layer(
                                n,
                                &Slices(below),
                                envelope,
                                scratch,
                                comm,
                                &super::Silent,
                                &mut |s: &Assembled| {
                                    for (k, kind) in [Kind::Score, Kind::Lower, Kind::Upper]
                                        .into_iter()
                                        .enumerate()
                                    {
                                        if s.has(kind) {
                                            tables[k] = s.table(kind)?;
                                        }
                                    }
                                    Ok::<(), SolveError>(())
                                },
                            )?;
                            Ok(tables)
                        })
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a rank panicked"))
                .collect()
        });
        let mut tables: [Vec<u8>; 3] = Default::default();
        for part in parts {
            for (t, p) in tables.iter_mut().zip(part?) {
                t.extend_from_slice(&p);
            }
        }
        Ok(tables)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every capture move of layers 2..=11 is found from its child, and
    /// every position the un-capture finds has that capture.
    #[test]
    fn capture_predecessors_are_exactly_the_captures() {
        for n in 2..=11u32 {
            for (_, p) in LayerIter::new(n) {
                for m in p.moves().legal() {
                    if m.captured > 0 && m.child.mover_seeds() > 0 {
                        let mut found = false;
                        m.child
                            .for_each_capture_predecessor(m.captured as u32, |q| found |= q == p);
                        assert!(found, "{p:?} pit {} not found from {:?}", m.pit, m.child);
                    }
                }
            }
        }
        for k in 0..=9u32 {
            for (_, child) in LayerIter::new(k) {
                for c in 2..=MAX_CAPTURE {
                    child.for_each_capture_predecessor(c, |p| {
                        assert!(p.is_indexable());
                        assert_eq!(p.seeds(), k + c);
                        assert!(
                            p.moves()
                                .legal()
                                .any(|m| m.child == child && m.captured as u32 == c),
                            "{p:?} has no capture of {c} into {child:?}"
                        );
                    });
                }
            }
        }
    }

    /// The same tables as the in-memory solver, with and without the
    /// envelope.
    #[test]
    fn same_tables_as_the_in_memory_solver() {
        let dir = tempfile::tempdir().unwrap();
        for envelope in [true, false] {
            let want = super::super::solve_in_memory(13, envelope).unwrap();
            let got = solve_in_memory(13, envelope, dir.path(), 1, 2).unwrap();
            for (n, (w, g)) in want.iter().zip(&got).enumerate() {
                assert!(w == g, "layer {n} differs (envelope {envelope})");
            }
        }
    }

    /// Any number of ranks makes the same tables as one process (layers up
    /// to 16 have more windows than ranks; small layers leave ranks empty).
    #[test]
    fn ranks_make_the_same_tables() {
        let dir = tempfile::tempdir().unwrap();
        let want = solve_in_memory(16, true, dir.path(), 1, 2).unwrap();
        for ranks in [2, 3, 4] {
            let got = solve_in_memory(16, true, dir.path(), ranks, 1).unwrap();
            for (n, (w, g)) in want.iter().zip(&got).enumerate() {
                assert!(w == g, "layer {n} differs with {ranks} ranks");
            }
        }
    }

    #[test]
    fn varint_segments_round_trip() {
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

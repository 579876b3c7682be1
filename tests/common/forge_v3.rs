//! Forged damage to compressed files of format version 3, shared by the
//! `compress_damage_v3*` tests: layer 8 as a sample (full form and scores
//! alone), where the parts of a file start, its streams and model numbers,
//! the checksum rewritten as a forger would, stream lengths and models
//! replaced, reads from memory and through `read_at` ([`Pread`]), and one
//! damaged file read without a panic.

use super::compress::{parse, raw_table, KINDS};
use super::forge::{u64_at, variant};
use awari_egdb::codec::{v3, Bytes, CompressError, CompressedTable};
use awari_egdb::format::Kind;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

pub type V3Sample = ([Vec<u8>; 3], Vec<u8>);

/// Layer 8 (75,504 entries) in format version 3, blocks of 64 entries:
/// 1,180 blocks in 19 super-blocks of the coarse index, small enough to
/// mutate millions of times. The raw tables (scores, lower, upper) and the
/// file: the full form, or the scores alone.
pub fn layer_8_v3(full: bool) -> V3Sample {
    let raws = KINDS.map(|k| raw_table(k, 8));
    let t = v3::TableSet {
        scores: &raws[0],
        envelope: full.then(|| (&raws[1][..], &raws[2][..])),
    };
    let z = v3::encode(t, &awari_egdb::rules::AWARI, 8, 64).unwrap();
    let h = parse(&z).unwrap().header().clone();
    assert_eq!((h.version, h.block_size, h.blocks()), (3, 64, 1180));
    assert_eq!(h.tables, if full { v3::FULL } else { v3::SCORES_ONLY });
    (raws, z)
}

/// The full form: scores, lower and upper of layer 8.
pub fn sample_v3() -> &'static V3Sample {
    static S: OnceLock<V3Sample> = OnceLock::new();
    S.get_or_init(|| layer_8_v3(true))
}

/// The scores-only form of layer 8.
pub fn sample_v3_scores() -> &'static V3Sample {
    static S: OnceLock<V3Sample> = OnceLock::new();
    S.get_or_init(|| layer_8_v3(false))
}

pub fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// Where the parts of a sound version 3 file start (file offsets).
#[derive(Clone, Copy, Debug)]
pub struct V3Parts {
    /// The coarse index (after the 88 bytes of the header).
    pub index: usize,
    /// The stream lengths: 2 bytes per stream, `streams` per block.
    pub lens: usize,
    /// The models.
    pub models: usize,
    /// The first block.
    pub data: usize,
    pub blocks: u64,
    pub streams: usize,
}

pub fn v3_parts(z: &[u8]) -> V3Parts {
    let h = parse(z).unwrap().header().clone();
    let blocks = h.blocks();
    V3Parts {
        index: v3::V3_HEADER_BYTES,
        lens: v3::V3_HEADER_BYTES + 8 * (blocks.div_ceil(v3::SUPER) as usize + 1),
        models: h.index_end() as usize,
        data: h.data_start() as usize,
        blocks,
        streams: v3::streams(h.tables) as usize,
    }
}

impl V3Parts {
    /// Where the length of stream `j` (0 scores, 1 envelope) of block
    /// `block` is.
    pub fn len_at(&self, block: u64, j: usize) -> usize {
        self.lens + 2 * (block as usize * self.streams + j)
    }

    /// Where the coarse index's entry `s` (the start of block `64 s`) is.
    pub fn super_at(&self, s: usize) -> usize {
        self.index + 8 * s
    }

    /// The block whose index entries hold byte `at` of header and index
    /// (block 0 for the header and the models).
    pub fn block_near(&self, at: usize) -> u64 {
        if (self.lens..self.models).contains(&at) {
            ((at - self.lens) / (2 * self.streams)) as u64
        } else if (self.index..self.lens).contains(&at) {
            (((at - self.index) / 8) as u64 * v3::SUPER).min(self.blocks - 1)
        } else {
            0
        }
    }
}

/// Every stream of a sound version 3 file, in file order: its block,
/// whether it is the envelope stream, and the bytes it takes.
pub fn v3_streams(z: &[u8]) -> Vec<(u64, bool, std::ops::Range<usize>)> {
    let p = v3_parts(z);
    let mut at = p.data;
    let mut out = Vec::new();
    for b in 0..p.blocks {
        for j in 0..p.streams {
            let l = u16::from_le_bytes([z[p.len_at(b, j)], z[p.len_at(b, j) + 1]]) as usize;
            out.push((b, j == 1, at..at + l));
            at += l;
        }
    }
    assert_eq!(at, z.len());
    out
}

/// [`forge`](super::forge::forge) for version 3: rewrites the checksum at
/// bytes 80..88 (of bytes 0..80, then the index and models as the mutated
/// header lays them out), so that the parser's other checks are reached.
pub fn forge3(z: &mut [u8]) {
    if z.len() < v3::V3_HEADER_BYTES {
        return;
    }
    let entries = u64_at(z, 40);
    let bs = u32_at(z, 36) as u64;
    if bs == 0 || entries > 1 << 40 {
        return;
    }
    let blocks = entries.div_ceil(bs);
    let streams = if z[12] == v3::FULL { 2 } else { 1 };
    let end = v3::V3_HEADER_BYTES as u64
        + 8 * (blocks.div_ceil(v3::SUPER) + 1)
        + 2 * streams * blocks
        + u32_at(z, 48) as u64;
    if end > z.len() as u64 {
        return;
    }
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&z[..80]);
    h.update(&z[v3::V3_HEADER_BYTES..end as usize]);
    let sum = h.digest();
    z[80..88].copy_from_slice(&sum.to_le_bytes());
}

/// `z` with `bytes` at `at`, the checksum forged.
pub fn set3(z: &[u8], at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut z = z.to_vec();
    z[at..at + bytes.len()].copy_from_slice(bytes);
    forge3(&mut z);
    z
}

/// `z` with the stream lengths `moves` changed by (block, stream, bytes),
/// the checksum forged.
pub fn move_lens(z: &[u8], moves: &[(u64, usize, i32)]) -> Vec<u8> {
    let p = v3_parts(z);
    let mut z = z.to_vec();
    for &(b, j, d) in moves {
        let at = p.len_at(b, j);
        let l = u16::from_le_bytes([z[at], z[at + 1]]) as i32 + d;
        z[at..at + 2].copy_from_slice(&u16::try_from(l).unwrap().to_le_bytes());
    }
    forge3(&mut z);
    z
}

/// `z` with its models replaced by `models`: the blocks moved along, the
/// models' length and the coarse index changed to match, the checksum
/// forged.
pub fn with_models(z: &[u8], models: &[u8]) -> Vec<u8> {
    let p = v3_parts(z);
    let mut out = [&z[..p.models], models, &z[p.data..]].concat();
    out[48..52].copy_from_slice(&(models.len() as u32).to_le_bytes());
    let shift = models.len() as i64 - (p.data - p.models) as i64;
    for at in (p.index..p.lens).step_by(8) {
        let v = (u64_at(&out, at) as i64 + shift) as u64;
        out[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
    forge3(&mut out);
    out
}

/// One LEB128 number at `at` of `b`: its bytes and value.
pub fn leb128(b: &[u8], at: usize) -> (usize, u64) {
    let mut v = 0u64;
    let mut k = 0;
    loop {
        let byte = b[at + k];
        v |= ((byte & 0x7f) as u64) << (7 * k);
        k += 1;
        if byte & 0x80 == 0 {
            return (k, v);
        }
    }
}

/// A number of the models of a version 3 file (see `codec`'s docs).
#[derive(Clone, Copy, Debug)]
pub struct ModelNumber {
    /// `contexts`, `context gap`, `symbols`, `symbol gap` or `frequency`
    /// (each frequency less one).
    pub what: &'static str,
    /// Whether it is the first of its kind in its model or context (a
    /// first gap may be 0).
    pub first: bool,
    pub at: usize,
    pub bytes: usize,
    pub value: u64,
}

/// The numbers of the models of the sound version 3 file `z`, in order.
pub fn model_numbers(z: &[u8]) -> Vec<ModelNumber> {
    let p = v3_parts(z);
    let mut at = p.models;
    let mut out = Vec::new();
    let mut num = |what, first, at: &mut usize| {
        let (bytes, value) = leb128(z, *at);
        out.push(ModelNumber {
            what,
            first,
            at: *at,
            bytes,
            value,
        });
        *at += bytes;
        value
    };
    while at < p.data {
        let rows = num("contexts", true, &mut at);
        for r in 0..rows {
            num("context gap", r == 0, &mut at);
            let k = num("symbols", true, &mut at);
            for j in 0..k {
                num("symbol gap", j == 0, &mut at);
                num("frequency", j == 0, &mut at);
            }
        }
    }
    assert_eq!(at, p.data);
    out
}

/// A file read through `Bytes::read_at` alone, as a table read with
/// `pread` is: the reader's other path (frames read into a buffer).
pub struct Pread<'a>(pub &'a [u8]);

impl Bytes for Pread<'_> {
    fn total_len(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_at(&self, at: u64, out: &mut [u8]) -> std::io::Result<()> {
        Bytes::read_at(self.0, at, out)
    }
}

/// The outcomes of reads, counted: `right`, or the error's [`variant`].
pub type Outcomes = BTreeMap<String, usize>;

/// Reads blocks `blocks` of every table `t` holds (whole, and one entry
/// through the cache): each gives the bytes of `raws` or a typed error.
pub fn read_v3_blocks<B: Bytes>(
    mut t: CompressedTable<B>,
    raws: &[Vec<u8>; 3],
    blocks: &[u64],
    reads: &mut Outcomes,
) {
    let h = t.header().clone();
    let bs = h.block_size as u64;
    for (k, kind) in KINDS.into_iter().enumerate() {
        if !h.holds(kind) {
            assert!(
                matches!(
                    t.serve(kind),
                    Err(CompressError::Mismatch { field: "table", .. })
                ),
                "serves {kind:?}, which it does not hold"
            );
            continue;
        }
        t.serve(kind).expect("a table the file holds");
        let raw = &raws[k];
        for &b in blocks.iter().filter(|&&b| b < h.blocks()) {
            let start = b * bs;
            let len = h.block_len(b);
            let mut out = vec![0u8; len];
            let whole = t.decompress_block(b, &mut out);
            let outcome = match &whole {
                Ok(()) => {
                    assert!(
                        raw.get(start as usize..start as usize + len) == Some(&out[..]),
                        "{kind:?} block {b} decoded to wrong bytes"
                    );
                    "right".to_string()
                }
                Err(e) => variant(e),
            };
            *reads.entry(outcome).or_default() += 1;
            // One entry through the per-thread cache: the same outcome.
            let g = start + (b * 7919) % len as u64;
            match t.get(g) {
                Ok(v) => {
                    assert_eq!(raw.get(g as usize), Some(&(v as u8)), "{kind:?} entry {g}");
                    assert!(
                        whole.is_ok(),
                        "{kind:?} block {b}: {whole:?}, entry {g} read"
                    );
                }
                Err(e) => assert_eq!(Err(e), whole, "{kind:?} entry {g}"),
            }
        }
    }
}

/// One damaged version 3 file (in memory or, with `pread`, read through
/// [`Pread`]): parsing gives a typed error, or a table whose every read of
/// `blocks` (of each table it holds) gives the right bytes or a typed
/// error, counted in `reads`. Never a panic.
pub fn try_mutation_v3(
    z: &[u8],
    raws: &[Vec<u8>; 3],
    blocks: &[u64],
    pread: bool,
    reads: &mut Outcomes,
) -> Result<(), CompressError> {
    let r = catch_unwind(AssertUnwindSafe(|| {
        if pread {
            read_v3_blocks(CompressedTable::parse(Pread(z))?, raws, blocks, reads);
        } else {
            read_v3_blocks(parse(z)?, raws, blocks, reads);
        }
        Ok(())
    }));
    r.unwrap_or_else(|_| panic!("a damaged version 3 file made the reader panic"))
}

/// Parses `z` from memory and through [`Pread`]: the same outcome.
pub fn parse_both(z: &[u8]) -> Result<(), CompressError> {
    let a = parse(z).map(|_| ());
    let b = CompressedTable::parse(Pread(z)).map(|_| ());
    assert_eq!(a, b, "in memory and through read_at");
    a
}

/// A parsed version 3 file, from memory or through [`Pread`].
pub trait Served {
    fn holds(&self, kind: Kind) -> bool;
    /// Serves `kind`, then block `block` (of `len` entries) whole, and
    /// entry `g` through the cache.
    fn read(
        &mut self,
        kind: Kind,
        block: u64,
        len: usize,
        g: u64,
    ) -> (Result<Vec<u8>, CompressError>, Result<i8, CompressError>);
}

impl<B: Bytes> Served for CompressedTable<B> {
    fn holds(&self, kind: Kind) -> bool {
        self.header().holds(kind)
    }
    fn read(
        &mut self,
        kind: Kind,
        block: u64,
        len: usize,
        g: u64,
    ) -> (Result<Vec<u8>, CompressError>, Result<i8, CompressError>) {
        self.serve(kind).expect("a table the file holds");
        let mut out = vec![0u8; len];
        let whole = self.decompress_block(block, &mut out).map(|()| out);
        (whole, self.get(g))
    }
}

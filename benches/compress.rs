//! Compressed tables: compression ratio per layer, random probes per
//! second from a compressed layer, compress and decompress throughput,
//! format 3 against format 2, and the entropies behind format 3's contexts.
//! Prints markdown tables (medians of repeated runs) for docs/compression.md.
//!
//! Needs a folder of ours with layers 12..=22 (and 20 for the probes):
//! `AWARI_BENCH_DB=/path cargo bench --bench compress [-- PART...]` with
//! PART among `ratio`, `ratio-small`, `probe`, `throughput`, `v3`,
//! `entropy` (default: all). The folder is only read; compressed files go
//! to a temporary folder.
//!
//! * `v3`: format 3 (full form and scores alone) against format 2 (zstd
//!   level 19, blocks of 4096 entries, each table alone) for every layer
//!   of 12..=24 the folder holds, with totals over 20..=24 and 12..=22;
//!   then, on one thread, for layer `AWARI_BENCH_LAYER` (default 20, else
//!   the largest held): whole-table decoding and random probes, raw folder
//!   against format 3. `AWARI_BENCH_BLOCKS=256,512,1024` measures these
//!   block sizes (default 512).
//! * `entropy`: empirical conditional entropies of the raw tables of
//!   layer `AWARI_BENCH_LAYER` (default 20) in the contexts of format 3,
//!   which stop at the start of a block (`AWARI_BENCH_BLOCKS`, default 512).
//!
//! The groups are in `compress/`: `format2.rs` (`ratio`, `ratio-small`,
//! `probe`, `throughput`), `format3.rs` (`v3`) and `entropy.rs`
//! (`entropy`); this file holds what they share and `main`.
//!
//! Cargo.toml entry: `[[bench]] name = "compress" harness = false`.

#[path = "compress/entropy.rs"]
mod entropy;
#[path = "compress/format2.rs"]
mod format2;
#[path = "compress/format3.rs"]
mod format3;

use awari_egdb::codec::{self, v3, Settings};
use awari_egdb::format::Kind;
use awari_egdb::index::{layer_size, unrank};
use awari_egdb::rules::Position;
use awari_egdb::store::Manifest;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use std::time::Instant;

const KIB: u32 = 1024;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Seconds of `f`, median of `reps` runs.
fn time(reps: usize, mut f: impl FnMut()) -> f64 {
    median(
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

fn read(dir: &Path, kind: Kind, n: u32) -> Option<Vec<u8>> {
    std::fs::read(dir.join(kind.file_name(n))).ok()
}

/// The settings of one column or row: level, block size, dictionary bytes.
type Grid = (i32, u32, u32);

fn label((l, b, d): Grid) -> String {
    let size = |x: u32| {
        if x >= KIB {
            format!("{}K", x / KIB)
        } else {
            x.to_string()
        }
    };
    let dict = if d > 0 {
        format!(" + {} dict", size(d))
    } else {
        String::new()
    };
    format!("L{l} {}{dict}", size(b))
}

fn encode(raw: &[u8], kind: Kind, n: u32, (level, block_size, dictionary): Grid) -> Vec<u8> {
    let s = Settings {
        level,
        block_size,
        dictionary,
        ..Settings::zstd(level, block_size)
    };
    codec::encode(raw, &awari_egdb::rules::AWARI, kind, n, s).expect("compress")
}

/// A new, empty temporary folder `awari-bench-TAG-PID` and the manifest
/// of `src` cut down to layer `n`, with nothing listed as compressed.
fn one_layer_folder(src: &Path, n: u32, tag: &str) -> (PathBuf, Manifest) {
    let dir = std::env::temp_dir().join(format!("awari-bench-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut m = Manifest::load(src).unwrap().expect("our folder");
    m.layers = vec![m.layer(n).expect("layer built").clone()];
    m.compressed.clear();
    (dir, m)
}

fn positions(n: u32, count: usize, seed: u64) -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count)
        .map(|_| unrank(n, rng.gen_range(0..layer_size(n))).unwrap())
        .collect()
}

/// The layer of the one-thread measurements and of `entropy` unless
/// `AWARI_BENCH_LAYER` says otherwise.
const V3_LAYER: u32 = 20;

/// `AWARI_BENCH_LAYER`, if set.
fn env_layer() -> Option<u32> {
    let v = std::env::var("AWARI_BENCH_LAYER")
        .ok()
        .filter(|v| !v.is_empty())?;
    Some(v.trim().parse().expect("AWARI_BENCH_LAYER: a layer"))
}

/// The block sizes of format 3 to measure: `AWARI_BENCH_BLOCKS` (comma
/// separated), else the default.
fn block_sizes() -> Vec<u32> {
    let Some(v) = std::env::var("AWARI_BENCH_BLOCKS")
        .ok()
        .filter(|v| !v.is_empty())
    else {
        return vec![v3::V3_DEFAULT_BLOCK_SIZE];
    };
    v.split(',')
        .map(|b| {
            let b: u32 = b
                .trim()
                .parse()
                .expect("AWARI_BENCH_BLOCKS: block sizes, 256,512,...");
            v3::check_block_size(b).unwrap_or_else(|(f, r)| panic!("{f} {b}: {r}"));
            b
        })
        .collect()
}

/// The command that runs `group` as this process was asked to.
fn command(dir: &Path, group: &str) -> String {
    let mut c = format!("AWARI_BENCH_DB={}", dir.display());
    for v in ["AWARI_BENCH_LAYER", "AWARI_BENCH_BLOCKS"] {
        if let Some(x) = std::env::var_os(v).filter(|x| !x.is_empty()) {
            c += &format!(" {v}={}", x.to_string_lossy());
        }
    }
    format!("{c} cargo bench --bench compress -- {group}")
}

/// The raw tables of layer `n`: scores, and lower and upper if held.
type Layer = (Vec<u8>, Option<(Vec<u8>, Vec<u8>)>);

fn read_layer(dir: &Path, n: u32) -> Option<Layer> {
    let scores = read(dir, Kind::Score, n)?;
    let envelope = read(dir, Kind::Lower, n).zip(read(dir, Kind::Upper, n));
    Some((scores, envelope))
}

fn main() {
    let Some(dir) = std::env::var_os("AWARI_BENCH_DB").filter(|d| !d.is_empty()) else {
        eprintln!("set AWARI_BENCH_DB to a folder of ours with layers 12..=22; skipping");
        return;
    };
    let dir = PathBuf::from(dir);
    let parts: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |p: &str| parts.is_empty() || parts.iter().any(|a| a == p);
    if want("ratio") {
        format2::ratio(&dir);
        println!();
    }
    if want("ratio-small") {
        format2::ratio_small(&dir);
        println!();
    }
    if want("probe") {
        format2::probe(&dir);
    }
    if want("throughput") {
        format2::throughput(&dir);
    }
    if want("v3") {
        format3::v3_group(&dir);
    }
    if want("entropy") {
        entropy::entropy(&dir);
    }
}

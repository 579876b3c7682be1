//! Compressed tables (format 4): bits per position per layer, the full
//! form and the scores alone; random probes per second from a compressed
//! layer against the raw one; encode and decode throughput; and the
//! entropies behind the contexts the coder uses. Prints markdown tables
//! (medians of repeated runs) for docs/compression.md.
//!
//! Needs a folder of ours with layers 12..=24 (the layers it holds are
//! measured; 20 for the probes): `AWARI_BENCH_DB=/path cargo bench --bench
//! compress [-- PART...]` with PART among `ratio`, `probe`, `throughput`,
//! `entropy` (default: all). The folder is only read; compressed files go
//! to a temporary folder.
//!
//! * `ratio`: the full form and the scores alone at the default settings
//!   for every layer of 12..=24 the folder holds, with totals over 20..=24
//!   and 12..=22.
//! * `probe`: on one thread, random `score()` and a batch of `scores()` on
//!   layer `AWARI_BENCH_LAYER` (default 20), raw against the scores alone
//!   in blocks of 32 to 128 bytes and the full form.
//! * `throughput`: encoding and decoding the scores of that layer, on one
//!   thread and on all cores.
//! * `entropy`: empirical conditional entropies of the raw tables of that
//!   layer in the contexts the coder uses, which stop at the start of a
//!   block (`AWARI_BENCH_BLOCKS`, default 512 entries).
//!
//! The groups are in `compress/`: `format4.rs` (`ratio`, `probe`,
//! `throughput`) and `entropy.rs` (`entropy`); this file holds what they
//! share and `main`.
//!
//! Cargo.toml entry: `[[bench]] name = "compress" harness = false`.

#[path = "compress/entropy.rs"]
mod entropy;
#[path = "compress/format4.rs"]
mod format4;

use awari_egdb::format::Kind;
use awari_egdb::index::{layer_size, unrank};
use awari_egdb::rules::Position;
use awari_egdb::store::Manifest;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
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

/// The layer of the one-layer measurements unless `AWARI_BENCH_LAYER`
/// says otherwise.
const LAYER: u32 = 20;

/// `AWARI_BENCH_LAYER`, if set, else [`LAYER`].
fn env_layer() -> u32 {
    std::env::var("AWARI_BENCH_LAYER")
        .ok()
        .filter(|v| !v.is_empty())
        .map_or(LAYER, |v| {
            v.trim().parse().expect("AWARI_BENCH_LAYER: a layer")
        })
}

/// The block sizes (entries) the entropies stop at: `AWARI_BENCH_BLOCKS`
/// (comma separated), else 512.
fn block_sizes() -> Vec<u32> {
    let Some(v) = std::env::var("AWARI_BENCH_BLOCKS")
        .ok()
        .filter(|v| !v.is_empty())
    else {
        return vec![512];
    };
    v.split(',')
        .map(|b| {
            let b: u32 = b
                .trim()
                .parse()
                .expect("AWARI_BENCH_BLOCKS: block sizes, 256,512,...");
            assert!(b > 0, "AWARI_BENCH_BLOCKS: a block holds an entry");
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
        eprintln!("set AWARI_BENCH_DB to a folder of ours with layers 12..=24; skipping");
        return;
    };
    let dir = PathBuf::from(dir);
    let parts: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |p: &str| parts.is_empty() || parts.iter().any(|a| a == p);
    if want("ratio") {
        format4::ratio(&dir);
    }
    if want("probe") {
        format4::probe(&dir);
    }
    if want("throughput") {
        format4::throughput(&dir);
    }
    if want("entropy") {
        entropy::entropy(&dir);
    }
}

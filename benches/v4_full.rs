//! Format 4's full form (the three tables in one file): bits per
//! position and what each part takes, random `get` of each table (in
//! memory, as a mapped table is, and by `pread`), and decoding a whole
//! `lower` table on one thread.
//!
//! `AWARI_BENCH_DB=DIR cargo bench --bench v4_full` with DIR a folder
//! holding raw `scores.n`, `lower.n` and `upper.n` (only read);
//! `AWARI_BENCH_LAYERS=20..=24` (the default) picks the layers,
//! `AWARI_BENCH_V4=64` the scores' block bytes and `AWARI_BENCH_V4_ENV`
//! the envelope's (default: [`envelope_block_bytes`]). Rates are medians
//! of three rounds.

use awari_egdb::codec::v4::{encode_full, envelope_block_bytes, V4Settings};
use awari_egdb::codec::CompressedTable;
use awari_egdb::error::SizeOf;
use awari_egdb::format::Kind;
use awari_egdb::rules::AWARI;
use awari_egdb::store::FileTable;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::time::Instant;

const PROBES: usize = 300_000;
const ROUNDS: usize = 3;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Millions of calls of `f` a second over `idx`.
fn rate(idx: &[u64], mut f: impl FnMut(u64) -> i64) -> f64 {
    let t = Instant::now();
    let mut sum = 0i64;
    for &g in idx {
        sum = sum.wrapping_add(f(g));
    }
    std::hint::black_box(sum);
    idx.len() as f64 / t.elapsed().as_secs_f64() / 1e6
}

fn layer(dir: &Path, n: u32, bb: u32, eb: u32, tmp: &Path) {
    let read = |k: Kind| std::fs::read(dir.join(k.file_name(n))).expect("a raw table");
    let raws = [Kind::Score, Kind::Lower, Kind::Upper].map(|k| (k, read(k)));
    let len = raws[0].1.len() as u64;
    let lay = V4Settings {
        block_bytes: bb,
        ..V4Settings::default()
    };
    let t0 = Instant::now();
    let file = encode_full(&raws[0].1, &raws[1].1, &raws[2].1, &AWARI, n, lay, eb).expect("encode");
    let secs = t0.elapsed().as_secs_f64();
    let path = tmp.join(format!("tables.{n}.zst"));
    std::fs::write(&path, &file).expect("write");
    let mut t = CompressedTable::parse(&file[..]).expect("parse");
    let h = t.header().clone();
    let f = h.v4().clone();
    let e = f.envelope.expect("the full form");
    let bits = |bytes: u64| bytes as f64 * 8.0 / len as f64;
    let scores_blocks = f.blocks * f.block_bytes as u64;
    let env_blocks = e.blocks * e.block_bytes as u64;
    let meta = file.len() as u64 - scores_blocks - env_blocks;
    let mut rng = rand::rngs::StdRng::seed_from_u64(n as u64);
    let idx: Vec<u64> = (0..PROBES).map(|_| rng.gen_range(0..len)).collect();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let mut rates = Vec::new();
    for (kind, raw) in &raws {
        t.serve(*kind).expect("held");
        let fl = FileTable::open(&path, file.len() as u64, SizeOf::Opened).expect("open");
        let mut p = CompressedTable::parse(fl).expect("parse");
        p.serve(*kind).expect("held");
        let (mut mem, mut pread) = (Vec::new(), Vec::new());
        // A tenth as many probes of lower and upper, which are slower.
        let k = if *kind == Kind::Score {
            PROBES
        } else {
            PROBES / 10
        };
        for _ in 0..ROUNDS {
            mem.push(rate(&idx[..k], |g| t.get(g).expect("get") as i64));
            pread.push(rate(&idx[..k / 3], |g| p.get(g).expect("get") as i64));
        }
        let s = Instant::now();
        let all = one.install(|| t.decompress_all()).expect("decode");
        let whole = len as f64 / s.elapsed().as_secs_f64() / 1e6;
        assert!(all == *raw, "layer {n} {kind:?} round trips");
        rates.push(format!(
            "{:.3} / {:.3} / {:.0}",
            median(mem),
            median(pread),
            whole
        ));
    }
    println!(
        "| {n} | {bb}/{eb} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {} | {} | {:.0} |",
        bits(file.len() as u64),
        bits(scores_blocks),
        bits(env_blocks),
        bits(meta),
        rates[0],
        rates[1],
        rates[2],
        secs
    );
}

fn main() {
    let Some(dir) = std::env::var_os("AWARI_BENCH_DB").filter(|d| !d.is_empty()) else {
        eprintln!(
            "set AWARI_BENCH_DB to a folder holding raw scores.n, lower.n, upper.n; skipping"
        );
        return;
    };
    let layers = std::env::var("AWARI_BENCH_LAYERS").unwrap_or_else(|_| "20..=24".into());
    let (a, b) = layers.split_once("..=").unwrap_or((&layers, &layers));
    let (a, b): (u32, u32) = (a.parse().expect("layers"), b.parse().expect("layers"));
    let bb: u32 = std::env::var("AWARI_BENCH_V4")
        .map(|s| s.parse().expect("block bytes"))
        .unwrap_or(64);
    let eb: u32 = std::env::var("AWARI_BENCH_V4_ENV")
        .map(|s| s.parse().expect("envelope block bytes"))
        .unwrap_or_else(|_| envelope_block_bytes(bb));
    let tmp = tempfile::tempdir().expect("temporary folder");
    println!("| layer | block bytes (scores/envelope) | bits/position | scores blocks | envelope blocks | header, index, models | scores: get in memory / pread (M/s) / whole (MB/s, 1 thread) | lower: same | upper: same | encode (s) |");
    println!("|---:|---|---:|---:|---:|---:|---|---|---|---:|");
    for n in a..=b {
        layer(Path::new(&dir), n, bb, eb, tmp.path());
    }
}

//! Format 4 (the scores alone, at several block sizes) against raw
//! tables, side by side in one run: bits per position, random `get` (in
//! memory, as a mapped table is, and by `pread`), a sorted batch
//! (`get_many`), and whole-table decoding on one thread.
//!
//! `AWARI_BENCH_DB=DIR cargo bench --bench v4` with DIR a folder holding
//! raw `scores.n` (only read); `AWARI_BENCH_LAYERS=20..=24` (the default)
//! picks the layers, `AWARI_BENCH_V4=64,96` the block sizes in bytes.
//! Each rate is the median of five rounds that alternate the forms, in
//! the process's CPU time (not wall time: the machine may be shared).

use awari_egdb::codec::v4::{encode_scores, V4Settings};
use awari_egdb::codec::CompressedTable;
use awari_egdb::error::SizeOf;
use awari_egdb::rules::AWARI;
use awari_egdb::store::FileTable;
use rand::{Rng, SeedableRng};
use std::path::Path;

/// The process's CPU time, so that rates on a shared machine count only
/// the time this process ran (user and system, all its threads).
struct Instant(f64);

impl Instant {
    fn now() -> Instant {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid timespec to write.
        unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
        Instant(t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9)
    }

    fn elapsed(&self) -> Elapsed {
        Elapsed(Instant::now().0 - self.0)
    }
}

struct Elapsed(f64);

impl Elapsed {
    fn as_secs_f64(&self) -> f64 {
        self.0
    }
}

const PROBES: usize = 1_000_000;
const ROUNDS: usize = 5;

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

struct Form {
    name: String,
    file: Vec<u8>,
}

fn layer(dir: &Path, n: u32, blocks: &[u32], tmp: &Path) {
    let raw = std::fs::read(dir.join(format!("scores.{n}"))).expect("raw scores");
    let len = raw.len() as u64;
    let mut forms = Vec::new();
    for &b in blocks {
        let s = V4Settings {
            block_bytes: b,
            ..V4Settings::default()
        };
        forms.push(Form {
            name: format!("format 4 ({b} bytes)"),
            file: encode_scores(&raw, &AWARI, n, s).expect("format 4"),
        });
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(n as u64);
    let idx: Vec<u64> = (0..PROBES).map(|_| rng.gen_range(0..len)).collect();
    let mut sorted: Vec<u64> = (0..PROBES).map(|_| rng.gen_range(0..len)).collect();
    sorted.sort_unstable();
    let raw_path = dir.join(format!("scores.{n}"));
    let raw_file = FileTable::open(&raw_path, len, SizeOf::Layer).expect("raw table");
    let tables: Vec<CompressedTable<&[u8]>> = forms
        .iter()
        .map(|f| CompressedTable::parse(&f.file[..]).expect("parse"))
        .collect();
    let paths: Vec<_> = forms
        .iter()
        .enumerate()
        .map(|(k, f)| {
            let p = tmp.join(format!("{n}.{k}.zst"));
            std::fs::write(&p, &f.file).expect("write");
            p
        })
        .collect();
    let files: Vec<CompressedTable<FileTable>> = paths
        .iter()
        .zip(&forms)
        .map(|(p, f)| {
            let t = FileTable::open(p, f.file.len() as u64, SizeOf::Opened).expect("open");
            CompressedTable::parse(t).expect("parse")
        })
        .collect();
    // [form][measure] rates over the rounds; form 0 is raw.
    let k = forms.len() + 1;
    let mut r = vec![vec![Vec::new(); 4]; k];
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    for _ in 0..ROUNDS {
        r[0][0].push(rate(
            &idx,
            |g| unsafe { std::ptr::read_volatile(&raw[g as usize]) } as i8 as i64,
        ));
        r[0][1].push(rate(&idx, |g| raw_file.get(g).expect("pread") as i64));
        r[0][2].push(rate(&sorted, |g| raw[g as usize] as i8 as i64));
        for (j, (t, f)) in tables.iter().zip(&files).enumerate() {
            r[j + 1][0].push(rate(&idx, |g| t.get(g).expect("get") as i64));
            r[j + 1][1].push(rate(&idx[..PROBES / 4], |g| {
                f.get(g).expect("pread get") as i64
            }));
            let mut out = vec![0i8; sorted.len()];
            let s = Instant::now();
            t.get_many(&sorted, &mut out).expect("batch");
            std::hint::black_box(&out);
            r[j + 1][2].push(sorted.len() as f64 / s.elapsed().as_secs_f64() / 1e6);
            let s = Instant::now();
            let all = one.install(|| t.decompress_all()).expect("decode");
            r[j + 1][3].push(len as f64 / s.elapsed().as_secs_f64() / 1e6);
            assert!(all == raw, "layer {n}: {} differs", forms[j].name);
        }
    }
    println!(
        "| {n} | raw | 8.000 | {:.2} | {:.2} | {:.2} | - |",
        median(r[0][0].clone()),
        median(r[0][1].clone()),
        median(r[0][2].clone())
    );
    for (j, f) in forms.iter().enumerate() {
        let m = |i: usize| median(r[j + 1][i].clone());
        println!(
            "| {n} | {} | {:.3} | {:.3} | {:.3} | {:.2} | {:.0} |",
            f.name,
            f.file.len() as f64 * 8.0 / len as f64,
            m(0),
            m(1),
            m(2),
            m(3)
        );
    }
    for p in paths {
        let _ = std::fs::remove_file(p);
    }
}

fn main() {
    let Some(dir) = std::env::var_os("AWARI_BENCH_DB").filter(|d| !d.is_empty()) else {
        eprintln!("set AWARI_BENCH_DB to a folder holding raw scores.n; skipping");
        return;
    };
    let layers = std::env::var("AWARI_BENCH_LAYERS").unwrap_or_else(|_| "20..=24".into());
    let (a, b) = layers.split_once("..=").unwrap_or((&layers, &layers));
    let (a, b): (u32, u32) = (a.parse().expect("layers"), b.parse().expect("layers"));
    let blocks: Vec<u32> = std::env::var("AWARI_BENCH_V4")
        .unwrap_or_else(|_| "64,96".into())
        .split(',')
        .map(|s| s.parse().expect("block bytes"))
        .collect();
    let tmp = tempfile::tempdir().expect("temporary folder");
    println!("| layer | form | bits/position | random get, in memory (M/s) | random get, pread (M/s) | sorted batch (M/s) | whole table, 1 thread (MB/s) |");
    println!("|---:|---|---:|---:|---:|---:|---:|");
    for n in a..=b {
        layer(Path::new(&dir), n, &blocks, tmp.path());
    }
}

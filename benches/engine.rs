//! What an engine author meets: a scores-only compressed folder against the
//! same scores raw, side by side in one run (the forms alternate, five
//! rounds, medians of the process's CPU time, so a shared machine's other
//! work does not count):
//!
//! * random `Database::score()` on layer `L`, both folders mapped;
//! * `Database::scores()` on a batch of 1 M random boards of layer `L`;
//! * the player's search (one thread, 16 MiB table) of three positions of
//!   24 seeds (the first drawn whose search visits 100,000 nodes or
//!   more) at depth `D`, reading the layers 0..=`L`: nodes must be equal
//!   on both folders, and the best moves and values too.
//!
//! ```text
//! awari build --max-seeds 22 --db db22 --no-envelope
//! awari compress --db db22 --out db22z --scores-only
//! AWARI_BENCH_DB=db22 AWARI_BENCH_ZDB=db22z cargo bench --bench engine
//! ```
//!
//! `AWARI_BENCH_LAYER` (default 22) is the layer probed and the highest the
//! search reads; `AWARI_BENCH_DEPTH` (default 16) the search's depth;
//! `AWARI_BENCH_PARTS` (default `score,batch,search`) which parts run.
//! Without both folders the bench prints why and does nothing.

use awari_egdb::index::{self, layer_size};
use awari_egdb::probe::Database;
use awari_egdb::rules::{Position, AWARI};
use awari_egdb::search::{Engine, Limits, Settings, TableReach};
use rand::{Rng, SeedableRng};
use std::hint::black_box;

/// The process's CPU time in seconds (user and system, all threads).
fn cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

const ROUNDS: usize = 5;
const PROBES: usize = 1_000_000;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn env_u32(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.trim()
                .parse()
                .unwrap_or_else(|_| panic!("{name}: a number"))
        })
        .unwrap_or(default)
}

/// Runs `f(form)` for both forms (0 raw, 1 compressed), `ROUNDS` times,
/// alternating; the median seconds of each.
fn side_by_side(mut f: impl FnMut(usize) -> f64) -> [f64; 2] {
    let mut t = [Vec::new(), Vec::new()];
    for r in 0..ROUNDS {
        // Alternate which form goes first.
        for k in 0..2 {
            let form = (k + r) % 2;
            t[form].push(f(form));
        }
    }
    [median(t[0].clone()), median(t[1].clone())]
}

fn main() {
    let (Some(raw), Some(zst)) = (
        std::env::var_os("AWARI_BENCH_DB").filter(|d| !d.is_empty()),
        std::env::var_os("AWARI_BENCH_ZDB").filter(|d| !d.is_empty()),
    ) else {
        eprintln!("engine bench: set AWARI_BENCH_DB (raw) and AWARI_BENCH_ZDB (scores-only compressed); skipped");
        return;
    };
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    let layer = env_u32("AWARI_BENCH_LAYER", 22);
    let depth = env_u32("AWARI_BENCH_DEPTH", 16);
    let parts = std::env::var("AWARI_BENCH_PARTS").unwrap_or("score,batch,search".into());
    // SAFETY: nothing writes to the bench folders while the bench runs.
    let dbs = unsafe { [Database::open_mapped(&raw), Database::open_mapped(&zst)] }
        .map(|d| d.unwrap_or_else(|e| panic!("{e}")));
    for db in &dbs {
        assert!(
            db.layers().contains(&layer),
            "the folders need layer {layer}"
        );
    }
    let size = layer_size(layer);
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let boards: Vec<Position> = (0..PROBES)
        .map(|_| index::unrank(layer, rng.gen_range(0..size)).unwrap())
        .collect();
    // Warm both: every page of the raw layer, every block of the other.
    for db in &dbs {
        let mut out = vec![0i8; boards.len()];
        db.scores(&boards, &mut out).unwrap();
        black_box(&out);
    }
    println!("layer {layer}: {size} positions, {PROBES} random boards");
    if parts.contains("score") {
        let t = side_by_side(|form| {
            let t0 = cpu();
            let mut sum = 0i64;
            for p in &boards {
                sum += dbs[form].score(p).unwrap() as i64;
            }
            black_box(sum);
            cpu() - t0
        });
        let m = t.map(|s| PROBES as f64 / s / 1e6);
        println!(
            "score(): raw {:.2} M/s, compressed {:.2} M/s, {:.2}x",
            m[0],
            m[1],
            m[1] / m[0]
        );
    }
    if parts.contains("batch") {
        let mut out = [vec![0i8; PROBES], vec![0i8; PROBES]];
        let t = side_by_side(|form| {
            let t0 = cpu();
            dbs[form].scores(&boards, &mut out[form]).unwrap();
            cpu() - t0
        });
        assert_eq!(out[0], out[1], "the two folders disagree");
        let m = t.map(|s| PROBES as f64 / s / 1e6);
        println!(
            "scores() of {PROBES}: raw {:.2} M/s, compressed {:.2} M/s, {:.2}x",
            m[0],
            m[1],
            m[1] / m[0]
        );
    }
    if parts.contains("decode") {
        // The whole layer decoded on one thread (every block checked).
        let path = std::path::Path::new(&zst).join(format!("scores.{layer}.zst"));
        let t = awari_egdb::codec::CompressedTable::parse(std::fs::read(&path).unwrap()).unwrap();
        let mut best = Vec::new();
        for _ in 0..3 {
            let t0 = cpu();
            black_box(t.decompress_all().unwrap());
            best.push(cpu() - t0);
        }
        println!(
            "whole layer {layer} decoded: {:.0} MB/s",
            size as f64 / median(best) / 1e6
        );
    }
    if parts.contains("search") {
        let settings = Settings {
            tables: TableReach::UpTo(layer),
            threads: 1,
            hash_bytes: 16 << 20,
        };
        let engines = dbs
            .each_ref()
            .map(|db| Engine::new(db, AWARI, settings).unwrap());
        // Three positions of 24 seeds, drawn once: the first whose search
        // on raw tables visits at least 100,000 nodes (most are proven from
        // the tables in a few thousand).
        let mut rng = rand::rngs::StdRng::seed_from_u64(24);
        let mut roots = Vec::new();
        while roots.len() < 3 {
            let p = index::unrank(24, rng.gen_range(0..layer_size(24))).unwrap();
            if p.moves(&AWARI).legal().next().is_none() {
                continue;
            }
            engines[0].clear();
            let o = engines[0]
                .search(&p, &[], Limits::depth(depth), |_| {})
                .unwrap();
            if o.nodes >= 100_000 {
                roots.push(p);
            }
        }
        let mut seen: [Vec<(u64, u8, i32)>; 2] = [Vec::new(), Vec::new()];
        let t = side_by_side(|form| {
            let mut spent = 0.0;
            seen[form].clear();
            for p in &roots {
                engines[form].clear();
                let t0 = cpu();
                let o = engines[form]
                    .search(p, &[], Limits::depth(depth), |_| {})
                    .unwrap();
                spent += cpu() - t0;
                seen[form].push((o.nodes, o.pit, o.value));
            }
            spent
        });
        assert_eq!(seen[0], seen[1], "nodes, moves or values differ");
        let nodes: u64 = seen[0].iter().map(|s| s.0).sum();
        println!(
            "search depth {depth}, 3 positions of 24 seeds, {nodes} nodes: raw {:.2} s, compressed {:.2} s, {:.2}x",
            t[0],
            t[1],
            t[0] / t[1]
        );
    }
}

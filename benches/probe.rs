//! Probe throughput from a warm layer 20 (80,214,915 positions), mapped
//! (`Database::open_mapped`) and read with `pread` (`Database::open`):
//! random `score()` probes on one thread and split over several threads,
//! `score_at()` (no ranking) and `moves()` on random positions (the C
//! API's calls on the same positions: `capi/benches/capi.rs`).
//!
//! Needs a folder with layers 0..=20: `$AWARI_BENCH_DB` if set, else
//! `target/bench-db`, built on first run if missing (a few minutes).
//!
//! Cargo.toml entry: `[[bench]] name = "probe" harness = false`.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use awari_egdb::build::{self, BuildOptions};
use awari_egdb::index::{self, layer_size};
use awari_egdb::probe::Database;
use awari_egdb::rules::Position;
use awari_egdb::solve::Silent;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The layer probed.
const LAYER: u32 = 20;
/// Positions per measured iteration.
const BATCH: usize = 1 << 18;

/// Opens the bench folder, building layers 0..=LAYER into the default one
/// when they are missing.
fn database() -> Database {
    let (dir, default) = match std::env::var_os("AWARI_BENCH_DB") {
        Some(d) if !d.is_empty() => (PathBuf::from(d), false),
        _ => (
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-db"),
            true,
        ),
    };
    let has_all = |dir: &PathBuf| {
        Database::open(dir)
            .map(|db| {
                let l = db.layers();
                (0..=LAYER).all(|n| l.contains(&n))
            })
            .unwrap_or(false)
    };
    if !has_all(&dir) {
        assert!(
            default,
            "AWARI_BENCH_DB={} lacks some of layers 0..={LAYER}",
            dir.display()
        );
        eprintln!(
            "building layers 0..={LAYER} into {} for the probe benches: this takes a few \
             minutes (about 2.5 min on 2 cores) and is done once",
            dir.display()
        );
        let t0 = Instant::now();
        let opts = BuildOptions {
            rules: awari_egdb::rules::AWARI,
            max_seeds: LAYER,
            db: dir.clone(),
            envelope: true,
            distance: true,
            memory_limit: None,
            reset_peak_rss: false,
            solver: Default::default(),
            scratch: None,
            compress_finished: None,
        };
        build::build(&opts, &Silent).unwrap_or_else(|e| panic!("building {}: {e}", dir.display()));
        eprintln!("built in {:.0?}", t0.elapsed());
    }
    // SAFETY: nothing writes to the bench folder while the benches run.
    let db =
        unsafe { Database::open_mapped(&dir) }.unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    eprintln!(
        "probing {} ({})",
        dir.display(),
        if db.is_vu() {
            "VU folder"
        } else {
            "our folder"
        }
    );
    db
}

/// Maps layers 0..=LAYER (checksumming ours) and touches every page of each,
/// so the benches measure warm probes, not page faults.
fn warm(db: &Database) {
    let t0 = Instant::now();
    let mut acc = 0i64;
    for n in 0..=LAYER {
        let size = layer_size(n);
        let mut g = 0;
        while g < size {
            acc += db.score_at(n, g).expect("layer present") as i64;
            g += 4096;
        }
    }
    black_box(acc);
    eprintln!("layers 0..={LAYER} mapped and warm in {:.1?}", t0.elapsed());
}

/// Random (index, position) pairs of layer LAYER, uniform over the layer.
fn batch(seed: u64) -> (Vec<u64>, Vec<Position>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let size = layer_size(LAYER);
    let indices: Vec<u64> = (0..BATCH).map(|_| rng.gen_range(0..size)).collect();
    let positions = indices
        .iter()
        .map(|&g| index::unrank(LAYER, g).expect("in range"))
        .collect();
    (indices, positions)
}

fn score_sum(db: &Database, positions: &[Position]) -> i64 {
    positions
        .iter()
        .map(|p| db.score(black_box(p)).expect("probe") as i64)
        .sum()
}

fn bench_probe(c: &mut Criterion) {
    let db = database();
    warm(&db);
    let (indices, positions) = batch(0x5eed_0020);
    // The answers the threaded runs must reproduce.
    let want = score_sum(&db, &positions);

    let mut g = c.benchmark_group(format!("probe/layer{LAYER}"));
    g.throughput(Throughput::Elements(BATCH as u64));
    g.sample_size(20);

    g.bench_function("score/1 thread", |b| b.iter(|| score_sum(&db, &positions)));

    // The same probes through `Database::open`, which reads with `pread`
    // (safe whatever happens to the files): one system call per probe.
    let pread = Database::open(db.dir().expect("a folder")).expect("open");
    assert_eq!(score_sum(&pread, &positions), want);
    g.bench_function("score pread/1 thread", |b| {
        b.iter(|| score_sum(&pread, &positions))
    });

    let mut out = vec![0i8; positions.len()];
    db.scores(&positions, &mut out).expect("probe");
    assert_eq!(out.iter().map(|&v| v as i64).sum::<i64>(), want);
    g.bench_function("scores batch/1 thread", |b| {
        b.iter(|| {
            db.scores(black_box(&positions), &mut out).expect("probe");
            out[0]
        })
    });

    // The Rust probe called as C calls it, through a function that is not
    // inlined into the loop: the same cost as `awari_score` (the inlined
    // loop above overlaps more table misses).
    #[inline(never)]
    fn outlined(db: &Database, p: &Position) -> i8 {
        db.score(p).expect("probe")
    }
    g.bench_function("score outlined/1 thread", |b| {
        b.iter(|| {
            positions
                .iter()
                .map(|p| outlined(&db, black_box(p)) as i64)
                .sum::<i64>()
        })
    });
    // Baseline for the probes above: rank plus a read of the same bytes as a
    // plain slice, without the Database (its checks, layer lookup and
    // dynamic dispatch).
    let raw = std::fs::read(db.dir().expect("a folder").join(format!("scores.{LAYER}")))
        .expect("read the layer");
    g.bench_function("baseline rank+slice/1 thread", |b| {
        b.iter(|| {
            positions
                .iter()
                .map(|p| raw[index::rank(black_box(p)) as usize] as i8 as i64)
                .sum::<i64>()
        })
    });

    g.bench_function("score_at/1 thread", |b| {
        b.iter(|| {
            indices
                .iter()
                .map(|&i| db.score_at(LAYER, black_box(i)).expect("probe") as i64)
                .sum::<i64>()
        })
    });

    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut counts = vec![2];
    if cores > 2 {
        counts.push(cores);
    }
    for threads in counts {
        let chunk = BATCH.div_ceil(threads);
        let run = || {
            std::thread::scope(|s| {
                let handles: Vec<_> = positions
                    .chunks(chunk)
                    .map(|part| {
                        let db = &db;
                        s.spawn(move || score_sum(db, part))
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).sum::<i64>()
            })
        };
        assert_eq!(run(), want, "threads give the same answers");
        g.bench_function(format!("score/{threads} threads"), |b| b.iter(run));
    }
    g.finish();

    // moves(): six sowings, up to six child ranks and lookups.
    let few = &positions[..BATCH / 4];
    let mut g = c.benchmark_group(format!("probe/layer{LAYER}"));
    g.throughput(Throughput::Elements(few.len() as u64));
    g.sample_size(20);
    g.bench_function("moves/1 thread", |b| {
        b.iter(|| {
            let mut acc = 0i64;
            for p in few {
                let m = db.moves(black_box(p)).expect("probe");
                acc += m.iter().filter_map(|m| m.score).map(i64::from).sum::<i64>();
            }
            acc
        })
    });
    g.finish();
}

criterion_group!(benches, bench_probe);
criterion_main!(benches);

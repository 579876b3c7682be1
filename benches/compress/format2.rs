//! The format 1 and 2 groups of the `compress` bench: `ratio`,
//! `ratio-small`, `probe` and `throughput`.

use super::{encode, label, one_layer_folder, positions, read, time, Grid, KIB};
use awari_egdb::codec::{self, CompressedTable};
use awari_egdb::format::{Checksum, Kind};
use awari_egdb::index::layer_size;
use awari_egdb::probe::Database;
use awari_egdb::store::CompressedEntry;
use std::hint::black_box;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

const LAYERS: RangeInclusive<u32> = 12..=22;

const PROBE_LAYER: u32 = 20;

/// Ratio of the score tables per layer for each level and block size, and
/// of the envelope tables at the default settings.
pub fn ratio(dir: &Path) {
    let grid: Vec<Grid> = [3, 19]
        .iter()
        .flat_map(|&l| [4 * KIB, 16 * KIB, 64 * KIB].map(|b| (l, b, 0)))
        .collect();
    ratio_table(dir, &grid, true);
}

/// Ratio of the score tables in small blocks, with and without a trained
/// dictionary of 64 KiB.
pub fn ratio_small(dir: &Path) {
    let grid: Vec<Grid> = [256, 512, KIB]
        .iter()
        .flat_map(|&b| [(19, b, 0), (19, b, 64 * KIB)])
        .collect();
    ratio_table(dir, &grid, false);
}

/// One markdown row per layer: the score table's ratio for each setting of
/// `grid`, then (with `envelope`) the envelope tables' at L19 4K.
fn ratio_table(dir: &Path, grid: &[Grid], envelope: bool) {
    let extra: &[Kind] = if envelope {
        &[Kind::Lower, Kind::Upper]
    } else {
        &[]
    };
    print!("| layer | raw bytes |");
    for &g in grid {
        print!(" {} |", label(g));
    }
    for k in extra {
        print!(" {} L19 4K |", k.stem());
    }
    println!();
    println!("|---|---|{}", "---|".repeat(grid.len() + extra.len()));
    let mut totals = vec![(0u64, 0u64); grid.len() + extra.len()];
    for n in LAYERS {
        let Some(score) = read(dir, Kind::Score, n) else {
            eprintln!("layer {n}: no scores.{n} in {}", dir.display());
            continue;
        };
        print!("| {n} | {} |", score.len());
        // Each table read once.
        let others: Vec<(Kind, Option<Vec<u8>>)> =
            extra.iter().map(|&k| (k, read(dir, k, n))).collect();
        let columns = grid.iter().map(|&g| (Kind::Score, Some(&score), g)).chain(
            others
                .iter()
                .map(|(k, r)| (*k, r.as_ref(), (19, 4 * KIB, 0))),
        );
        for (k, (kind, raw, g)) in columns.enumerate() {
            match raw {
                Some(raw) => {
                    let z = encode(raw, kind, n, g);
                    totals[k].0 += raw.len() as u64;
                    totals[k].1 += z.len() as u64;
                    print!(" {:.3} |", raw.len() as f64 / z.len() as f64);
                }
                None => print!(" - |"),
            }
        }
        println!();
    }
    print!("| all | |");
    for (raw, z) in totals {
        print!(" {:.3} |", raw as f64 / z.max(1) as f64);
    }
    println!();
}

/// A temporary folder with layer `n`: the envelope tables raw, the score
/// table compressed with the given settings (and its raw file absent).
fn compressed_folder(src: &Path, n: u32, g: Grid) -> PathBuf {
    let (dir, mut m) = one_layer_folder(src, n, "compress");
    let e = m.layers[0].clone();
    for kind in [Kind::Lower, Kind::Upper] {
        std::fs::copy(src.join(kind.file_name(n)), dir.join(kind.file_name(n))).unwrap();
    }
    let raw = read(src, Kind::Score, n).unwrap();
    let z = encode(&raw, Kind::Score, n, g);
    let name = codec::file_name(&e.scores.name);
    std::fs::write(dir.join(&name), &z).unwrap();
    m.put_compressed(CompressedEntry {
        seeds: n,
        raw: e.scores.name.clone(),
        name,
        bytes: z.len() as u64,
        xxh3: Checksum::of(&z),
        block_size: g.1,
        level: g.0,
        dictionary: g.2,
        version: 0,
        block_bytes: 0,
    });
    m.store(&dir).unwrap();
    dir
}

/// Random probes on one thread: `score()` one at a time and `scores()` on
/// a batch, per block size, against the raw layer.
pub fn probe(src: &Path) {
    let n = PROBE_LAYER;
    let singles = positions(n, 100_000, 1);
    let batch = positions(n, 1 << 18, 2);
    let raw = Database::open(src).unwrap();
    let want: i64 = singles.iter().map(|p| raw.score(p).unwrap() as i64).sum();
    let mut out = vec![0i8; batch.len()];
    raw.scores(&batch, &mut out).unwrap();
    let want_batch = out.clone();
    let rate = |db: &Database| {
        let single = time(5, || {
            let s: i64 = singles
                .iter()
                .map(|p| db.score(black_box(p)).unwrap() as i64)
                .sum();
            assert_eq!(s, want);
        });
        let mut out = vec![0i8; batch.len()];
        let batched = time(5, || {
            db.scores(black_box(&batch), &mut out).unwrap();
        });
        assert_eq!(out, want_batch);
        (
            singles.len() as f64 / single / 1e6,
            batch.len() as f64 / batched / 1e6,
        )
    };
    println!(
        "layer {n}, one thread: random `score()` ({} positions) and `scores()` on a batch of {} random positions, M probes/s (median of 5)\n",
        singles.len(),
        batch.len()
    );
    println!("| table | file bytes | score() M/s | scores() batch M/s |");
    println!("|---|---|---|---|");
    let (s, b) = rate(&raw);
    println!(
        "| raw (mapped, warm) | {} | {s:.2} | {b:.2} |",
        layer_size(n)
    );
    for g in [
        (19, 256, 0),
        (19, 256, 64 * KIB),
        (19, 512, 0),
        (19, 512, 64 * KIB),
        (19, KIB, 0),
        (19, KIB, 64 * KIB),
        (19, 2 * KIB, 0),
        (19, 4 * KIB, 0),
        (3, 4 * KIB, 0),
        (19, 16 * KIB, 0),
        (19, 64 * KIB, 0),
    ] {
        let dir = compressed_folder(src, n, g);
        let db = Database::open(&dir).unwrap();
        assert!(db.is_compressed(n, Kind::Score).unwrap());
        let bytes = std::fs::metadata(dir.join(format!("scores.{n}.zst")))
            .unwrap()
            .len();
        let (s, b) = rate(&db);
        println!("| {} | {bytes} | {s:.3} | {b:.2} |", label(g));
        drop(db);
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!();
}

/// Compress and decompress throughput of one score table, in MB/s of raw
/// bytes, on one thread and on all cores.
pub fn throughput(src: &Path) {
    let n = PROBE_LAYER;
    let raw = read(src, Kind::Score, n).unwrap();
    let mb = raw.len() as f64 / 1e6;
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    println!(
        "scores.{n} ({} bytes), MB/s of raw bytes (median of 3)\n",
        raw.len()
    );
    println!("| settings | threads | compress MB/s | decompress MB/s |");
    println!("|---|---|---|---|");
    for g in [
        (3, 4 * KIB, 0),
        (19, 4 * KIB, 0),
        (19, 16 * KIB, 0),
        (19, 512, 64 * KIB),
    ] {
        for threads in [1, cores] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut z = Vec::new();
            let c = pool.install(|| time(3, || z = encode(&raw, Kind::Score, n, g)));
            let t = CompressedTable::parse(&z[..]).unwrap();
            let d = pool.install(|| {
                time(3, || {
                    assert_eq!(t.decompress_all().unwrap().len(), raw.len());
                })
            });
            println!(
                "| {} | {threads} | {:.1} | {:.0} |",
                label(g),
                mb / c,
                mb / d
            );
        }
    }
    println!();
}

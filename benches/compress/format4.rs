//! The format 4 groups of the `compress` bench: `ratio`, `probe` and
//! `throughput`.

use super::{env_layer, one_layer_folder, positions, read, read_layer, time};
use awari_egdb::codec::v4::{self, encode_full, encode_scores, V4Settings};
use awari_egdb::codec::{self, CompressedTable, FORMAT_VERSION};
use awari_egdb::format::{Checksum, Kind};
use awari_egdb::index::layer_size;
use awari_egdb::probe::Database;
use awari_egdb::rules::AWARI;
use awari_egdb::store::CompressedEntry;
use std::hint::black_box;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

/// The layers `ratio` reports, and the ranges it totals.
const LAYERS: RangeInclusive<u32> = 12..=24;
const TOTALS: [RangeInclusive<u32>; 2] = [20..=24, 12..=22];

/// The settings of the full form with score blocks of `block_bytes`.
fn full_settings(block_bytes: u32) -> V4Settings {
    V4Settings {
        block_bytes,
        ..V4Settings::default()
    }
}

/// The full form of layer `n` at the default settings.
fn full(n: u32, scores: &[u8], lower: &[u8], upper: &[u8]) -> Vec<u8> {
    let b = v4::V4_FULL_DEFAULT_BLOCK_BYTES;
    let env = v4::envelope_block_bytes(b);
    encode_full(scores, lower, upper, &AWARI, n, full_settings(b), env).expect("full form")
}

/// Bits per position of the full form (its three tables) and of the
/// scores alone, at the default settings, for every layer of [`LAYERS`]
/// the folder holds; totals over [`TOTALS`].
pub fn ratio(dir: &Path) {
    println!("bits per position, format 4 at the default settings\n");
    println!("| layer | positions | full form (3 tables) | scores alone |");
    println!("|---:|---:|---:|---:|");
    let mut sizes: Vec<(u32, u64, u64, u64)> = Vec::new();
    for n in LAYERS {
        let Some((scores, envelope)) = read_layer(dir, n) else {
            continue;
        };
        let alone = encode_scores(&scores, &AWARI, n, V4Settings::default()).expect("scores");
        let f = envelope
            .as_ref()
            .map_or(0, |(l, u)| full(n, &scores, l, u).len() as u64);
        let positions = scores.len() as u64;
        let bits = |bytes: u64| bytes as f64 * 8.0 / positions as f64;
        println!(
            "| {n} | {positions} | {} | {:.3} |",
            if f > 0 {
                format!("{:.3}", bits(f))
            } else {
                "-".into()
            },
            bits(alone.len() as u64)
        );
        sizes.push((n, positions, f, alone.len() as u64));
    }
    for range in TOTALS {
        let (p, f, a) = sizes
            .iter()
            .filter(|s| range.contains(&s.0))
            .fold((0, 0, 0), |t, s| (t.0 + s.1, t.1 + s.2, t.2 + s.3));
        if p > 0 {
            println!(
                "| {}..={} | {p} | {:.3} | {:.3} |",
                range.start(),
                range.end(),
                f as f64 * 8.0 / p as f64,
                a as f64 * 8.0 / p as f64
            );
        }
    }
    println!();
}

/// A temporary folder with layer `n`: the scores alone in blocks of
/// `block_bytes` (the envelope's tables raw), or the full form.
fn compressed_folder(src: &Path, n: u32, block_bytes: u32, full_form: bool) -> PathBuf {
    let (dir, mut m) = one_layer_folder(src, n, "compress");
    let e = m.layers[0].clone();
    let (scores, envelope) = read_layer(src, n).expect("the layer");
    let (name, z, raws) = if full_form {
        let (l, u) = envelope.expect("the envelope");
        let z = full(n, &scores, &l, &u);
        let raws: Vec<String> = e.files().map(|(_, f)| f.name.clone()).collect();
        (codec::layer_file_name(n), z, raws)
    } else {
        for kind in [Kind::Lower, Kind::Upper] {
            std::fs::copy(src.join(kind.file_name(n)), dir.join(kind.file_name(n))).unwrap();
        }
        let s = V4Settings {
            block_bytes,
            ..V4Settings::default()
        };
        let z = encode_scores(&scores, &AWARI, n, s).expect("scores alone");
        (codec::file_name(&e.scores.name), z, vec![e.scores.name])
    };
    std::fs::write(dir.join(&name), &z).unwrap();
    for raw in raws {
        m.put_compressed(CompressedEntry {
            seeds: n,
            raw,
            name: name.clone(),
            bytes: z.len() as u64,
            xxh3: Checksum::of(&z),
            block_size: v4::V4_DEFAULT_BLOCK_CAP,
            level: 0,
            dictionary: 0,
            version: FORMAT_VERSION,
            block_bytes,
        });
    }
    m.store(&dir).unwrap();
    dir
}

/// Random probes on one thread: `score()` one at a time and `scores()` on
/// a batch, raw and compressed.
pub fn probe(src: &Path) {
    let n = env_layer();
    let singles = positions(n, 100_000, 1);
    let batch = positions(n, 1 << 18, 2);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let raw = Database::open(src).unwrap();
    let want: i64 = singles.iter().map(|p| raw.score(p).unwrap() as i64).sum();
    let mut want_batch = vec![0i8; batch.len()];
    raw.scores(&batch, &mut want_batch).unwrap();
    let rate = |db: &Database| {
        one.install(|| {
            let single = time(5, || {
                let s: i64 = singles
                    .iter()
                    .map(|p| db.score(black_box(p)).unwrap() as i64)
                    .sum();
                assert_eq!(s, want);
            });
            let mut out = vec![0i8; batch.len()];
            let batched = time(5, || db.scores(black_box(&batch), &mut out).unwrap());
            assert_eq!(out, want_batch);
            (
                singles.len() as f64 / single / 1e6,
                batch.len() as f64 / batched / 1e6,
            )
        })
    };
    println!(
        "layer {n}, one thread: random `score()` ({} positions) and `scores()` on a batch of {} random positions, M probes/s (median of 5)\n",
        singles.len(),
        batch.len()
    );
    println!("| table | file bytes | score() M/s | scores() batch M/s |");
    println!("|---|---:|---:|---:|");
    let (s, b) = rate(&raw);
    println!(
        "| raw (mapped, warm) | {} | {s:.2} | {b:.2} |",
        layer_size(n)
    );
    let forms = [32, 48, 64, 96, 128]
        .map(|b| (format!("scores alone, {b} bytes"), b, false))
        .into_iter()
        .chain([(
            "full form".to_string(),
            v4::V4_FULL_DEFAULT_BLOCK_BYTES,
            true,
        )]);
    for (label, block_bytes, full_form) in forms {
        let dir = compressed_folder(src, n, block_bytes, full_form);
        let db = Database::open(&dir).unwrap();
        assert!(db.is_compressed(n, Kind::Score).unwrap());
        let bytes: u64 = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".zst"))
            .map(|e| e.metadata().unwrap().len())
            .sum();
        let (s, b) = rate(&db);
        println!("| {label} | {bytes} | {s:.3} | {b:.2} |");
        drop(db);
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!();
}

/// Encoding and decoding one score table, in MB/s of raw bytes, on one
/// thread and on all cores.
pub fn throughput(src: &Path) {
    let n = env_layer();
    let raw = read(src, Kind::Score, n).expect("the scores");
    let mb = raw.len() as f64 / 1e6;
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    println!(
        "scores.{n} ({} bytes), MB/s of raw bytes (median of 3)\n",
        raw.len()
    );
    println!("| bytes per block | threads | encode MB/s | decode MB/s |");
    println!("|---:|---:|---:|---:|");
    for block_bytes in [64, 96] {
        for threads in [1, cores] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let s = V4Settings {
                block_bytes,
                ..V4Settings::default()
            };
            let mut z = Vec::new();
            let c = pool.install(|| {
                time(3, || {
                    z = encode_scores(&raw, &AWARI, n, s).expect("encode");
                })
            });
            let t = CompressedTable::parse(&z[..]).unwrap();
            let d = pool.install(|| time(3, || assert!(t.decompress_all().unwrap() == raw)));
            println!(
                "| {block_bytes} | {threads} | {:.1} | {:.0} |",
                mb / c,
                mb / d
            );
        }
    }
    println!();
}

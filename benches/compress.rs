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
//! Cargo.toml entry: `[[bench]] name = "compress" harness = false`.

use awari_egdb::codec::{self, v3, CompressedTable, Settings};
use awari_egdb::format::{Checksum, Kind};
use awari_egdb::index::{layer_size, unrank, LayerIter};
use awari_egdb::probe::Database;
use awari_egdb::rules::Position;
use awari_egdb::store::{CompressedEntry, Manifest};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::hint::black_box;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Instant;

const LAYERS: RangeInclusive<u32> = 12..=22;
const PROBE_LAYER: u32 = 20;
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

/// Ratio of the score tables per layer for each level and block size, and
/// of the envelope tables at the default settings.
fn ratio(dir: &Path) {
    let grid: Vec<Grid> = [3, 19]
        .iter()
        .flat_map(|&l| [4 * KIB, 16 * KIB, 64 * KIB].map(|b| (l, b, 0)))
        .collect();
    ratio_table(dir, &grid, true);
}

/// Ratio of the score tables in small blocks, with and without a trained
/// dictionary of 64 KiB.
fn ratio_small(dir: &Path) {
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

fn positions(n: u32, count: usize, seed: u64) -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count)
        .map(|_| unrank(n, rng.gen_range(0..layer_size(n))).unwrap())
        .collect()
}

/// Random probes on one thread: `score()` one at a time and `scores()` on
/// a batch, per block size, against the raw layer.
fn probe(src: &Path) {
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
fn throughput(src: &Path) {
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

// ---------------------------------------------------------------------
// Format 3: the `v3` and `entropy` groups.

/// The layers the `v3` group reports (the targets are 20..=24), and the
/// ranges it totals.
const V3_LAYERS: RangeInclusive<u32> = 12..=24;
const V3_TOTALS: [RangeInclusive<u32>; 2] = [20..=24, 12..=22];
/// The layer of the one-thread measurements and of `entropy` unless
/// `AWARI_BENCH_LAYER` says otherwise.
const V3_LAYER: u32 = 20;
/// The settings format 2 is measured with: the project's defaults.
const V2: Grid = (19, 4 * KIB, 0);

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

/// The format 3 files of layer `n` in blocks of `block_size`: the full
/// form and the scores alone.
fn encode_v3(n: u32, (scores, envelope): &Layer, block_size: u32) -> (Vec<u8>, Vec<u8>) {
    let rules = &awari_egdb::rules::AWARI;
    let full = v3::TableSet {
        scores,
        envelope: envelope.as_ref().map(|(l, u)| (&l[..], &u[..])),
    };
    let only = v3::TableSet {
        scores,
        envelope: None,
    };
    (
        v3::encode(full, rules, n, block_size).expect("format 3, full form"),
        v3::encode(only, rules, n, block_size).expect("format 3, scores alone"),
    )
}

/// Bytes of one layer (or a sum of layers): format 3 at one block size,
/// the full form in parts and the scores alone, and format 2.
#[derive(Clone, Copy, Default)]
struct Sizes {
    positions: u64,
    full: u64,
    scores_stream: u64,
    envelope_stream: u64,
    /// Header and block index.
    index: u64,
    models: u64,
    scores_only: u64,
    /// Format 2: the three tables, and the scores alone.
    v2: u64,
    v2_scores: u64,
}

impl Sizes {
    fn add(&mut self, o: &Sizes) {
        self.positions += o.positions;
        self.full += o.full;
        self.scores_stream += o.scores_stream;
        self.envelope_stream += o.envelope_stream;
        self.index += o.index;
        self.models += o.models;
        self.scores_only += o.scores_only;
        self.v2 += o.v2;
        self.v2_scores += o.v2_scores;
    }

    /// A markdown row (`variant`: the scores model's, or blank).
    fn row(&self, label: &str, block_size: u32, variant: &str) {
        let bits = |b: u64| 8.0 * b as f64 / self.positions as f64;
        println!(
            "| {label} | {block_size} | {} | {} | {:.3} | {:.3} | {:.3} | {:.4} | {:.4} | {} | {:.3} | {variant} | {} | {:.3} | {} | {:.3} | {:.3} | {:.3} |",
            self.positions,
            self.full,
            bits(self.full),
            bits(self.scores_stream),
            bits(self.envelope_stream),
            bits(self.index),
            bits(self.models),
            self.scores_only,
            bits(self.scores_only),
            self.v2,
            bits(self.v2),
            self.v2_scores,
            bits(self.v2_scores),
            self.full as f64 / self.v2 as f64,
            self.scores_only as f64 / self.v2_scores as f64,
        );
    }
}

/// A format 3 file in parts: scores streams, envelope streams, header and
/// block index, models; and the scores model's variant.
fn v3_parts(z: &[u8]) -> (u64, u64, u64, u64, u8) {
    let t = CompressedTable::parse(z).expect("a format 3 file");
    let h = t.header();
    let l = v3::layout(h, z, z.len() as u64).expect("its layout");
    let (mut s, mut e) = (0u64, 0u64);
    for i in 0..h.blocks() {
        let (_, a, b) = l.block(i);
        s += a as u64;
        e += b as u64;
    }
    let f = h.v3().expect("a format 3 header");
    let (index, models) = (h.index_end(), f.model_bytes as u64);
    assert_eq!(index + models + s + e, z.len() as u64, "parts of the file");
    (s, e, index, models, f.variant)
}

/// Format 3 against format 2 per layer, then the one-thread measurements.
fn v3_group(dir: &Path) {
    println!("`{}`\n", command(dir, "v3"));
    let blocks = block_sizes();
    let held: Vec<u32> = V3_LAYERS
        .filter(|&n| dir.join(Kind::Score.file_name(n)).exists())
        .collect();
    let speed = env_layer().or_else(|| {
        if held.contains(&V3_LAYER) {
            Some(V3_LAYER)
        } else {
            held.last().copied()
        }
    });
    println!(
        "Format 3 (blocks of B entries) against format 2 (zstd L19, blocks of 4096 entries, each table alone). \
         Bits per position; the full form's parts add up to its size (header + index: header and block index); \
         variant: the scores model's (full form / scores alone where they differ); new/old: bytes of format 3 over format 2.\n"
    );
    println!(
        "| layer | B | positions | full bytes | full bits/pos | scores stream | envelope stream | header + index | models \
         | scores-only bytes | scores-only bits/pos | variant | format 2 bytes (3 tables) | bits/pos | format 2 scores bytes | bits/pos \
         | full / format 2 | scores-only / format 2 scores |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut per_layer: Vec<(u32, Vec<Sizes>)> = Vec::new();
    // The files of the layer measured on one thread, per block size.
    let mut kept: Vec<(u32, Vec<u8>, Vec<u8>)> = Vec::new();
    for &n in &held {
        let layer = read_layer(dir, n).expect("held");
        let Some((lower, upper)) = &layer.1 else {
            eprintln!(
                "layer {n}: no lower.{n} and upper.{n} in {}; skipped",
                dir.display()
            );
            continue;
        };
        let v2 = [
            (Kind::Score, &layer.0),
            (Kind::Lower, lower),
            (Kind::Upper, upper),
        ]
        .map(|(k, raw)| encode(raw, k, n, V2).len() as u64);
        let mut sizes = Vec::new();
        for &b in &blocks {
            let (full, only) = encode_v3(n, &layer, b);
            let (scores_stream, envelope_stream, index, models, vf) = v3_parts(&full);
            let (.., vo) = v3_parts(&only);
            let s = Sizes {
                positions: layer_size(n),
                full: full.len() as u64,
                scores_stream,
                envelope_stream,
                index,
                models,
                scores_only: only.len() as u64,
                v2: v2.iter().sum(),
                v2_scores: v2[0],
            };
            let variant = if vf == vo {
                vf.to_string()
            } else {
                format!("{vf} / {vo}")
            };
            s.row(&n.to_string(), b, &variant);
            sizes.push(s);
            if Some(n) == speed {
                kept.push((b, full, only));
            }
        }
        per_layer.push((n, sizes));
    }
    let mut untotalled = Vec::new();
    for range in V3_TOTALS {
        let inside: Vec<&(u32, Vec<Sizes>)> = per_layer
            .iter()
            .filter(|(n, _)| range.contains(n))
            .collect();
        if inside.is_empty() {
            untotalled.push(format!("{range:?}"));
            continue;
        }
        let names: Vec<String> = inside.iter().map(|(n, _)| n.to_string()).collect();
        let label = if inside.len() == range.clone().count() {
            format!("total {range:?}")
        } else {
            format!("total {range:?} (held: {})", names.join(", "))
        };
        for (k, &b) in blocks.iter().enumerate() {
            let mut t = Sizes::default();
            for (_, s) in &inside {
                t.add(&s[k]);
            }
            t.row(&label, b, "");
        }
    }
    println!();
    if !untotalled.is_empty() {
        println!(
            "No total for {}: the folder holds none of their layers.\n",
            untotalled.join(", ")
        );
    }
    match speed {
        Some(n) => v3_speed(dir, n, kept),
        None => eprintln!("no layer of {V3_LAYERS:?} in {}: no speeds", dir.display()),
    }
}

/// A temporary folder with layer `n` in format 3: the full-form file `z`
/// (blocks of `block_size` entries) listed for each of the layer's
/// tables, and no raw table.
fn v3_folder(src: &Path, n: u32, z: &[u8], block_size: u32) -> PathBuf {
    let (dir, mut m) = one_layer_folder(src, n, "v3");
    let e = m.layers[0].clone();
    let name = codec::layer_file_name(n);
    std::fs::write(dir.join(&name), z).unwrap();
    let xxh3 = Checksum::of(z);
    for f in [Some(&e.scores), e.lower.as_ref(), e.upper.as_ref()]
        .into_iter()
        .flatten()
    {
        m.put_compressed(CompressedEntry {
            seeds: n,
            raw: f.name.clone(),
            name: name.clone(),
            bytes: z.len() as u64,
            xxh3,
            block_size,
            level: 0,
            dictionary: 0,
            version: 3,
            block_bytes: 0,
        });
    }
    m.store(&dir).unwrap();
    dir
}

/// On one thread, for layer `n` and each block size (`kept`: its format 3
/// files, full form and scores alone, if already made): whole-table
/// decoding, and random probes against the raw folder.
fn v3_speed(src: &Path, n: u32, mut kept: Vec<(u32, Vec<u8>, Vec<u8>)>) {
    let layer = read_layer(src, n).unwrap_or_else(|| panic!("no scores.{n} in {}", src.display()));
    let Some((lower, upper)) = &layer.1 else {
        eprintln!("layer {n}: no lower.{n} and upper.{n}; no speeds");
        return;
    };
    if kept.is_empty() {
        for b in block_sizes() {
            let (full, only) = encode_v3(n, &layer, b);
            kept.push((b, full, only));
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let mb = layer.0.len() as f64 / 1e6;
    // MB/s of raw output decoding table `kind` of file `z` whole.
    let decode = |z: &[u8], kind: Kind, raw: &[u8]| {
        let mut t = CompressedTable::parse(z).unwrap();
        t.serve(kind).unwrap();
        let mut back = Vec::new();
        let secs = pool.install(|| time(3, || back = t.decompress_all().unwrap()));
        assert!(back == raw, "{} decoded differs", kind.stem());
        mb / secs
    };
    println!(
        "layer {n} ({} positions), one thread: decoding a whole table, MB/s of raw output (median of 3)\n",
        layer.0.len()
    );
    println!("| B | scores (scores-only file) | scores (full form) | lower (full form) | upper (full form) |");
    println!("|---|---|---|---|---|");
    for (b, full, only) in &kept {
        println!(
            "| {b} | {:.1} | {:.1} | {:.1} | {:.1} |",
            decode(only, Kind::Score, &layer.0),
            decode(full, Kind::Score, &layer.0),
            decode(full, Kind::Lower, lower),
            decode(full, Kind::Upper, upper),
        );
    }
    println!();

    let singles = positions(n, 100_000, 1);
    let batch = positions(n, 1 << 18, 2);
    let raw = Database::open(src).unwrap();
    let want: i64 = singles.iter().map(|p| raw.score(p).unwrap() as i64).sum();
    let mut want_batch = vec![0i8; batch.len()];
    raw.scores(&batch, &mut want_batch).unwrap();
    // M probes/s of one timed run.
    let single = |db: &Database| {
        let t = Instant::now();
        let s: i64 = singles
            .iter()
            .map(|p| db.score(black_box(p)).unwrap() as i64)
            .sum();
        let secs = t.elapsed().as_secs_f64();
        assert_eq!(s, want);
        singles.len() as f64 / secs / 1e6
    };
    let batched = |db: &Database| {
        let mut out = vec![0i8; batch.len()];
        let t = Instant::now();
        db.scores(black_box(&batch), &mut out).unwrap();
        let secs = t.elapsed().as_secs_f64();
        assert_eq!(out, want_batch);
        batch.len() as f64 / secs / 1e6
    };
    println!(
        "layer {n}, one thread: random `score()` ({} positions, after one untimed run) and `scores()` on a batch of {} random positions, \
         raw folder and format 3 folder (full form) alternating, M probes/s (median of 5 rounds)\n",
        singles.len(),
        batch.len()
    );
    println!("| B | file bytes | raw score() | v3 score() | v3 / raw | raw scores() | v3 scores() | v3 / raw |");
    println!("|---|---|---|---|---|---|---|---|");
    for (b, full, _) in &kept {
        let dir = v3_folder(src, n, full, *b);
        let db = Database::open(&dir).unwrap();
        assert!(db.is_compressed(n, Kind::Score).unwrap());
        let [rs, vs, rb, vb] = pool.install(|| {
            for d in [&raw, &db] {
                single(d);
                batched(d);
            }
            let mut r: [Vec<f64>; 4] = Default::default();
            for _ in 0..5 {
                r[0].push(single(&raw));
                r[1].push(single(&db));
                r[2].push(batched(&raw));
                r[3].push(batched(&db));
            }
            r.map(median)
        });
        println!(
            "| {b} | {} | {rs:.2} | {vs:.3} | {:.3} | {rb:.2} | {vb:.3} | {:.3} |",
            full.len(),
            vs / rs,
            vb / rb
        );
        drop(db);
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!();
}

/// Symbol counts per context, for an empirical conditional entropy.
struct Cond {
    alphabet: usize,
    counts: Vec<u64>,
}

impl Cond {
    fn new(contexts: usize, alphabet: usize) -> Cond {
        Cond {
            alphabet,
            counts: vec![0; contexts * alphabet],
        }
    }

    #[inline(always)]
    fn add(&mut self, ctx: usize, x: usize) {
        self.counts[ctx * self.alphabet + x] += 1;
    }

    /// H(symbol | context), bits per entry counted.
    fn bits(&self) -> f64 {
        let (mut entries, mut sum) = (0u64, 0.0);
        for row in self.counts.chunks(self.alphabet) {
            let total: u64 = row.iter().sum();
            entries += total;
            for &c in row.iter().filter(|&&c| c > 0) {
                sum -= c as f64 * (c as f64 / total as f64).log2();
            }
        }
        sum / entries.max(1) as f64
    }
}

/// A raw table as symbols `v + n` (0..=2n).
fn symbols(raw: Vec<u8>, n: u32, what: &str) -> Vec<u8> {
    let mut s = raw;
    for (g, v) in s.iter_mut().enumerate() {
        let x = *v as i8 as i32 + n as i32;
        assert!(
            (0..=2 * n as i32).contains(&x),
            "{what}.{n} entry {g}: {} outside -{n}..={n}",
            *v as i8
        );
        *v = x as u8;
    }
    s
}

/// The entropies of layer `n`'s tables in the contexts of format 3, which
/// stop at the start of a block of `block_size` entries; with the names
/// of the rows.
fn entropies(
    n: u32,
    s: &[u8],
    envelope: Option<(&[u8], &[u8])>,
    block_size: u32,
) -> Vec<(&'static str, f64)> {
    let al = 2 * n as usize + 1;
    let none = al;
    let vv = al + 1;
    let mut h = [
        Cond::new(1, al),
        Cond::new(vv, al),
        Cond::new(vv * vv, al),
        Cond::new(vv * vv * 5, al),
        Cond::new(vv * vv * 15, al),
    ];
    let mut e = envelope.map(|_| {
        [
            Cond::new(1, al),
            Cond::new(al, al),
            Cond::new(al * al, al),
            Cond::new(al, al),
            Cond::new(al * al, al),
            Cond::new(al * 36, al),
            Cond::new(al * al * 6, al),
        ]
    });
    let bs = block_size as usize;
    for (g, p) in LayerIter::new(n) {
        let g = g as usize;
        let i = g % bs;
        let x = s[g] as usize;
        // One seed moved back from pit 2 to pit 0: k entries earlier, if
        // inside the block.
        let back = (p.0[2] > 0)
            .then(|| p.0[0] as usize + p.0[1] as usize + 2)
            .filter(|&k| k <= i);
        let s1 = if i > 0 { s[g - 1] as usize } else { none };
        let sk = back.map_or(none, |k| s[g - k] as usize);
        let p0 = p.0[0].min(4) as usize;
        // Whether the score before the previous one was lower, equal or
        // higher (equal at the start of a block, as the coder).
        let t = if i > 1 {
            (s[g - 2].cmp(&s[g - 1]) as i8 + 1) as usize
        } else {
            1
        };
        let c = s1 * vv + sk;
        h[0].add(0, x);
        h[1].add(s1, x);
        h[2].add(c, x);
        h[3].add(c * 5 + p0, x);
        h[4].add((c * 5 + p0) * 3 + t, x);
        if let (Some(e), Some((lo, up))) = (&mut e, envelope) {
            let (l, u) = (lo[g] as usize, up[g] as usize);
            assert!(
                l <= x && x <= u,
                "entry {g}: lower, score, upper out of order"
            );
            let (ai, bi, w) = (x - l, u - x, u - l);
            e[0].add(0, l);
            e[1].add(l, w);
            e[2].add(l * al + w, ai);
            e[3].add(x, ai);
            e[4].add(x * al + ai, bi);
            // The coder's contexts: neighbours' a and b, at most 4, 5 for
            // none.
            let a_at = |j: usize| (s[j] - lo[j]).min(4) as usize;
            let a1 = if i > 0 { a_at(g - 1) } else { 5 };
            let ak = back.map_or(5, |k| a_at(g - k));
            e[5].add((x * 6 + a1) * 6 + ak, ai);
            let b1 = if i > 0 {
                (up[g - 1] - s[g - 1]).min(4) as usize
            } else {
                5
            };
            e[6].add((x * al + ai) * 6 + b1, bi);
        }
    }
    let mut rows = vec![
        ("H(S)", h[0].bits()),
        ("H(S \\| S[g-1])", h[1].bits()),
        ("H(S \\| S[g-1], S[g-k])", h[2].bits()),
        ("H(S \\| S[g-1], S[g-k], min(p0,4))", h[3].bits()),
        (
            "H(S \\| S[g-1], S[g-k], min(p0,4), sign(S[g-2]-S[g-1]))",
            h[4].bits(),
        ),
    ];
    if let Some(e) = e {
        let (sc, ac, bc) = (h[4].bits(), e[5].bits(), e[6].bits());
        rows.extend([
            ("H(lower)", e[0].bits()),
            ("H(upper-lower \\| lower)", e[1].bits()),
            ("H(S-lower \\| lower, upper-lower)", e[2].bits()),
            ("H(S-lower \\| S)", e[3].bits()),
            ("H(upper-S \\| S, S-lower)", e[4].bits()),
            (
                "H(S-lower \\| S, min(a[g-1],4), min(a[g-k],4)) (the coder's a)",
                ac,
            ),
            (
                "H(upper-S \\| S, S-lower, min(b[g-1],4)) (the coder's b)",
                bc,
            ),
            (
                "three tables in the coder's contexts (S finest + a + b)",
                sc + ac + bc,
            ),
        ]);
    }
    rows
}

/// The empirical conditional entropies of one layer's raw tables, in
/// bits per position (S the score, g the Goedel index, k = p0 + p1 + 2 the
/// entry with one seed moved back from pit 2 to pit 0, when pit 2 has one).
fn entropy(dir: &Path) {
    println!("`{}`\n", command(dir, "entropy"));
    let n = env_layer().unwrap_or(V3_LAYER);
    let Some((s, envelope)) = read_layer(dir, n) else {
        eprintln!("layer {n}: no scores.{n} in {}; skipping", dir.display());
        return;
    };
    let s = symbols(s, n, "scores");
    let envelope = envelope.map(|(l, u)| (symbols(l, n, "lower"), symbols(u, n, "upper")));
    let blocks = block_sizes();
    let columns: Vec<Vec<(&str, f64)>> = blocks
        .iter()
        .map(|&b| entropies(n, &s, envelope.as_ref().map(|(l, u)| (&l[..], &u[..])), b))
        .collect();
    println!(
        "layer {n} ({} positions): empirical entropies in bits per position, and the bytes they come to; \
         g the Goedel index, k = p0 + p1 + 2 (one seed moved back from pit 2 to pit 0, when pit 2 holds one); \
         a neighbour before the start of its block of B entries is \"none\" (the sign then \"equal\"), as in the coder\n",
        s.len()
    );
    print!("| entropy |");
    for b in &blocks {
        print!(" bits/pos (B = {b}) | bytes (B = {b}) |");
    }
    println!();
    println!("|---|{}", "---|---|".repeat(blocks.len()));
    for r in 0..columns[0].len() {
        print!("| {} |", columns[0][r].0);
        for c in &columns {
            let bits = c[r].1;
            print!(" {bits:.4} | {:.0} |", bits * s.len() as f64 / 8.0);
        }
        println!();
    }
    println!();
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
        ratio(&dir);
        println!();
    }
    if want("ratio-small") {
        ratio_small(&dir);
        println!();
    }
    if want("probe") {
        probe(&dir);
    }
    if want("throughput") {
        throughput(&dir);
    }
    if want("v3") {
        v3_group(&dir);
    }
    if want("entropy") {
        entropy(&dir);
    }
}

//! The `v3` group of the `compress` bench: format 3 (full form and scores
//! alone) against format 2 per layer, then whole-table decoding and random
//! probes on one thread.

use super::{
    block_sizes, command, encode, env_layer, median, one_layer_folder, positions, read_layer, time,
    Grid, Layer, KIB, V3_LAYER,
};
use awari_egdb::codec::{self, v3, CompressedTable};
use awari_egdb::format::{Checksum, Kind};
use awari_egdb::index::layer_size;
use awari_egdb::probe::Database;
use awari_egdb::store::CompressedEntry;
use std::hint::black_box;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The layers the `v3` group reports (the targets are 20..=24), and the
/// ranges it totals.
const V3_LAYERS: RangeInclusive<u32> = 12..=24;
const V3_TOTALS: [RangeInclusive<u32>; 2] = [20..=24, 12..=22];

/// The settings format 2 is measured with: the project's defaults.
const V2: Grid = (19, 4 * KIB, 0);

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
pub fn v3_group(dir: &Path) {
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

//! "Don't care" entries in format 4 files, measured: the share of
//! positions whose score equals their best exit, the bits per position
//! format 4 takes with those entries filled (each fill rule), and the
//! work a probe does to resolve them (entries read per probe, with every
//! measured layer a don't-care one and the layers below exact).
//!
//! `AWARI_BENCH_DB=DIR cargo bench --bench dont_care` with DIR a folder
//! holding raw `scores.n` of layers 0..=b (only read);
//! `AWARI_BENCH_LAYERS=18..=22` (the default) picks the layers a..=b,
//! `AWARI_BENCH_FILLS=raw,previous,likeliest1,likeliest2` the forms.
//!
//! With `AWARI_BENCH_FOLDERS=A,B,...` (folders of ours, only read, e.g.
//! one compressed with `awari compress --format 4` and one with
//! `--dont-care` as well), it measures instead random `Database::score`
//! on positions of layers a..=b of each folder (mapped, one thread,
//! medians of five rounds that alternate the folders).

use awari_egdb::codec::v4::dont_care::{fill, FillRule};
use awari_egdb::codec::v4::{encode_scores, V4Settings};
use awari_egdb::index::{layer_size, rank, unrank};
use awari_egdb::pack::dont_care::best_exits;
use awari_egdb::probe::{resolve, Database, Entry};
use awari_egdb::rules::AWARI;
use rand::{Rng, SeedableRng};
use std::time::Instant;

const PROBES: usize = 200_000;

/// Random `Database::score` in each folder of `folders`, layers a..=b.
fn probe_rates(folders: &str, a: u32, b: u32) {
    let dbs: Vec<(String, Database)> = folders
        .split(',')
        .map(|d| {
            // SAFETY: the bench only reads the folders; nothing writes them
            // while it runs.
            let db = unsafe { Database::open_mapped(d) }.expect("open folder");
            (d.to_string(), db)
        })
        .collect();
    println!("| layer | folder | random score(), mapped, 1 thread (M/s) |");
    println!("|---:|---|---:|");
    for n in a..=b {
        let mut rng = rand::rngs::StdRng::seed_from_u64(n as u64);
        let ps: Vec<_> = (0..PROBES)
            .map(|_| unrank(n, rng.gen_range(0..layer_size(n))).expect("unrank"))
            .collect();
        let mut r = vec![Vec::new(); dbs.len()];
        for _ in 0..5 {
            for (k, (_, db)) in dbs.iter().enumerate() {
                let t = Instant::now();
                let mut sum = 0i64;
                for p in &ps {
                    sum += db.score(p).expect("score") as i64;
                }
                std::hint::black_box(sum);
                r[k].push(PROBES as f64 / t.elapsed().as_secs_f64() / 1e6);
            }
        }
        for ((d, _), mut v) in dbs.iter().zip(r) {
            v.sort_by(|x, y| x.total_cmp(y));
            println!("| {n} | {d} | {:.3} |", v[2]);
        }
    }
}

fn main() {
    let layers = std::env::var("AWARI_BENCH_LAYERS").unwrap_or_else(|_| "18..=22".into());
    let (a, b) = layers.split_once("..=").unwrap_or((&layers, &layers));
    let (a, b): (u32, u32) = (a.parse().expect("layers"), b.parse().expect("layers"));
    if let Ok(f) = std::env::var("AWARI_BENCH_FOLDERS") {
        return probe_rates(&f, a, b);
    }
    let Some(dir) = std::env::var_os("AWARI_BENCH_DB").filter(|d| !d.is_empty()) else {
        eprintln!("set AWARI_BENCH_DB to a folder holding raw scores.n; skipping");
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let fills: Vec<String> = std::env::var("AWARI_BENCH_FILLS")
        .unwrap_or_else(|_| "raw,previous,likeliest1,likeliest2".into())
        .split(',')
        .map(String::from)
        .collect();
    let raw: Vec<Vec<u8>> = (0..=b)
        .map(|k| {
            if k == 47 {
                Vec::new()
            } else {
                std::fs::read(dir.join(format!("scores.{k}"))).expect("raw scores")
            }
        })
        .collect();
    // The stored values of the don't-care layers measured so far (the
    // smallest fill of each).
    let mut stored: Vec<Option<Vec<u8>>> = vec![None; b as usize + 1];
    println!(
        "| layer | positions | best exit = score | with an exit | form | bits/position | seconds |"
    );
    println!("|---:|---:|---:|---:|---|---:|---:|");
    for n in a..=b {
        let size = layer_size(n);
        let t = Instant::now();
        let exits = best_exits(n, &AWARI, &|k, g| raw[k as usize][g as usize] as i8);
        let te = t.elapsed().as_secs_f64();
        let scores = &raw[n as usize];
        let dc = exits
            .iter()
            .zip(scores)
            .filter(|(&e, &s)| e == s as i8)
            .count() as f64
            / size as f64;
        let any = exits.iter().filter(|&&e| e != i8::MIN).count() as f64 / size as f64;
        let mut smallest: Option<(usize, Vec<u8>)> = None;
        for f in &fills {
            let t = Instant::now();
            let values = match f.as_str() {
                "raw" => scores.clone(),
                "previous" => fill(scores, &exits, n, FillRule::Previous).expect("fill"),
                l if l.starts_with("likeliest") => {
                    let rounds = l["likeliest".len()..].parse().unwrap_or(1);
                    fill(scores, &exits, n, FillRule::Likeliest { rounds }).expect("fill")
                }
                other => panic!("unknown form {other}"),
            };
            let file = encode_scores(&values, &AWARI, n, V4Settings::default()).expect("encode");
            println!(
                "| {n} | {size} | {:.4} | {:.4} | {f} | {:.3} | {:.0} (exits {te:.0}) |",
                dc,
                any,
                file.len() as f64 * 8.0 / size as f64,
                t.elapsed().as_secs_f64()
            );
            if f != "raw" && smallest.as_ref().map_or(true, |s| file.len() < s.0) {
                smallest = Some((file.len(), values));
            }
        }
        let Some((_, values)) = smallest else {
            continue;
        };
        stored[n as usize] = Some(values);
        // Probes of random positions of layer n through the don't-care
        // layers a..=n, counting the entries each reads.
        let mut rng = rand::rngs::StdRng::seed_from_u64(n as u64);
        let (mut reads, mut most, mut deeper) = (0u64, 0u64, 0u64);
        let entry = |k: u32, g: u64| match &stored[k as usize] {
            Some(v) => Entry {
                value: v[g as usize] as i8,
                dont_care: true,
            },
            None => Entry {
                value: raw[k as usize][g as usize] as i8,
                dont_care: false,
            },
        };
        for _ in 0..PROBES {
            let g = rng.gen_range(0..size);
            let p = unrank(n, g).expect("unrank");
            let mut r = 1u64;
            let got = resolve(&AWARI, &p, entry(n, g), n as i32 + 1, &mut |k, q| {
                r += 1;
                Ok::<_, ()>(entry(k, rank(q)))
            })
            .expect("resolve");
            assert_eq!(got, scores[g as usize] as i8 as i32, "layer {n} entry {g}");
            reads += r;
            most = most.max(r);
            deeper += (r > 1) as u64;
        }
        println!(
            "probes of layer {n} (don't-care layers {a}..={n}): {:.3} entries read a probe, at most {most}; {:.1}% read a child",
            reads as f64 / PROBES as f64,
            100.0 * deeper as f64 / PROBES as f64
        );
    }
}

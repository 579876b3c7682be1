//! Throughput of the core primitives: Goedel rank/unrank, move generation and
//! predecessor (un-move) generation (by internal moves, and by captures of 2
//! to 6 seeds, as the compact solver's exits pass takes them back), each
//! over a fixed batch of random indexable positions.

use std::hint::black_box;

use awari_egdb::index;
use awari_egdb::rules::{Position, AWARI};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const BATCH: usize = 4096;

/// A batch of (layer, Goedel number, position).
type Batch = Vec<(u32, u64, Position)>;

/// (layer, Goedel number, position) triples, uniform within each layer.
fn batch(seed: u64, layers: &[u32]) -> Batch {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..BATCH)
        .map(|_| {
            let n = layers[rng.gen_range(0..layers.len())];
            let g = rng.gen_range(0..index::layer_size(n));
            (n, g, index::unrank(n, g).expect("in range"))
        })
        .collect()
}

fn sets() -> Vec<(&'static str, Batch)> {
    // Layers 20..=48 of the database (47 is not one).
    let big: Vec<u32> = (20..=48).filter(|&n| n != 47).collect();
    vec![
        ("layers20-48", batch(0x5eed_2048, &big)),
        ("layer16", batch(0x5eed_0016, &[16])),
    ]
}

fn bench_core(c: &mut Criterion) {
    for (name, set) in sets() {
        let positions: Vec<Position> = set.iter().map(|t| t.2).collect();
        let indices: Vec<(u32, u64)> = set.iter().map(|t| (t.0, t.1)).collect();

        let mut g = c.benchmark_group(format!("core/{name}"));
        g.throughput(Throughput::Elements(BATCH as u64));

        g.bench_function("rank", |b| {
            b.iter(|| {
                let mut acc = 0u64;
                for p in &positions {
                    acc = acc.wrapping_add(index::rank(black_box(p)));
                }
                acc
            })
        });

        g.bench_function("unrank", |b| {
            b.iter(|| {
                let mut acc = 0u64;
                for &(n, i) in &indices {
                    let p = index::unrank(black_box(n), black_box(i)).unwrap();
                    acc = acc.wrapping_add(u64::from(p.0[0]) ^ u64::from(p.0[11]));
                    black_box(&p);
                }
                acc
            })
        });

        g.bench_function("moves", |b| {
            b.iter(|| {
                let mut acc = 0u64;
                for p in &positions {
                    let list = black_box(p).moves(&AWARI);
                    for m in list.as_slice() {
                        acc = acc.wrapping_add(u64::from(m.captured) + u64::from(m.legal));
                    }
                    black_box(&list);
                }
                acc
            })
        });

        g.bench_function("predecessors", |b| {
            b.iter(|| {
                let mut acc = 0u64;
                for p in &positions {
                    black_box(p).for_each_predecessor(&AWARI, |r| {
                        acc = acc.wrapping_add(u64::from(black_box(r).0[0]) + 1);
                    });
                }
                acc
            })
        });

        g.bench_function("capture predecessors", |b| {
            b.iter(|| {
                let mut acc = 0u64;
                for p in &positions {
                    for c in 2..=6 {
                        black_box(p).for_each_capture_predecessor(c, |r| {
                            acc = acc.wrapping_add(u64::from(black_box(r).0[0]) + 1);
                        });
                    }
                }
                acc
            })
        });

        g.finish();
    }
}

criterion_group!(benches, bench_core);
criterion_main!(benches);

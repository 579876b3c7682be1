//! The player's search from the opening, no tables, one thread and two:
//! a fixed-depth search (depth 15, about 1.2 M positions, the same tree
//! every run on one thread) from an empty 16 MiB transposition table per
//! iteration; the number of positions is printed once (positions / time =
//! nodes per second). With `$AWARI_BENCH_DB` (a folder of awari tables, e.g.
//! layers 0..=24) it also searches the position after `A f A b` at depth
//! 14 reading the tables.
//!
//! `cargo bench --bench search`; Cargo.toml entry: `[[bench]] name =
//! "search" harness = false`. The figures in docs/player.md come from
//! `awari play --protocol` (the command is given there).

use std::hint::black_box;

use awari_egdb::game::{Board, Game};
use awari_egdb::probe::Database;
use awari_egdb::rules::{Position, AWARI};
use awari_egdb::search::{Engine, Limits, Settings};
use criterion::{criterion_group, criterion_main, Criterion};

/// The depth searched from the opening.
const DEPTH: u32 = 15;

fn engine(db: &Database, threads: usize) -> Engine<'_> {
    let settings = Settings {
        threads,
        hash_bytes: 16 << 20,
        ..Settings::default()
    };
    Engine::new(db, AWARI, settings).unwrap()
}

/// A search from an empty transposition table; its nodes.
fn search(e: &Engine, p: &Position, depth: u32) -> u64 {
    e.clear();
    e.search(p, &[], Limits::depth(depth), |_| {})
        .unwrap()
        .nodes
}

fn bench(c: &mut Criterion) {
    let none = Database::from_tables_of::<Vec<u8>>(&AWARI, Vec::new()).unwrap();
    let start = Position::initial();
    let nodes = search(&engine(&none, 1), &start, DEPTH);
    eprintln!("opening, depth {DEPTH}, no tables: {nodes} positions");
    let mut g = c.benchmark_group("search");
    g.sample_size(10);
    for threads in [1, 2] {
        let e = engine(&none, threads);
        g.bench_function(format!("opening-depth{DEPTH}-threads{threads}"), |b| {
            b.iter(|| black_box(search(&e, &start, DEPTH)))
        });
    }
    if let Some(dir) = std::env::var_os("AWARI_BENCH_DB").filter(|d| !d.is_empty()) {
        let db = Database::open(dir).unwrap();
        let mut game = Game::new(Board::opening(), AWARI);
        for m in ["A", "f", "A", "b"] {
            game.play(m).unwrap();
        }
        let p = game.board().position();
        let e = engine(&db, 1);
        g.bench_function("afab-depth14-tables", |b| {
            b.iter(|| black_box(search(&e, &p, 14)))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

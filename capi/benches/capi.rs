//! The C API's probes against the Rust probe they wrap, on the positions
//! of `benches/probe.rs` (random boards of layer 20, mapped and warm):
//! `awari_score` one board a call, `awari_scores` a batch, beside
//! `Database::score` and `Database::scores` in the same run.
//!
//! The C functions are called as a C caller calls them: from
//! `libawari_egdb.so`, opened with `dlopen`. Needs the folder of the
//! library's probe bench: `$AWARI_BENCH_DB` if
//! set, else `target/bench-db` (`cargo bench --bench probe` at the root
//! builds it on first run).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use egdb::index;
use egdb::probe::Database;
use egdb::rules::Position;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::hint::black_box;
use std::path::PathBuf;

#[path = "../tests/support/dl.rs"]
mod dl;
use dl::{api, AWARI_OK};

/// The layer probed, as in `benches/probe.rs`.
const LAYER: u32 = 20;
/// Positions per measured iteration.
const BATCH: usize = 1 << 18;

fn folder() -> PathBuf {
    match std::env::var_os("AWARI_BENCH_DB") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-db"),
    }
}

fn bench_capi(c: &mut Criterion) {
    let dir = folder();
    // SAFETY: nothing writes to the bench folder while the benches run.
    let db = unsafe { Database::open_mapped(&dir) }.unwrap_or_else(|e| {
        panic!(
            "{}: {e} (`cargo bench --bench probe` at the root builds it)",
            dir.display()
        )
    });
    assert!(
        db.layers().contains(&LAYER),
        "{} lacks layer {LAYER}",
        dir.display()
    );
    let mut rng = StdRng::seed_from_u64(0x5eed_0020);
    let size = index::layer_size(LAYER);
    let positions: Vec<Position> = (0..BATCH)
        .map(|_| index::unrank(LAYER, rng.gen_range(0..size)).expect("in range"))
        .collect();
    let rust_sum = |ps: &[Position]| {
        ps.iter()
            .map(|p| db.score(black_box(p)).expect("probe") as i64)
            .sum::<i64>()
    };
    // Warm: every probe once.
    let want = rust_sum(&positions);

    let path = std::ffi::CString::new(dir.to_str().expect("UTF-8")).expect("a path");
    let capi = api();
    let mut handle = std::ptr::null_mut();
    // SAFETY: a valid path and out pointer; nothing writes to the folder.
    let st = unsafe { (capi.open_mapped)(path.as_ptr(), &mut handle) };
    assert_eq!(st, AWARI_OK);
    let capi_sum = |ps: &[Position]| {
        ps.iter()
            .map(|p| {
                let mut s = 0i8;
                // SAFETY: an open handle, 12 pits, a score to write.
                let st = unsafe { (capi.score)(handle, black_box(p).0.as_ptr(), &mut s) };
                debug_assert_eq!(st, AWARI_OK);
                s as i64
            })
            .sum::<i64>()
    };
    assert_eq!(capi_sum(&positions), want);

    let mut g = c.benchmark_group(format!("capi/layer{LAYER}"));
    g.throughput(Throughput::Elements(BATCH as u64));
    g.sample_size(20);
    g.bench_function("score/1 thread", |b| b.iter(|| rust_sum(&positions)));
    g.bench_function("capi awari_score/1 thread", |b| {
        b.iter(|| capi_sum(&positions))
    });

    let mut out = vec![0i8; positions.len()];
    db.scores(&positions, &mut out).expect("probe");
    g.bench_function("scores batch/1 thread", |b| {
        b.iter(|| {
            db.scores(black_box(&positions), &mut out).expect("probe");
            out[0]
        })
    });
    let flat: Vec<u8> = positions.iter().flat_map(|p| p.0).collect();
    let mut capi_out = vec![0i8; positions.len()];
    g.bench_function("capi awari_scores batch/1 thread", |b| {
        b.iter(|| {
            // SAFETY: an open handle, 12 pits per board, a score per board.
            let st = unsafe {
                (capi.scores)(
                    handle,
                    black_box(&flat).as_ptr(),
                    positions.len(),
                    capi_out.as_mut_ptr(),
                )
            };
            debug_assert_eq!(st, AWARI_OK);
            capi_out[0]
        })
    });
    g.finish();
    assert!(
        capi_out == out,
        "awari_scores gives Database::scores' answers"
    );
    // SAFETY: the handle of awari_open_mapped, closed once.
    unsafe { (capi.close)(handle) };
}

criterion_group!(benches, bench_capi);
criterion_main!(benches);

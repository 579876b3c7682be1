//! `awari bench`: builds a layer range from scratch in a scratch folder and
//! prints the figures of each layer, next to the machine's random
//! read-modify-write rate on an array of the largest layer's size.

use super::Failure;
use awari_egdb::build::{self, BuildOptions};
use awari_egdb::error::human;
use awari_egdb::index::layer_size;
use awari_egdb::mem::{Rmw, RmwArray};
use awari_egdb::solve::Observer;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
#[command(after_help = super::EXIT_CODES)]
pub struct BenchArgs {
    /// Build layers 0..=N.
    #[arg(long, value_name = "N", default_value_t = 20)]
    max_seeds: u32,
    /// Print layers from A on (all are built).
    #[arg(long, value_name = "A", default_value_t = 12)]
    from: u32,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "T")]
    threads: Option<usize>,
    /// Scratch folder (default: a new folder in the system's temporary
    /// folder, removed afterwards).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The rule set to build (`awari rules` lists them).
    #[arg(long, value_name = "NAME", default_value = "awari", value_parser = super::parse_rules)]
    rules: awari_egdb::rules::Rules,
    /// Skip the random read-modify-write micro-benchmark.
    #[arg(long, conflicts_with = "rmw_only")]
    no_rmw: bool,
    /// Only the micro-benchmark, on an array the size of layer N's state
    /// (no build).
    #[arg(long)]
    rmw_only: bool,
}

pub fn run(a: BenchArgs) -> Result<(), Failure> {
    let threads = a.threads.unwrap_or_else(rayon::current_num_threads);
    if threads == 0 {
        return Err(Failure::usage("--threads must be at least 1"));
    }
    if a.max_seeds > 46 {
        return Err(Failure::usage(
            "--max-seeds: the bench builds at most 46 seeds",
        ));
    }
    if a.rmw_only {
        return rmw(a.max_seeds, threads);
    }
    let (dir, scratch) = match a.dir {
        Some(d) => (d, false),
        None => (
            std::env::temp_dir().join(format!("awari-bench-{}", std::process::id())),
            true,
        ),
    };
    if dir.exists() {
        return Err(Failure::usage(format!(
            "{}: exists; the bench builds from scratch into a new folder",
            dir.display()
        )));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Failure::usage(format!("cannot start worker threads: {e}")))?;
    let opts = BuildOptions {
        rules: a.rules,
        max_seeds: a.max_seeds,
        db: dir.clone(),
        envelope: true,
        distance: true,
        memory_limit: None,
        reset_peak_rss: true,
        solver: Default::default(),
        scratch: None,
        compress_finished: None,
    };
    eprintln!(
        "building layers 0..={} in {} on {threads} thread(s)",
        a.max_seeds,
        dir.display()
    );
    let result = pool.install(|| build::build(&opts, &Quiet));
    if scratch {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let report = result.map_err(|e| Failure::usage(e.to_string()))?;
    println!(
        "layer      positions  seconds  M pos/s  settlements/pos  peak RSS  (anonymous / estimate)"
    );
    let mut total = 0.0;
    for e in &report.manifest.layers {
        total += e.wall_seconds;
        if e.seeds < a.from {
            continue;
        }
        println!(
            "{:>5}  {:>13}  {:>7.2}  {:>7.2}  {:>15.2}  {}  ({} / {})",
            e.seeds,
            e.positions,
            e.wall_seconds,
            e.positions_per_second / 1e6,
            e.settlements_per_position,
            human(e.peak_rss_bytes),
            human(e.peak_anon_bytes),
            human(e.estimate_bytes)
        );
    }
    println!("layers 0..={}: {total:.1} s of layer builds", a.max_seeds);
    if !a.no_rmw {
        rmw(a.max_seeds, threads)?;
    }
    Ok(())
}

/// The machine's random read-modify-write rate on an array the size of
/// layer `n`'s state, on 1 and on `threads` threads.
fn rmw(n: u32, threads: usize) -> Result<(), Failure> {
    let len = layer_size(n) as usize * 3;
    if let Some(avail) = awari_egdb::mem::available_memory() {
        if len as u64 > avail {
            return Err(Failure::usage(format!(
                "the micro-benchmark of layer {n} needs {} of memory, {} is available",
                human(len as u64),
                human(avail)
            )));
        }
    }
    let ops = 20_000_000u64;
    println!(
        "random read-modify-write on {} (the state of layer {}), M ops/s:",
        human(len as u64),
        n
    );
    // Delayed updates: regions of 1 MiB (within an L2 cache and a few huge
    // pages), 64 entries a bucket.
    let (region, entries) = (1 << 20, 64);
    for huge in [true, false] {
        let mut arr = RmwArray::new(len, huge)?;
        let pages = if huge { "huge pages" } else { "4 KiB pages" };
        for t in [1, threads] {
            let per = ops / t as u64;
            let one = arr.rate(t, per, Rmw::Random);
            let batched = arr.rate(t, per, Rmw::Prefetched(32));
            let bucketed = arr.rate(t, per, Rmw::Bucketed { region, entries });
            let owned = arr.rate(t, per, Rmw::Owned { region, entries });
            println!(
                "  {t} thread(s): {pages}: {:.1} one at a time, {:.1} prefetched 32 at a time, \
                 {:.1} bucketed (1 MiB regions, 64 a bucket), {:.1} bucketed, each region one thread's",
                one / 1e6,
                batched / 1e6,
                bucketed / 1e6,
                owned / 1e6
            );
            if t == threads {
                break;
            }
        }
    }
    Ok(())
}

/// No progress output during the bench.
struct Quiet;
impl Observer for Quiet {}
impl build::BuildObserver for Quiet {
    fn warning(&self, message: &str) {
        eprintln!("awari: warning: {message}");
    }
}

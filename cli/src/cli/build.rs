//! `awari build`: progress bars on a terminal, plain log lines elsewhere.

use super::Failure;
use awari_egdb::build::{self, BuildObserver, BuildOptions};
use awari_egdb::error::human;
use awari_egdb::solve::Observer;
use awari_egdb::store::LayerEntry;
use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

/// The README's main job: finishes in about a minute on 2 cores.
pub const DEFAULT_MAX_SEEDS: u32 = 20;

#[derive(Args)]
#[command(after_help = super::EXIT_CODES)]
pub struct BuildArgs {
    /// Build layers 0..=N, N from 0 to 48 (47 never occurs and is skipped).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_SEEDS.to_string(),
          allow_negative_numbers = true)]
    max_seeds: String,
    #[command(flatten)]
    db: super::DbArg,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "T")]
    threads: Option<usize>,
    /// Build every layer within SIZE of memory (e.g. 8GiB, 500MB): the
    /// in-memory solver where it fits (mapped lower tables included), else
    /// the compact one (1 byte per position); a layer that fits neither is
    /// refused. Default: the memory available before each layer.
    #[arg(long, value_name = "SIZE")]
    memory_limit: Option<String>,
    /// Solver: auto (in-memory where it fits and the lower layers are raw,
    /// else compact), memory, or compact.
    #[arg(long, value_name = "KIND", default_value = "auto")]
    solver: SolverArg,
    /// Folder for the compact solver's temporary lists (default: --db).
    #[arg(long, value_name = "DIR")]
    scratch: Option<PathBuf>,
    /// Compress each finished layer and remove its raw tables; later
    /// layers read it compressed. Format 4's full form (`tables.n.zst`,
    /// as `awari compress` writes it). It takes no value: the zstd level
    /// it took was a setting of the retired format 2.
    #[arg(long, value_name = "L", num_args = 0..=1, default_missing_value = "", allow_negative_numbers = true)]
    compress_finished: Option<String>,
    /// Build only scores.n, without lower.n and upper.n.
    #[arg(long)]
    no_envelope: bool,
    /// Build without dist.n, the distance to the next capture that best
    /// play needs to reach its score (a folder of what the VU database
    /// holds; `query` and `play` then say that best play may repeat).
    #[arg(long)]
    no_distance: bool,
    /// No progress output (warnings and errors still go to stderr).
    #[arg(long, short)]
    quiet: bool,
    /// Build as one rank of an MPI job (`mpirun -np N awari build --mpi
    /// ...`): each rank solves its part of every layer, in a folder every
    /// rank sees; --memory-limit and --threads apply per rank. Needs a
    /// binary built with `--features mpi`.
    #[arg(long)]
    mpi: bool,
}

/// `--solver`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum SolverArg {
    /// In-memory where it fits and the lower layers are raw, else compact.
    Auto,
    /// Always the in-memory solver.
    Memory,
    /// Always the compact solver.
    Compact,
}

pub fn run(a: BuildArgs) -> Result<(), Failure> {
    let memory_limit = a
        .memory_limit
        .as_deref()
        .map(|s| super::parse_size("--memory-limit", s, "8GiB, 500MB, 1073741824"))
        .transpose()?;
    if let (Some(limit), Some(total)) = (memory_limit, awari_egdb::mem::total_memory()) {
        if limit > total {
            return Err(Failure::usage(format!(
                "--memory-limit {} is more than this machine has ({}); leave it out to use \
                 the memory available",
                human(limit),
                human(total)
            )));
        }
    }
    let max_seeds = a
        .max_seeds
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|&n| n <= 48)
        .ok_or_else(|| {
            Failure::usage(format!(
                "--max-seeds '{}': a layer is 0 to 48 seeds",
                a.max_seeds
            ))
        })?;
    // The rule set: --rules, else the folder's (awari for a new folder); a
    // folder of another rule set than --rules is refused by the builder.
    let rules = match a.db.rules_asked() {
        Some(r) => r,
        None => a.db.rules()?,
    };
    let opts = BuildOptions {
        rules,
        max_seeds,
        db: a.db.path(),
        envelope: !a.no_envelope,
        distance: !a.no_distance,
        memory_limit,
        reset_peak_rss: true,
        solver: match a.solver {
            SolverArg::Auto => build::Solver::Auto,
            SolverArg::Memory => build::Solver::Memory,
            SolverArg::Compact => build::Solver::Compact,
        },
        scratch: a.scratch.clone(),
        compress_finished: match a.compress_finished.as_deref() {
            None => None,
            Some("") => Some(awari_egdb::codec::Settings::random_access_full()),
            Some(l) => {
                return Err(Failure::usage(format!(
                    "--compress-finished '{l}': it takes no value; a zstd level was a setting \
                     of format 2, which is retired (this release compresses in format 4)"
                )))
            }
        },
    };
    let mode = if a.quiet {
        Mode::Quiet
    } else if std::io::stderr().is_terminal() {
        Mode::Bars
    } else {
        Mode::Lines
    };
    let started = Instant::now();
    let report = if a.mpi {
        match build_mpi(&opts, a.threads, mode)? {
            Some(report) => report,
            None => return Ok(()), // not rank 0: rank 0 reports
        }
    } else {
        let pool = super::pool(a.threads)?;
        let progress = Progress::new(mode);
        let report = pool.install(|| build::build(&opts, &progress))?;
        progress.finish();
        report
    };
    if !a.quiet {
        let m = &report.manifest;
        eprintln!(
            "built {} layer(s), reused {} verified layer(s) in {:.1} s; tables in {}",
            report.built.len(),
            report.reused.len(),
            started.elapsed().as_secs_f64(),
            opts.db.display()
        );
        if !report.built.is_empty() {
            println!("layer  positions      seconds  positions/s  pinned    peak RSS");
            for n in &report.built {
                if let Some(e) = m.layer(*n) {
                    println!("{}", summary(e));
                }
            }
        }
    }
    Ok(())
}

/// The build as one rank of an MPI job: rank 0 shows the progress and gets
/// the report. A rank that fails prints why and stops the whole job (the
/// others may be waiting for it in a collective operation).
/// The build runs on the main thread (the one that initialized MPI and
/// talks to the other ranks) with the global pool's workers.
#[cfg(feature = "mpi")]
fn build_mpi(
    opts: &BuildOptions,
    threads: Option<usize>,
    mode: Mode,
) -> Result<Option<build::BuildReport>, Failure> {
    use awari_egdb::comm::{Comm, Mpi};
    super::pool_builder(threads)?
        .build_global()
        .map_err(|e| Failure::usage(format!("cannot start worker threads: {e}")))?;
    let mpi = Mpi::init()?;
    let root = mpi.rank() == 0;
    let progress = Progress::new(if root { mode } else { Mode::Quiet });
    // A panic must stop the job too: unwinding would finalize MPI, which
    // waits for ranks that wait for this one.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        build::build_ranks(opts, &mpi, &progress)
    }))
    .unwrap_or_else(|_| {
        eprintln!(
            "awari: rank {} of {}: internal error (see the panic message above)",
            mpi.rank(),
            mpi.size()
        );
        mpi.abort(101)
    });
    progress.finish();
    match result {
        Ok(report) => Ok(root.then_some(report)),
        Err(e) => {
            let f = Failure::from(e);
            if mpi.size() > 1 {
                eprintln!(
                    "awari: rank {} of {}: {}",
                    mpi.rank(),
                    mpi.size(),
                    f.message
                );
                mpi.abort(f.code);
            }
            Err(f)
        }
    }
}

#[cfg(not(feature = "mpi"))]
fn build_mpi(
    _: &BuildOptions,
    _: Option<usize>,
    _: Mode,
) -> Result<Option<build::BuildReport>, Failure> {
    Err(Failure::usage(
        "--mpi: this awari was built without MPI; build it with `cargo build --release \
         --features mpi` (needs an MPI library such as Open MPI, and libclang)",
    ))
}

fn summary(e: &LayerEntry) -> String {
    format!(
        "{:>5}  {:>13}  {:>7.2}  {:>11.0}  {:>8}  {}",
        e.seeds,
        e.positions,
        e.wall_seconds,
        e.positions_per_second,
        e.pinned.map_or("-".into(), |p| format!(
            "{:.1}%",
            100.0 * p as f64 / e.positions as f64
        )),
        human(e.peak_rss_bytes)
    )
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Quiet,
    Lines,
    Bars,
}

/// The layer being built: its bar, the units of work done and in all, when
/// it started, and when a plain progress line was last printed.
struct Current {
    n: u32,
    /// Whether the layer is large enough for a line per phase.
    phase_lines: bool,
    bar: ProgressBar,
    done: u64,
    total: u64,
    started: Instant,
    printed: Instant,
}

/// Seconds between plain progress lines (without a terminal).
const LINE_EVERY: f64 = 30.0;

/// Layers of at least this many positions (layer 16 and up: seconds of
/// work) get a plain progress line per phase; smaller ones only their
/// line when done.
const PHASE_LINES_FROM: u64 = 1 << 22;

struct Progress {
    mode: Mode,
    multi: MultiProgress,
    overall: ProgressBar,
    layer: Mutex<Option<Current>>,
}

impl Progress {
    fn new(mode: Mode) -> Self {
        let multi = MultiProgress::with_draw_target(if mode == Mode::Bars {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        });
        let overall = multi.add(ProgressBar::new(0));
        overall.set_style(
            ProgressStyle::with_template(
                "layers {bar:30.cyan/blue} {pos}/{len} {elapsed_precise} {msg}",
            )
            .expect("template"),
        );
        Progress {
            mode,
            multi,
            overall,
            layer: Mutex::new(None),
        }
    }

    fn log(&self, msg: &str) {
        match self.mode {
            Mode::Quiet => {}
            Mode::Lines => eprintln!("{msg}"),
            Mode::Bars => {
                let _ = self.multi.println(msg);
            }
        }
    }

    fn finish(&self) {
        self.overall.finish_and_clear();
    }
}

impl Current {
    /// A plain progress line: phase, time, share of the layer's work done.
    fn line(&mut self, what: &str) {
        self.printed = Instant::now();
        eprintln!(
            "layer {}: {what} (at {:.1} s, {:.1}% of the layer's work done)",
            self.n,
            self.started.elapsed().as_secs_f64(),
            100.0 * self.done as f64 / self.total.max(1) as f64
        );
    }
}

impl Observer for Progress {
    fn phase(&self, name: &'static str) {
        if let Some(c) = self.layer.lock().expect("progress lock").as_mut() {
            c.bar.set_message(name);
            if self.mode == Mode::Lines && c.phase_lines {
                c.line(name);
            }
        }
    }
    fn advance(&self, k: u64) {
        if self.mode == Mode::Quiet {
            return;
        }
        if let Some(c) = self.layer.lock().expect("progress lock").as_mut() {
            c.done += k;
            match self.mode {
                Mode::Bars => c.bar.inc(k),
                Mode::Lines if c.printed.elapsed().as_secs_f64() >= LINE_EVERY => {
                    let phase = c.bar.message();
                    c.line(&phase);
                }
                _ => {}
            }
        }
    }
}

impl BuildObserver for Progress {
    fn plan(&self, layers: &[u32]) {
        self.overall.set_length(layers.len() as u64);
    }
    fn reused(&self, n: u32) {
        self.overall.inc(1);
        self.log(&format!("layer {n}: finished earlier, checksums verified"));
    }
    fn start(&self, n: u32, positions: u64, work: u64, compact: bool) {
        // The solver's units of work: they add up to exactly this.
        let len = work;
        let bar = self.multi.add(ProgressBar::new(len));
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>9} {bar:30.green/white} {percent:>3}% eta {eta} {msg}",
            )
            .expect("template"),
        );
        bar.set_prefix(format!("layer {n}"));
        self.overall.set_message(format!("layer {n}"));
        let phase_lines = positions >= PHASE_LINES_FROM;
        if self.mode == Mode::Lines && phase_lines {
            eprintln!(
                "layer {n}: {positions} positions ({} solver)",
                if compact { "compact" } else { "in-memory" }
            );
        }
        *self.layer.lock().expect("progress lock") = Some(Current {
            n,
            phase_lines,
            bar,
            done: 0,
            total: len,
            started: Instant::now(),
            printed: Instant::now(),
        });
    }
    fn done(&self, e: &LayerEntry) {
        if let Some(c) = self.layer.lock().expect("progress lock").take() {
            c.bar.finish_and_clear();
        }
        self.overall.inc(1);
        self.log(&format!(
            "layer {} done: {} positions in {:.2} s ({:.2} M/s), {:.2} settlements/position{}, peak RSS {} (anonymous {}, guard estimate {}; mapped tables {})",
            e.seeds,
            e.positions,
            e.wall_seconds,
            e.positions_per_second / 1e6,
            e.settlements_per_position,
            e.pinned.map_or(String::new(), |p| format!(", {p} pinned")),
            human(e.peak_rss_bytes),
            human(e.peak_anon_bytes),
            human(e.estimate_bytes),
            human(e.peak_file_bytes)
        ));
    }
    fn note(&self, message: &str) {
        self.log(message);
    }
    fn warning(&self, message: &str) {
        // Warnings are shown even with --quiet.
        if self.mode == Mode::Bars {
            let _ = self.multi.println(format!("warning: {message}"));
        } else {
            eprintln!("awari: warning: {message}");
        }
    }
}

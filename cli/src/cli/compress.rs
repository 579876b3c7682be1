//! `awari compress` and `awari decompress`: progress bars on a terminal,
//! plain log lines elsewhere, a summary table (or JSON) on stdout.

use super::verify::parse_layers;
use super::Failure;
use awari_egdb::codec::{Settings, FORMAT_VERSION};
use awari_egdb::error::human;
use awari_egdb::pack::{
    self, CompressOptions, DecompressOptions, PackObserver, PackReport, PackedFile,
};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::ops::RangeInclusive;
use std::sync::Mutex;
use std::time::Instant;

#[derive(Args)]
#[command(after_help = super::EXIT_CODES)]
pub struct CompressArgs {
    #[command(flatten)]
    db: super::DbArg,
    /// The file format: 4, the only one this release writes (formats 2
    /// and 3 are retired). Each layer's three tables go into one file
    /// `tables.n.zst`, or with --scores-only its scores into
    /// `scores.n.zst`, coded for random access near raw speed.
    #[arg(long, value_name = "V")]
    format: Option<u32>,
    /// Bytes per block, 16..=4096 (default 64 with --scores-only, else 96);
    /// a probe decodes its block up to the entry.
    #[arg(long, value_name = "B")]
    block_bytes: Option<u32>,
    /// Code the scores alone (`scores.n.zst`, the form an engine ships);
    /// the envelope's tables are left as they are.
    #[arg(long)]
    scores_only: bool,
    /// With --scores-only: where a position's score equals its best exit
    /// (a capture or a move that ends the game), store whatever value
    /// codes cheapest; a probe then resolves the score through the exits'
    /// children in the lower layers (the file stores about 0.8 bits a
    /// position fewer, a probe reads about 1.7 entries).
    #[arg(long)]
    dont_care: bool,
    /// The most entries a block holds (default 1024, at most 4095): a
    /// probe decodes at most this many.
    #[arg(long, value_name = "N")]
    block_size: Option<String>,
    /// A setting of the retired format 2, refused.
    #[arg(long, value_name = "L", allow_negative_numbers = true, hide = true)]
    level: Option<String>,
    /// A setting of the retired format 2, refused.
    #[arg(long, value_name = "SIZE", hide = true)]
    dictionary: Option<String>,
    /// Layers to compress, e.g. 12..=22 (default: every built layer).
    #[arg(long, value_name = "A..=B", value_parser = parse_layers)]
    layers: Option<RangeInclusive<u32>>,
    /// Remove the raw tables of each layer once all its compressed tables
    /// are written and verified.
    #[arg(long)]
    remove_raw: bool,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "T")]
    threads: Option<usize>,
    /// No progress output and no summary table (warnings and errors still
    /// go to stderr; --json still prints its object).
    #[arg(long, short)]
    quiet: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
#[command(after_help = super::EXIT_CODES)]
pub struct DecompressArgs {
    #[command(flatten)]
    db: super::DbArg,
    /// Layers to decompress, e.g. 12..=22 (default: every compressed layer).
    #[arg(long, value_name = "A..=B", value_parser = parse_layers)]
    layers: Option<RangeInclusive<u32>>,
    /// Remove each compressed file once its raw table is written and verified.
    #[arg(long)]
    remove_compressed: bool,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "T")]
    threads: Option<usize>,
    /// No progress output and no summary table (warnings and errors still
    /// go to stderr; --json still prints its object).
    #[arg(long, short)]
    quiet: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// A size given as a number or with a unit, as a `u32`.
fn parse_u32_size(flag: &str, s: &str, e_g: &str) -> Result<u32, Failure> {
    u32::try_from(super::parse_size(flag, s, e_g)?)
        .map_err(|_| Failure::usage(format!("{flag} '{s}' is too large")))
}

/// The settings given on the command line, checked by the one validator
/// of compression settings.
fn settings(a: &CompressArgs) -> Result<Settings, Failure> {
    match a.format {
        None | Some(FORMAT_VERSION) => {}
        Some(v @ 1..=3) => {
            return Err(Failure::usage(format!(
                "--format {v}: format {v} is retired; this release writes format \
                 {FORMAT_VERSION} only (drop --format)"
            )))
        }
        Some(v) => {
            return Err(Failure::usage(format!(
                "--format {v}: this release writes format {FORMAT_VERSION} only"
            )))
        }
    }
    for (given, flag) in [
        (a.level.is_some(), "--level"),
        (a.dictionary.is_some(), "--dictionary"),
    ] {
        if given {
            return Err(Failure::usage(format!(
                "{flag} is a setting of format 2 (zstd), which is retired; format \
                 {FORMAT_VERSION} has no such setting"
            )));
        }
    }
    if a.dont_care && !a.scores_only {
        return Err(Failure::usage(
            "--dont-care codes the scores alone: add --scores-only (the envelope's tables \
             stay as they are)"
                .to_string(),
        ));
    }
    let mut s = if a.scores_only {
        Settings::random_access()
    } else {
        Settings::random_access_full()
    };
    if let Some(b) = a.block_bytes {
        s.block_bytes = b;
    }
    s.dont_care = a.dont_care;
    if let Some(b) = &a.block_size {
        s.block_size = parse_u32_size("--block-size", b, "1024, 4095")?;
    }
    s.check().map_err(|(field, reason)| {
        let flag = match field {
            "block size" => "--block-size",
            "block bytes" => "--block-bytes",
            _ => "--dont-care",
        };
        Failure::usage(format!("{flag}: {reason}"))
    })?;
    Ok(s)
}

/// Refuses a range of `--layers` that holds no layer built in our folder
/// `dir` (a folder that cannot be read is left to the command).
fn built_in(dir: &std::path::Path, layers: &RangeInclusive<u32>) -> Result<(), Failure> {
    let Ok(awari_egdb::store::Folder::Ours(m)) = awari_egdb::store::read_folder(dir) else {
        return Ok(());
    };
    let built: Vec<u32> = m.layers.iter().map(|l| l.seeds).collect();
    if built.iter().any(|n| layers.contains(n)) {
        return Ok(());
    }
    Err(Failure::usage(format!(
        "{}: no layer of {}..={} is built (built: {})",
        dir.display(),
        layers.start(),
        layers.end(),
        if built.is_empty() {
            "none".to_string()
        } else {
            super::verify::runs(&built)
        }
    )))
}

pub fn run_compress(a: CompressArgs) -> Result<(), Failure> {
    a.db.rules()?;
    let dir = a.db.path();
    if matches!(
        awari_egdb::store::read_folder(&dir),
        Ok(awari_egdb::store::Folder::Vu)
    ) {
        return Err(Failure::usage(format!(
            "{}: a folder of scores only (no manifest.json, no lower.N/upper.N): compressing \
             needs the folder of ours it came from, with its manifest and envelope",
            dir.display()
        )));
    }
    let opts = CompressOptions {
        settings: settings(&a)?,
        layers: a.layers.unwrap_or(0..=48),
        remove_raw: a.remove_raw,
    };
    built_in(&a.db.path(), &opts.layers)?;
    pack(a.threads, a.quiet, a.json, |p| {
        pack::compress_folder(&a.db.path(), &opts, p)
    })
}

pub fn run_decompress(a: DecompressArgs) -> Result<(), Failure> {
    a.db.rules()?;
    let opts = DecompressOptions {
        layers: a.layers.unwrap_or(0..=48),
        remove_compressed: a.remove_compressed,
    };
    built_in(&a.db.path(), &opts.layers)?;
    pack(a.threads, a.quiet, a.json, |p| {
        pack::decompress_folder(&a.db.path(), &opts, p)
    })
}

/// Runs a folder operation on its own pool with progress, then prints its
/// summary.
fn pack(
    threads: Option<usize>,
    quiet: bool,
    json: bool,
    op: impl FnOnce(&Progress) -> awari_egdb::Result<PackReport> + Send,
) -> Result<(), Failure> {
    let progress = Progress::new(quiet);
    let t0 = Instant::now();
    let report = super::pool(threads)?.install(|| op(&progress))?;
    progress.finish();
    if json || !quiet {
        summary(&report, json, t0);
    }
    Ok(())
}

/// One compressed file of a report: the tables it holds (a full-form
/// file holds three; `decompress` reports each table on its own) with
/// their raw bytes summed and the file's size counted once.
struct FileRow<'a> {
    layer: u32,
    name: &'a str,
    tables: Vec<&'a str>,
    raw_bytes: u64,
    bytes: u64,
    seconds: f64,
    actions: Vec<pack::Action>,
}

/// The report's rows grouped by compressed file, in order.
fn file_rows(r: &PackReport) -> Vec<FileRow<'_>> {
    let mut rows: Vec<FileRow> = Vec::new();
    for f in &r.files {
        let row = match rows.iter_mut().position(|w| w.name == f.name) {
            Some(i) => &mut rows[i],
            None => {
                rows.push(FileRow {
                    layer: f.layer,
                    name: &f.name,
                    tables: Vec::new(),
                    raw_bytes: 0,
                    bytes: f.bytes,
                    seconds: 0.0,
                    actions: Vec::new(),
                });
                rows.last_mut().expect("a row")
            }
        };
        row.tables.extend(f.raw.split(", "));
        row.raw_bytes += f.raw_bytes;
        row.seconds += f.seconds;
        if !row.actions.contains(&f.action) {
            row.actions.push(f.action);
        }
    }
    rows
}

/// What was done, as the summary shows it.
fn action_name(a: pack::Action) -> String {
    serde_json::to_value(a)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
        .replace('_', " ")
}

fn summary(r: &PackReport, json: bool, t0: Instant) {
    let rows = file_rows(r);
    let tables: usize = rows.iter().map(|w| w.tables.len()).sum();
    let raw: u64 = rows.iter().map(|w| w.raw_bytes).sum();
    let packed: u64 = rows.iter().map(|w| w.bytes).sum();
    if json {
        println!(
            "{}",
            serde_json::json!({
                "files": r.files,
                "removed": r.removed,
                "tables": tables,
                "compressed_files": rows.len(),
                "raw_bytes": raw,
                "bytes": packed,
                "seconds": t0.elapsed().as_secs_f64(),
            })
        );
        return;
    }
    // One row per compressed file; its tables joined by commas (one word).
    println!("layer  file              raw bytes  compressed   ratio  seconds  tables  done");
    for w in &rows {
        println!(
            "{:>5}  {:<15} {:>11} {:>11}  {:>6.3}  {:>7.2}  {}  {}",
            w.layer,
            w.name,
            w.raw_bytes,
            w.bytes,
            w.raw_bytes as f64 / w.bytes.max(1) as f64,
            w.seconds,
            w.tables.join(","),
            w.actions
                .iter()
                .map(|&a| action_name(a))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    println!(
        "{tables} table(s) in {} compressed file(s): {} raw, {} compressed (ratio {:.3}); \
         {} file(s) removed; {:.1} s",
        rows.len(),
        human(raw),
        human(packed),
        raw as f64 / packed.max(1) as f64,
        r.removed.len(),
        t0.elapsed().as_secs_f64()
    );
}

/// A bar per file on a terminal; a line per file elsewhere.
struct Progress {
    quiet: bool,
    bars: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Progress {
    fn new(quiet: bool) -> Self {
        Progress {
            quiet,
            bars: !quiet && std::io::stderr().is_terminal(),
            bar: Mutex::new(None),
        }
    }

    fn log(&self, msg: &str) {
        if self.quiet {
            return;
        }
        match self.bar.lock().expect("progress lock").as_ref() {
            Some(b) if self.bars => b.println(msg),
            _ => eprintln!("{msg}"),
        }
    }

    fn finish(&self) {
        if let Some(b) = self.bar.lock().expect("progress lock").take() {
            b.finish_and_clear();
        }
    }
}

impl PackObserver for Progress {
    fn start(&self, name: &str, blocks: u64) {
        if !self.bars {
            if !self.quiet {
                eprintln!("{name}: {blocks} block steps");
            }
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(blocks), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>16} {bar:30.green/white} {pos}/{len} blocks {per_sec:.0} eta {eta}",
            )
            .expect("template"),
        );
        bar.set_prefix(name.to_string());
        if let Some(old) = self.bar.lock().expect("progress lock").replace(bar) {
            old.finish_and_clear();
        }
    }
    fn advance(&self, blocks: u64) {
        if let Some(b) = self.bar.lock().expect("progress lock").as_ref() {
            b.inc(blocks);
        }
    }
    fn done(&self, f: &PackedFile) {
        self.log(&match f.action {
            pack::Action::Compressed | pack::Action::AlreadyCompressed => format!(
                "{}: {} -> {} (ratio {:.3}) in {:.2} s, {}",
                f.name,
                human(f.raw_bytes),
                human(f.bytes),
                f.ratio(),
                f.seconds,
                if f.action == pack::Action::Compressed {
                    "compressed and verified"
                } else {
                    "was compressed, verified"
                }
            ),
            // A full-form file holds three tables: its size is not this
            // table's.
            pack::Action::Decompressed | pack::Action::AlreadyRaw => format!(
                "{}: {} from {} in {:.2} s, {}",
                f.raw,
                human(f.raw_bytes),
                f.name,
                f.seconds,
                if f.action == pack::Action::Decompressed {
                    "decompressed and verified"
                } else {
                    "raw table present and verified"
                }
            ),
        });
    }
    fn removed(&self, name: &str) {
        self.log(&format!("removed {name}"));
    }
    fn warning(&self, message: &str) {
        // Warnings are shown even with --quiet.
        match self.bar.lock().expect("progress lock").as_ref() {
            Some(b) if self.bars => b.println(format!("warning: {message}")),
            _ => eprintln!("awari: warning: {message}"),
        }
    }
}

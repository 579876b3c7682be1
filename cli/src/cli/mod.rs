//! Subcommands of the `awari` binary. Only this module prints and picks exit
//! codes: 0 success, 1 a check that failed, 2 bad input or an I/O error.

mod bench;
mod board;
mod build;
mod compress;
mod fault;
mod matches;
mod play;
mod player;
mod query;
mod recover;
mod rules;
#[cfg(feature = "serve")]
mod serve;
mod stats;
mod verify;

use awari_egdb::build::BuildError;
use awari_egdb::codec::CompressError;
use awari_egdb::error::human;
use awari_egdb::plan::PlanError;
use awari_egdb::probe::Database;
use awari_egdb::probe::ProbeError;
use awari_egdb::recover::RecoverError;
use awari_egdb::rules::Rules;
use awari_egdb::store::StoreError;
use awari_egdb::{Error, ErrorKind};
use clap::{Parser, Subcommand};
use std::path::Path;

/// The exit codes, shown at the end of every help text.
pub const EXIT_CODES: &str = "Exit status: 0 success; 1 a check failed (a disagreement, a damaged \
or missing table); 2 bad input or an I/O error (one line on stderr starting with 'awari:').";

/// Exact endgame score databases for Awari (Oware): builds, queries and
/// verifies score tables in the VU database's format and numbering.
#[derive(Parser)]
#[command(name = "awari", version, about, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the seed count and Goedel number of a position.
    Index(board::IndexArgs),
    /// Print the position with a given Goedel number.
    Position(board::PositionArgs),
    /// Build the score tables (and cycle envelope) of layers 0..=N.
    Build(build::BuildArgs),
    /// Look up exact scores, the cycle envelope, the moves and best play.
    Query(query::QueryArgs),
    /// Compare our scores with an oracle folder (pinned positions) or check move facts.
    Verify(verify::VerifyArgs),
    /// Verify checksums and recompute every stored value from its children.
    Check(verify::CheckArgs),
    /// Build a layer range from scratch and print per-layer figures and the
    /// machine's random read-modify-write rate.
    Bench(bench::BenchArgs),
    /// Compress the tables into format 4 files that probes read directly.
    Compress(compress::CompressArgs),
    /// Write back the raw tables from their compressed files.
    Decompress(compress::DecompressArgs),
    /// Per-layer figures: won/drawn/lost shares, score histogram, pinned
    /// share, build figures; --plot draws them.
    Stats(stats::StatsArgs),
    /// Play a game against the computer: the tables' best moves where they
    /// reach, a search within its clock elsewhere (or between two people,
    /// or two computers).
    Play(play::PlayArgs),
    /// Games between two computer players: wins, draws, losses, the score
    /// and an Elo difference; every game's record.
    Match(matches::MatchArgs),
    /// Rebuild a deleted or damaged manifest.json from the tables, trusting
    /// a layer only if it equals known-good checksums or passes the Bellman
    /// check.
    Recover(recover::RecoverArgs),
    /// Print the rule sets (awari, abapa, olympiad, awale) field by field,
    /// each with its meaning.
    Rules(rules::RulesArgs),
    /// Serve the tables over HTTP: a JSON API (/api/v1) and a page that
    /// shows every move's exact worth (the web oracle).
    #[cfg(feature = "serve")]
    Serve(serve::ServeArgs),
}

/// A failure to report: message for stderr and the exit status.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub code: i32,
}

impl Failure {
    /// Bad input or an I/O error: exit status 2.
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 2,
        }
    }
    /// A check that found something wrong: exit status 1.
    pub fn failed(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 1,
        }
    }
}

/// The one place that turns library errors into exit codes and adds the
/// hints that name commands and flags (the library's messages name
/// neither): a damaged table is a failed check (1); everything else is bad
/// input or I/O (2). The same damage gives the same exit on every path.
impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure {
            code: exit_code(e.kind()),
            message: match hint(&e) {
                Some(h) => format!("{e}; {h}"),
                None => e.to_string(),
            },
        }
    }
}

/// The exit status of a failure of this kind.
pub fn exit_code(kind: ErrorKind) -> i32 {
    match kind {
        ErrorKind::Damaged => 1,
        _ => 2,
    }
}

/// What the user can do about an error, in the binary's words: by the
/// room's error, else for any damage.
fn hint(e: &Error) -> Option<String> {
    let words = if let Some(s) = e.cause::<StoreError>() {
        store_hint(s)
    } else if let Some(p) = e.cause::<PlanError>() {
        Some(plan_hint(p))
    } else if let Some(ProbeError::NoFolder) = e.cause() {
        Some("pass --db DIR or set AWARI_PATH".into())
    } else if let Some(RecoverError::ManifestFine(_)) = e.cause() {
        Some("`awari build` and `awari verify` check the tables it lists".into())
    } else if let Some(BuildError::RanksDisagree(_)) = e.cause() {
        Some("start every rank with the same binary, arguments and folder".into())
    } else {
        None
    };
    if words.is_some() || !e.is_damage() {
        return words;
    }
    // Not damage to repair: the message says how to convert the file.
    if let Some(StoreError::Compressed {
        source: CompressError::Retired { .. },
        ..
    }) = e.cause()
    {
        return None;
    }
    let dir = e
        .path()
        .and_then(|p| if p.is_dir() { Some(p) } else { p.parent() });
    Some(match dir {
        Some(d) if !d.join("manifest.json").exists() => {
            "copy the table again from the VU dataset".into()
        }
        _ => "`awari build` on the folder rebuilds damaged tables".into(),
    })
}

/// What the user can do about a folder that cannot be used as it is.
fn store_hint(e: &StoreError) -> Option<String> {
    let parent = |p: &Path| p.parent().unwrap_or(Path::new(".")).display().to_string();
    Some(match e {
        StoreError::MissingLayer {
            layer, vu: true, ..
        } => format!(
            "the folder holds no scores.{layer}; add it from the VU dataset, or build our own \
             tables with `awari build --max-seeds {layer} --db NEW_DIR`"
        ),
        StoreError::MissingLayer { layer, dir, .. } => format!(
            "build it with `awari build --max-seeds {layer} --db {}`",
            dir.display()
        ),
        StoreError::LostManifest { dir, .. } => format!(
            "`awari recover --db {} --checksums known` rebuilds the manifest from the tables \
             (add --rules NAME for tables of another rule set than awari)",
            dir.display()
        ),
        StoreError::ForeignManifest { path, .. } => format!(
            "if it is a folder of ours whose manifest was damaged, `awari recover --db {} \
             --checksums known` rebuilds it from the tables",
            parent(path)
        ),
        StoreError::ForeignFolder { .. } => "such a folder needs no manifest (query, check and \
             verify read it as it is); to build or compress, choose another --db"
            .into(),
        StoreError::RulesMixed { .. } => {
            "move the files of each rule set into a folder of their own".into()
        }
        StoreError::NoEnvelope { .. } => {
            "rebuild the layer with the envelope (without --no-envelope)".into()
        }
        _ => return None,
    })
}

/// What the user can do about memory or disk that does not suffice.
fn plan_hint(e: &PlanError) -> String {
    match e {
        PlanError::Memory {
            what,
            layer,
            from_limit,
            needed,
            ..
        } if what.is_reader() => match from_limit {
            true => format!(
                "raise --memory-limit to at least {}, or leave layer {layer} out (--layers)",
                human(*needed)
            ),
            false => format!("free memory, or leave layer {layer} out (--layers)"),
        },
        PlanError::Memory {
            layer,
            from_limit,
            needed,
            ..
        } => format!(
            "{}{}",
            match (*from_limit, *layer) {
                (true, 0) => format!("--memory-limit must be at least {}", human(*needed)),
                (true, _) => format!(
                    "raise --memory-limit to at least {}, or build fewer layers (--max-seeds {})",
                    human(*needed),
                    layer.saturating_sub(1)
                ),
                (false, _) => "free memory, or build fewer layers with --max-seeds".into(),
            },
            if *layer > 0 {
                "; finished layers are kept and a rerun resumes"
            } else {
                ""
            }
        ),
        PlanError::Disk { .. } => "free disk space, or build fewer layers with --max-seeds".into(),
        _ => "free memory or disk".into(),
    }
}

/// `--db DIR`, the folder of tables, and `--rules NAME`, its rule set, as
/// every command takes them.
#[derive(clap::Args, Clone, Debug)]
pub struct DbArg {
    /// Folder of tables: ours, or a VU dataset folder to read (default:
    /// $AWARI_PATH, else ./db).
    #[arg(long = "db", value_name = "DIR", alias = "out")]
    db: Option<std::path::PathBuf>,
    /// The rule set of the tables: awari (the VU database's), abapa,
    /// olympiad or awale (`awari rules` shows them). Default: the folder's,
    /// as its manifest or its compressed files name it (awari for a new
    /// folder, and assumed, as said, for raw tables without manifest); a
    /// folder that names another rule set is refused.
    #[arg(long, value_name = "NAME", value_parser = parse_rules)]
    rules: Option<Rules>,
}

/// `--memory-limit SIZE`, the memory a reader (`check`, `recover`,
/// `stats`) may use, planned by the one memory planner (`plan`).
#[derive(clap::Args, Clone, Debug)]
pub struct MemoryArg {
    /// Memory the command may use, e.g. 8GiB or 500MB (default: what the
    /// machine has available). It works layer by layer; a layer that does
    /// not fit is refused before it starts, with what it needs.
    #[arg(long, value_name = "SIZE")]
    memory_limit: Option<String>,
}

impl MemoryArg {
    /// The budget: the limit, else the memory available now.
    pub fn budget(&self) -> Result<awari_egdb::build::Budget, Failure> {
        let limit = self
            .memory_limit
            .as_deref()
            .map(|s| parse_size("--memory-limit", s, "8GiB, 500MB, 1073741824"))
            .transpose()?;
        Ok(awari_egdb::build::Budget::now(limit))
    }
}

/// `--rules NAME`: a preset of the library.
pub fn parse_rules(s: &str) -> Result<Rules, String> {
    Rules::by_name(s).map_err(|e| e.to_string())
}

impl DbArg {
    /// The rule set asked for with `--rules`.
    pub fn rules_asked(&self) -> Option<Rules> {
        self.rules
    }

    /// The rule set of the folder (its manifest's, else the one its
    /// compressed files name, else `--rules`, else awari assumed for raw
    /// tables without manifest: `store::rules_of`), refusing a folder that
    /// names another rule set than `--rules` or several; for an empty or
    /// missing folder, `--rules` (default awari). A folder that cannot be
    /// read is left to the command to report.
    pub fn rules(&self) -> Result<Rules, Failure> {
        let dir = self.path();
        let Ok(folder) = awari_egdb::store::read_folder(&dir) else {
            return Ok(self.rules.unwrap_or_default());
        };
        let found = awari_egdb::store::rules_of(&dir, &folder, self.rules.as_ref())?;
        Ok(found.map_or(self.rules.unwrap_or_default(), |f| f.rules))
    }

    /// The folder's tables, read under its rule set as [`rules`](Self::rules)
    /// finds it (`--rules` taken for raw tables without manifest).
    pub fn open(&self) -> Result<Database, Failure> {
        open_db(&self.path(), self.rules.as_ref())
    }

    /// The folder: `--db`, else `$AWARI_PATH`, else `./db`.
    pub fn path(&self) -> std::path::PathBuf {
        self.db
            .clone()
            .or_else(|| {
                std::env::var_os(awari_egdb::probe::AWARI_PATH)
                    .filter(|p| !p.is_empty())
                    .map(Into::into)
            })
            .unwrap_or_else(|| "./db".into())
    }
}

/// The tables of the folder `dir`, with `asked` (`--rules`) the rule set
/// they follow: taken for raw tables without manifest, refused where the
/// folder names another.
pub fn open_db(dir: &Path, asked: Option<&Rules>) -> Result<Database, Failure> {
    let db = Database::open(dir)?;
    Ok(match asked {
        Some(r) => db.with_rules(r)?,
        None => db,
    })
}

/// What a command says where the rule set was assumed (raw tables without
/// manifest, read as awari's): `None` where something named it.
pub fn assumed(db: &Database) -> Option<&'static str> {
    db.rules_assumed().then_some(ASSUMED)
}

/// How a command says that the rule set was assumed.
pub const ASSUMED: &str =
    "assumed: no manifest.json or compressed file names the rule set, so the \
VU database's is taken; --rules NAME to say otherwise";

/// A size given as a number of bytes or with a unit (16KiB, 8GiB, 500MB).
pub fn parse_size(flag: &str, s: &str, e_g: &str) -> Result<u64, Failure> {
    let t = s.trim();
    t.parse::<u64>()
        .or_else(|_| t.parse::<bytesize::ByteSize>().map(|b| b.as_u64()))
        .map_err(|_| Failure::usage(format!("{flag} '{s}' is not a size (e.g. {e_g})")))
}

/// Worker threads allowed per core: more only adds switching.
const MAX_THREADS_PER_CORE: usize = 8;

/// A worker pool of `threads` threads (default: all cores).
pub fn pool(threads: Option<usize>) -> Result<rayon::ThreadPool, Failure> {
    pool_builder(threads)?
        .build()
        .map_err(|e| Failure::usage(format!("cannot start worker threads: {e}")))
}

/// The builder of a worker pool of `threads` threads (default: all cores),
/// with the count checked: at least 1, at most [`MAX_THREADS_PER_CORE`] per
/// core.
pub fn pool_builder(threads: Option<usize>) -> Result<rayon::ThreadPoolBuilder, Failure> {
    if threads == Some(0) {
        return Err(Failure::usage("--threads must be at least 1"));
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    if let Some(t) = threads.filter(|&t| t > MAX_THREADS_PER_CORE * cores) {
        return Err(Failure::usage(format!(
            "--threads {t}: this machine has {cores} core(s); give at most {}",
            MAX_THREADS_PER_CORE * cores
        )));
    }
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        b = b.num_threads(t);
    }
    Ok(b)
}

/// Parses the arguments; help and version go to stdout (exit 0), and a
/// parse error is one `awari:` line on stderr (exit 2), like every other
/// error of the binary.
fn parse() -> Result<Cli, i32> {
    use clap::error::ErrorKind as Clap;
    Cli::try_parse().map_err(|e| match e.kind() {
        Clap::DisplayHelp | Clap::DisplayVersion => {
            let _ = e.print();
            0
        }
        Clap::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            2
        }
        _ => {
            let text = e.render().to_string();
            // The message's first paragraph as one line: clap puts what
            // it names (the missing arguments, say) on the lines below.
            let mut para = text.lines().take_while(|l| !l.trim().is_empty());
            let head = para.next().unwrap_or("bad arguments");
            let head = head.strip_prefix("error: ").unwrap_or(head);
            let rest: Vec<&str> = para.map(str::trim).collect();
            let first = if rest.is_empty() {
                head.to_string()
            } else {
                format!("{head} {}", rest.join(", "))
            };
            let tip = match e.get(clap::error::ContextKind::Suggested) {
                Some(clap::error::ContextValue::StyledStrs(s)) if !s.is_empty() => {
                    format!("; {}", s[0].to_string().trim_start_matches("tip: "))
                }
                _ => String::new(),
            };
            eprintln!("awari: {first}{tip} (see --help)");
            2
        }
    })
}

pub fn run() -> i32 {
    fault::install();
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let result = match cli.command {
        Command::Index(a) => board::index(a),
        Command::Position(a) => board::position(a),
        Command::Build(a) => build::run(a),
        Command::Query(a) => query::run(a),
        Command::Verify(a) => verify::run_verify(a),
        Command::Check(a) => verify::run_check(a),
        Command::Bench(a) => bench::run(a),
        Command::Compress(a) => compress::run_compress(a),
        Command::Decompress(a) => compress::run_decompress(a),
        Command::Recover(a) => recover::run(a),
        Command::Play(a) => play::run(a),
        Command::Match(a) => matches::run(a),
        Command::Stats(a) => stats::run(a),
        Command::Rules(a) => rules::run(a),
        #[cfg(feature = "serve")]
        Command::Serve(a) => serve::run(a),
    };
    match result {
        Ok(()) => 0,
        Err(f) => {
            eprintln!("awari: {}", f.message);
            f.code
        }
    }
}

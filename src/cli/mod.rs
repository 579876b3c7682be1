//! Subcommands of the `awari` binary. Only this module prints and picks exit
//! codes: 0 success, 1 a check that failed, 2 bad input or an I/O error.

mod bench;
mod board;
mod build;
mod compress;
mod query;
mod verify;

use clap::{Parser, Subcommand};

/// Exact endgame score databases for Awari (Oware), VU-compatible.
#[derive(Parser)]
#[command(name = "awari", version, about)]
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
    /// Compress the tables into zstd block files that probes read directly.
    Compress(compress::CompressArgs),
    /// Write back the raw tables from their compressed files.
    Decompress(compress::DecompressArgs),
}

/// A failure to report: message for stderr and the exit status.
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

pub fn run() -> i32 {
    let cli = Cli::parse();
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
    };
    match result {
        Ok(()) => 0,
        Err(f) => {
            eprintln!("awari: {}", f.message);
            f.code
        }
    }
}

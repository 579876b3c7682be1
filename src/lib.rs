//! # awari-egdb
//!
//! Exact endgame score databases for Awari (Oware) in the file format and
//! Goedel numbering of the Vrije Universiteit's Awari Game Score Database
//! (Romein & Bal, 2002): built by parallel retrograde analysis, probed
//! from files, checked against independent values.
//!
//! ```
//! use awari_egdb::{index, rules::Position};
//! let p = Position::indexable([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]).unwrap();
//! assert_eq!(index::rank(&p), 588_953);
//! assert_eq!(index::unrank(16, 588_953).unwrap(), p);
//! ```
//!
//! # The map
//!
//! Data flows one way, from the rules of the game to the checks of the
//! finished tables:
//!
//! ```text
//! rules -> index -> solve -> build -> store -> probe -> verify
//!                     |        \-> pack, codec  /  \      recover, stats
//!                   comm                         search -> game
//! ```
//!
//! * [`rules`]: positions, sowing, captures, legality under the four
//!   rule sets (awari, abapa, olympiad, awale: data, [`rules::Rules`]),
//!   un-moves, the packed board they share (the game as the database
//!   encodes it).
//! * [`index`]: the VU Goedel numbering of each layer (positions with the
//!   same number of seeds).
//! * [`solve`]: the retrograde solvers of one layer: the shared
//!   propagation kernel, the in-memory solver (3 bytes per position) and
//!   the compact one (1 byte per position, lists on disk, ranks), and the
//!   distance to the next capture ([`solve::distance`], `dist.n`: how
//!   best play reaches its score).
//! * [`comm`]: ranks of a build (one process, threads, or MPI) and how a
//!   layer is split between them.
//! * [`build`]: the builder: every layer in order, resumable, within a
//!   memory budget.
//! * [`plan`]: the one memory planner, below build, verify and recover:
//!   which solver builds a layer, what each reader of a layer needs, and
//!   whether it fits a [`plan::Budget`].
//! * [`store`]: the folder: manifest, lock, and the one opener and writer
//!   of its table files: [`store::StoredTable`] (where a table is, the raw
//!   file else its compressed copy; size and header checked; `pread`, or
//!   mapped as an `unsafe` opt-in) and the atomic writes (temporary name,
//!   sync, rename), also of compressed files ([`store::AtomicFile`]).
//! * [`codec`]: the compressed table format, blocks with random access:
//!   the header and reader, and format 4 ([`codec::v4`]: small blocks of a
//!   fixed number of bytes for probes, the full form or the scores alone,
//!   optionally "don't care" entries; the retired formats 1 to 3 are
//!   refused by name) and its own error, [`codec::CompressError`];
//!   [`pack`]: compressing and decompressing a folder.
//! * [`probe`]: [`probe::Database`], exact scores, moves and best play
//!   (best worth, then best [`probe::Distance`]) from a folder of ours
//!   (raw, compressed, or scores alone) or a VU dataset folder; it
//!   resolves the "don't care" entries of format 4 engine files through
//!   their captures.
//! * [`verify`]: the checks: against an oracle folder, move facts,
//!   known-good checksums, and the Bellman consistency check (layer by
//!   layer within a memory budget, the lower layers read in sorted batches,
//!   not held).
//! * [`recover`]: a lost manifest rebuilt from the tables; [`stats`]:
//!   per-layer figures.
//! * [`search`]: the player's search above the built layers (iterative
//!   deepening, transposition table, threads, time limits; the tables cut
//!   the tree); [`game`]: a game move by move, one job a file: the board
//!   and its labels, the rules of the end and the result, the game record,
//!   and the computer player.
//! * [`error`]: the library's [`Error`], thin over the rooms' own typed
//!   errors (`StoreError`, [`rules::RulesError`], `PlanError`, ...:
//!   [`Error::cause`] gives them back), and its [`ErrorKind`]; the lowest
//!   floor, it names no other room.
//! * [`format`](mod@format): names and the checksum
//!   ([`format::Checksum`]) shared by the files; [`mem`]: memory
//!   figures and buffers; [`fault`]: named fault points for crash tests.
//!
//! The library prints nothing and never exits. Three crates of the
//! workspace sit on top of it: the `awari` command line (`cli/`, which
//! prints and exits; its web oracle, `awari serve`, behind the feature
//! `serve`, answers with [`probe::Answer`], the object `awari query
//! --json` prints), the C API (`capi/`: `include/awari_egdb.h`,
//! `libawari_egdb.so` and `.a`) and the Python module (`python/`). None of
//! their crates (argument parsing, progress bars, plots, HTTP, pyo3) is in
//! this library's dependency tree.
#![warn(missing_docs)]

pub mod build;
pub mod codec;
#[doc(hidden)]
pub mod comm;
pub mod error;
#[doc(hidden)]
pub mod fault;
pub mod format;
pub mod game;
pub mod index;
#[doc(hidden)]
pub mod mem;
pub mod pack;
#[doc(hidden)]
pub mod plan;
pub mod probe;
pub mod recover;
pub mod rules;
pub mod search;
#[doc(hidden)]
pub mod solve;
pub mod stats;
#[doc(hidden)]
pub mod store;
pub mod verify;

pub use error::{Error, ErrorKind, Result};
pub use rules::{Move, Position};

/// The README's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

//! Proving tables right: against an oracle folder (the VU dataset), by the
//! forward Bellman check, against recorded move facts, and against a list
//! of known-good checksums.
//!
//! # Example
//!
//! A fresh build of layers 0..=8 against the known-good checksums the
//! library carries (`data/known-good.csv`):
//!
//! ```
//! use awari_egdb::build::{build, BuildOptions, Silent};
//! use awari_egdb::rules::AWARI;
//! use awari_egdb::verify::{builtin_known_good, compare_checksums};
//! # fn main() -> awari_egdb::Result<()> {
//! let dir = tempfile::tempdir().unwrap();
//! build(&BuildOptions { max_seeds: 8, ..BuildOptions::new(dir.path()) }, &Silent)?;
//! let known = builtin_known_good(&AWARI).expect("awari's list");
//! let report = compare_checksums(dir.path(), &known, 0..=8)?;
//! assert_eq!(report.tables.len(), 36); // scores, lower, upper, dist of 9 layers
//! assert_eq!(report.failures().count(), 0);
//! # Ok(()) }
//! ```
//!
//! # The verifiers
//!
//! * [`compare_with_oracle`] (`oracle.rs`; `awari verify --oracle`)
//!   compares our `scores.n` with an oracle folder's (the VU dataset) byte
//!   for byte. *Proves:* agreement on **pinned** positions (`lower ==
//!   upper`), whose score no reading of the repetition rule changes, and
//!   that our files match the manifest's checksums as they are streamed.
//!   *Cannot:* say anything about unpinned positions (compared for
//!   information only: they show how the oracle scores endless play); it
//!   needs our envelope and oracle files of the layer's size, and it trusts
//!   the oracle.
//! * [`bellman_check`] (`bellman.rs`; `awari check`) recomputes every
//!   stored score and envelope bound forward from the children. *Proves:*
//!   the tables are internally consistent. *Cannot:* show them right: with
//!   cycles the Bellman equations have more than one solution, so wrong
//!   tables can pass; and it takes the lower layers as given.
//! * [`check_fact`] (`facts.rs`; `awari verify --facts`) checks recorded
//!   move facts ([`read_facts`], `data/vu-move-facts.csv`): the loss of a
//!   move against the best one. *Proves:* agreement with an independent
//!   source on the positions the facts name. *Cannot:* say anything about
//!   other positions; facts of layers not built are skipped.
//! * [`compare_checksums`] (`checksums.rs`; `awari verify --checksums`)
//!   recomputes each table's checksum from its bytes (neither the manifest
//!   nor a compressed header is trusted) and compares it with a list of
//!   known-good checksums ([`read_known_good`], `data/known-good.csv`).
//!   *Proves:* each listed table is byte-identical to one recorded as good.
//!   *Cannot:* say anything about tables the list does not cover (higher
//!   layers, an envelope the folder lacks); it is as good as the list.
//!
//! The two CSV readers ([`read_facts`], [`read_known_good`]) share the line
//! and field splitting of `csv.rs`; the oracle comparison and the checksum
//! comparison share the streaming helpers of this module. Every verifier
//! fails with an [`Error`](crate::Error) when it cannot run at all; what it finds is
//! in its report.

mod error;
pub use error::VerifyError;
mod bellman;
mod checksums;
mod csv;
mod facts;
mod oracle;

pub use bellman::{bellman_check, BellmanMismatch, BellmanVerdict, CHECK_BATCH_BYTES};
pub use checksums::{
    builtin_known_good, compare_checksums, parse_known_good, read_known_good, ChecksumReport,
    KnownGood, KnownTable, TableCheck, TableOutcome,
};
pub use facts::{check_fact, read_facts, Fact, FactOutcome};
pub use oracle::{compare_with_oracle, Disagreement, LayerVerdict};

/// Bytes read per step when streaming tables.
const STEP: usize = 1 << 24;

/// Refuses a check that compares with the VU database (`what`) on a folder
/// of another rule set than awari.
pub(crate) fn awari_only(
    dir: &std::path::Path,
    rules: &crate::rules::Rules,
    what: &'static str,
) -> crate::Result<()> {
    if rules.same_tables(&crate::rules::AWARI) {
        return Ok(());
    }
    Err(VerifyError::VuOnly {
        dir: dir.to_path_buf(),
        what,
        rules: rules.name,
    }
    .into())
}

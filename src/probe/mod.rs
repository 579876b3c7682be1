//! Looking up exact scores: [`Database`] over a folder of tables.
//!
//! A folder is either one of ours (with `manifest.json`: scores and, when
//! built, the cycle envelope, each checksummed) or a folder of scores
//! without manifest: a plain VU dataset folder holding only `scores.N`
//! files, or the `scores.N.zst` files an engine ships. Layers are opened on first use; a
//! missing layer or a file of the wrong size is a typed error naming the
//! file, and a value no score of its layer can take is damage
//! ([`StoreError::BadValue`]), never an answer. `Database` is `Send + Sync` and
//! every probe takes `&self`.
//!
//! # Example
//!
//! ```
//! use awari_egdb::build::{build, BuildOptions, Silent};
//! use awari_egdb::{probe::Database, Position};
//! # fn main() -> awari_egdb::Result<()> {
//! let dir = tempfile::tempdir().unwrap();
//! build(&BuildOptions { max_seeds: 8, ..BuildOptions::new(dir.path()) }, &Silent)?;
//! let db = Database::open(dir.path())?;
//! // Three seeds to sow from the first pit, two in the opponent's last.
//! let p = Position::indexable([3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2])?;
//! assert_eq!(db.score(&p)?, 1);
//! assert_eq!(db.best_moves(&p)?, vec![0]);
//! assert!(db.envelope(&p)?.expect("built with the envelope").pinned());
//! # Ok(()) }
//! ```
//!
//! # The rule set
//!
//! The tables are read under the rule set their folder names
//! ([`store::rules_of`]): its manifest's; without manifest, the one the
//! headers of its compressed files name (files that name different ones
//! are refused, [`StoreError::RulesMixed`]); for raw tables without manifest,
//! which name none, awari (the VU database's) is assumed, and
//! [`Database::rules_assumed`] says so. [`Database::with_rules`] names the
//! rule set: taken for raw tables without manifest, refused where the
//! folder names another.
//!
//! # Reading, or mapping
//!
//! [`Database::open`] reads every entry with `pread`: whatever another
//! process does to the files (a table truncated under a running game), a
//! probe returns an error at worst. [`Database::open_mapped`] maps the
//! tables instead, for probes at memory speed, and is `unsafe`: a mapped
//! table truncated while mapped kills the process with `SIGBUS` (the
//! mapping contract of [`crate::store::map`]).
//!
//! Opening a folder or a layer reads no table: it checks the manifest, each
//! table's size and, for a compressed table, its header and block index
//! (whose own checksum is in the header; every block carries a checksum
//! that is checked when it is decompressed). So the first probe of a layer
//! costs a few system calls, not a read of gigabytes. The checksums of
//! whole tables are verified where the caller asks for it:
//! [`Database::verify`], [`Database::verify_layer`], or
//! [`Database::verify_on_load`] for a database that checks every layer as
//! it maps it (what `awari query --verify` does).
//!
//! A table of our folders may also be compressed ([`crate::codec`]):
//! where the raw `scores.n` is absent and the manifest lists `scores.n.zst`,
//! the compressed file is mapped instead, and a probe decodes the block
//! that holds its entry up to the entry, its 4 KiB group of blocks verified
//! the first time it is used (a thread keeps its last 1,024 blocks where
//! their decoding stopped).
//!
//! A pass over many layers holds none of them: [`Database::read_range`]
//! copies a range of a table and [`Database::read_table`] a whole table
//! for a caller that drops it (the Bellman check), where
//! [`Database::table`] keeps what it reads. A folder without manifest
//! lists every layer whose scores it holds, raw or only as `scores.n.zst`
//! (the scores-only form an engine ships).
//!
//! # Where things are
//!
//! * `mod.rs`: [`Database`], where its tables come from, opening a folder
//!   (or taking tables in memory), and the per-layer cache.
//! * `tables.rs`: one table (raw or compressed) and the tables of a layer,
//!   [`LayerTables`] and [`lookup`].
//! * `load.rs`: mapping a layer's tables from a folder (the raw table,
//!   else its compressed copy) and checking their checksums.
//! * `query.rs`: probing positions: scores, [`Envelope`], [`MoveInfo`].
//! * `distance.rs`: the distance to the next capture ([`Distance`],
//!   `dist.n`, where the folder has it) and best play by it
//!   ([`best_pits`]): best worth first, then best distance.
//! * `resolve.rs`: the scores of a table that leaves "don't care" entries
//!   ([`crate::codec::v4::dont_care`]): `resolve`, the stored value
//!   against the position's best exit, children searched with a bound.
//! * `pv.rs`: the principal variation ([`Pv`], [`PvStep`], [`PvEnd`]).
//! * `answer.rs`: everything about one position in one object
//!   ([`Answer`]), what `awari query --json` prints and `awari serve`
//!   returns.

mod error;
pub use error::ProbeError;
mod answer;
mod distance;
mod load;
mod pv;
mod query;
mod resolve;
mod tables;

pub use answer::{Answer, AnswerMove, AnswerStep};
pub use distance::{best_pits, Distance};
pub use pv::{Pv, PvEnd, PvStep};
pub use query::{Envelope, MoveInfo};
#[doc(hidden)]
pub use resolve::{resolve, Entry};
#[doc(hidden)]
pub use tables::{lookup, LayerTables};

use crate::error::{Error, Result};
use crate::format::Kind;
use crate::index::layer_size;
use crate::index::IndexError;
use crate::rules::{Rules, MAX_SEEDS};
use crate::store::StoreError;
use crate::store::{self, Folder, FolderRules, Manifest, RulesFrom, StoredTable};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tables::{Bytes, Layer, ProbeTable};

/// The environment variable the VU dataset's own tools read the folder from.
pub const AWARI_PATH: &str = "AWARI_PATH";

/// Where the tables come from.
enum Source {
    /// A folder of ours.
    Ours { dir: PathBuf, manifest: Manifest },
    /// A plain VU dataset folder.
    Vu { dir: PathBuf },
    /// Tables handed over in memory.
    Memory,
}

/// Exact scores from a folder of tables (ours or the VU dataset's).
pub struct Database {
    source: Source,
    /// The rule set of the tables: the manifest's, the compressed
    /// files', the caller's, or awari assumed for raw tables without
    /// manifest.
    rules: Rules,
    /// Where it was found.
    rules_from: RulesFrom,
    layers: Vec<OnceLock<Layer>>,
    /// Checksum every table of ours as its layer is opened.
    verify_on_load: bool,
    /// Map the tables (the caller of `open_mapped` promised not to
    /// truncate them) instead of reading them with `pread`.
    mapped: bool,
}

impl Database {
    /// Opens a folder of tables, read with `pread` (see the [module
    /// documentation](self)). Nothing is read yet; each layer is opened
    /// when first probed, after its tables' sizes (and, for compressed
    /// tables, headers) are checked. No table is read whole: see
    /// [`verify`](Self::verify) and [`verify_on_load`](Self::verify_on_load).
    ///
    /// A folder without `manifest.json` is taken for a folder of scores
    /// (`scores.N` files, or their compressed copies `scores.N.zst`); one
    /// that also holds our envelope tables is one of ours that lost its
    /// manifest, and is refused ([`StoreError::LostManifest`]). Its rule set is
    /// the one its compressed files name, else awari assumed (see [the rule
    /// set](self#the-rule-set)).
    pub fn open(dir: impl AsRef<Path>) -> Result<Database> {
        let dir = dir.as_ref().to_path_buf();
        let folder = store::read_folder(&dir)?;
        let Some(found) = store::rules_of(&dir, &folder, None)? else {
            return Err(StoreError::NoTables(dir).into());
        };
        let source = match folder {
            Folder::Ours(manifest) => Source::Ours { dir, manifest },
            Folder::Vu => Source::Vu { dir },
            Folder::Empty => return Err(StoreError::NoTables(dir).into()),
        };
        Ok(Database {
            source,
            rules: found.rules,
            rules_from: found.from,
            layers: (0..=MAX_SEEDS).map(|_| OnceLock::new()).collect(),
            verify_on_load: false,
            mapped: false,
        })
    }

    /// [`open`](Self::open), with the tables mapped into memory: warm
    /// probes at memory speed, no system call per probe.
    ///
    /// # Safety
    ///
    /// No table of the folder may be truncated (or otherwise modified)
    /// while the `Database` lives: a read of a mapped page that is no
    /// longer in its file raises `SIGBUS`, which kills the process. Use it
    /// on folders nothing writes to (no build, compress, decompress or
    /// recover running in it, no other tool shortening its files).
    pub unsafe fn open_mapped(dir: impl AsRef<Path>) -> Result<Database> {
        let mut db = Self::open(dir)?;
        db.mapped = true;
        Ok(db)
    }

    /// With `yes`, every table of ours is checksummed (read whole) when its
    /// layer is first mapped, and a table that does not match the manifest
    /// is an [`StoreError::Checksum`] error: slower first probes, for callers
    /// that want each answer to come from verified tables. A VU folder has
    /// no checksums to verify.
    pub fn verify_on_load(mut self, yes: bool) -> Database {
        self.verify_on_load = yes;
        self
    }

    /// Says that the tables follow `rules` (what `--rules` says to the
    /// `awari` binary): taken for raw tables without manifest, whose rule
    /// set was assumed ([`rules_assumed`](Self::rules_assumed)); refused
    /// ([`StoreError::RulesDiffer`], naming both) unless it gives the same
    /// tables as the rule set the manifest or the compressed files name
    /// (or the caller gave before).
    pub fn with_rules(mut self, rules: &Rules) -> Result<Database> {
        let dir = self.dir().unwrap_or(Path::new("(memory)")).to_path_buf();
        let found = FolderRules {
            rules: self.rules,
            from: self.rules_from,
        }
        .asked(&dir, rules)?;
        self.rules = found.rules;
        self.rules_from = found.from;
        Ok(self)
    }

    /// Opens the folder named by `AWARI_PATH`.
    pub fn from_env() -> Result<Database> {
        match std::env::var_os(AWARI_PATH) {
            Some(p) if !p.is_empty() => Self::open(PathBuf::from(p)),
            _ => Err(ProbeError::NoFolder.into()),
        }
    }

    /// A database over in-memory awari tables: `layers[n]` holds layer
    /// `n`'s tables, if any; each must hold one byte per position of its
    /// layer.
    pub fn from_tables<T: AsRef<[u8]> + Send + Sync + 'static>(
        layers: Vec<Option<LayerTables<T>>>,
    ) -> Result<Database> {
        Self::from_tables_of(&crate::rules::AWARI, layers)
    }

    /// [`from_tables`](Self::from_tables) for tables built under `rules`.
    pub fn from_tables_of<T: AsRef<[u8]> + Send + Sync + 'static>(
        rules: &Rules,
        layers: Vec<Option<LayerTables<T>>>,
    ) -> Result<Database> {
        let slots: Vec<OnceLock<Layer>> = (0..=MAX_SEEDS).map(|_| OnceLock::new()).collect();
        for (n, l) in layers.into_iter().enumerate() {
            let Some(LayerTables {
                score,
                envelope,
                dist,
            }) = l
            else {
                continue;
            };
            let n = n as u32;
            if n > MAX_SEEDS {
                return Err(IndexError::NoSuchLayer(n).into());
            }
            let check = |t: &T, table: &'static str| {
                let found = t.as_ref().len() as u64;
                let expected = layer_size(n);
                if found == expected {
                    Ok(())
                } else {
                    Err(Error::from(StoreError::TableSize {
                        layer: n,
                        table,
                        expected,
                        found,
                    }))
                }
            };
            check(&score, "scores")?;
            if let Some((lo, hi)) = &envelope {
                check(lo, "lower")?;
                check(hi, "upper")?;
            }
            if let Some(d) = &dist {
                check(d, "dist")?;
            }
            let _ = slots[n as usize].set(Layer {
                score: ProbeTable::Raw(Box::new(score)),
                envelope: envelope.map(|(lo, hi)| {
                    (
                        ProbeTable::Raw(Box::new(lo) as Bytes),
                        ProbeTable::Raw(Box::new(hi) as Bytes),
                    )
                }),
                dist: dist.map(|d| ProbeTable::Raw(Box::new(d) as Bytes)),
            });
        }
        Ok(Self::of_slots(rules, slots))
    }

    /// A database over tables already opened by the one opener
    /// ([`StoredTable`], e.g. read with `pread`): `layers[n]` holds layer
    /// `n`'s tables, if any, each of its layer's size (which the opener
    /// checked). Nothing is read until it is probed; nothing is kept.
    pub fn from_stored(
        rules: &Rules,
        layers: Vec<Option<LayerTables<StoredTable>>>,
    ) -> Result<Database> {
        let slots: Vec<OnceLock<Layer>> = (0..=MAX_SEEDS).map(|_| OnceLock::new()).collect();
        let stored = |table| ProbeTable::Stored {
            table,
            whole: OnceLock::new(),
        };
        for (n, l) in layers.into_iter().enumerate() {
            let Some(LayerTables {
                score,
                envelope,
                dist,
            }) = l
            else {
                continue;
            };
            if n as u32 > MAX_SEEDS {
                return Err(IndexError::NoSuchLayer(n as u32).into());
            }
            let _ = slots[n].set(Layer {
                score: stored(score),
                envelope: envelope.map(|(lo, hi)| (stored(lo), stored(hi))),
                dist: dist.map(stored),
            });
        }
        Ok(Self::of_slots(rules, slots))
    }

    fn of_slots(rules: &Rules, slots: Vec<OnceLock<Layer>>) -> Database {
        Database {
            source: Source::Memory,
            rules: *rules,
            rules_from: RulesFrom::Caller,
            layers: slots,
            verify_on_load: false,
            mapped: false,
        }
    }

    /// The folder, if the tables come from one.
    pub fn dir(&self) -> Option<&Path> {
        match &self.source {
            Source::Ours { dir, .. } | Source::Vu { dir } => Some(dir),
            Source::Memory => None,
        }
    }

    /// The rule set of the tables: the manifest's, the one the compressed
    /// files of a folder without manifest name, the caller's, or for raw
    /// tables without manifest awari assumed ([`rules_from`](Self::rules_from)).
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Where the rule set was found: a manifest, compressed files'
    /// headers, the caller, or nowhere (assumed).
    pub fn rules_from(&self) -> RulesFrom {
        self.rules_from
    }

    /// Whether nothing named the rule set: raw tables without manifest
    /// (a VU dataset folder) read as awari's, the VU database's rule set,
    /// which may not be theirs. [`with_rules`](Self::with_rules) names it.
    pub fn rules_assumed(&self) -> bool {
        self.rules_from == RulesFrom::Assumed
    }

    /// Whether the folder has no manifest: a VU dataset folder, or the
    /// `scores.N.zst` files an engine ships (scores only, no checksums).
    pub fn is_vu(&self) -> bool {
        matches!(self.source, Source::Vu { .. })
    }

    /// The manifest of one of our folders.
    pub fn manifest(&self) -> Option<&Manifest> {
        match &self.source {
            Source::Ours { manifest, .. } => Some(manifest),
            _ => None,
        }
    }

    /// The layers available: built (ours), present (a folder without
    /// manifest) or loaded (memory). A folder without manifest lists every
    /// layer whose scores it holds: `scores.n` (a VU dataset folder), or
    /// only `scores.n.zst` (the scores-only form an engine ships).
    pub fn layers(&self) -> Vec<u32> {
        match &self.source {
            Source::Ours { manifest, .. } => manifest.layers.iter().map(|l| l.seeds).collect(),
            Source::Vu { dir } => (0..=MAX_SEEDS)
                .filter(|&n| matches!(store::locate(dir, None, n, Kind::Score), Ok(Some(_))))
                .collect(),
            Source::Memory => (0..=MAX_SEEDS)
                .filter(|&n| self.layers[n as usize].get().is_some())
                .collect(),
        }
    }

    #[inline]
    fn layer(&self, n: u32) -> Result<&Layer> {
        let slot = &self.layers[n as usize];
        if let Some(l) = slot.get() {
            return Ok(l);
        }
        self.layer_slow(n)
    }

    #[cold]
    fn layer_slow(&self, n: u32) -> Result<&Layer> {
        let slot = &self.layers[n as usize];
        let l = self.load(n)?;
        // Another thread may have won the race; either copy is the same.
        let _ = slot.set(l);
        Ok(slot.get().expect("layer just set"))
    }

    /// The raw bytes of one table of layer `n` (one signed byte per Goedel
    /// index); `None` for an envelope table the folder does not have.
    ///
    /// A compressed table is decompressed into memory (in parallel, and
    /// checked against its checksum) on the first call, and kept until the
    /// `Database` is dropped: that costs the table's size in memory. A
    /// table that leaves "don't care" entries is resolved whole, with the
    /// tables of the layers below (kept in memory too), and checked
    /// against the header's checksum of the scores.
    pub fn table(&self, n: u32, kind: Kind) -> Result<Option<&[u8]>> {
        self.table_of(n, kind)?
            .map(|t| match t.is_dont_care() {
                true => self.resolve_whole(n, t),
                false => t.whole(),
            })
            .transpose()
    }

    /// Entries `start .. start + out.len()` of table `kind` of layer `n`
    /// into `out` (from memory, with `pread`, or decompressing the blocks
    /// that hold them; nothing of the table is kept). `Ok(false)` for an
    /// envelope table the layer does not have.
    pub fn read_range(&self, n: u32, kind: Kind, start: u64, out: &mut [u8]) -> Result<bool> {
        match self.table_of(n, kind)? {
            Some(t) if t.is_dont_care() => {
                tables::copy_range(self.resolve_whole(n, t)?, start, out).map(|()| true)
            }
            Some(t) => t.read_range(start, out).map(|()| true),
            None => Ok(false),
        }
    }

    /// Table `kind` of layer `n` whole, for a caller that drops it when
    /// done (unlike [`table`](Self::table), which keeps what it reads):
    /// borrowed when the table is in memory or mapped, else read into a
    /// new buffer. `None` for an envelope table the layer does not have.
    pub fn read_table(&self, n: u32, kind: Kind) -> Result<Option<Cow<'_, [u8]>>> {
        match self.table_of(n, kind)? {
            // A "don't care" file is resolved whole (and kept).
            Some(t) if t.is_dont_care() => Ok(Some(Cow::Borrowed(self.resolve_whole(n, t)?))),
            t => t.map(ProbeTable::read).transpose(),
        }
    }

    /// Whether layer `n` has the envelope tables (`lower.n`, `upper.n`);
    /// opens the layer.
    pub fn has_envelope(&self, n: u32) -> Result<bool> {
        Ok(self.table_of(n, Kind::Lower)?.is_some() && self.table_of(n, Kind::Upper)?.is_some())
    }

    /// Table `kind` of layer `n` (mapping the layer if needed); `None` for
    /// an envelope table of a layer built without it.
    fn table_of(&self, n: u32, kind: Kind) -> Result<Option<&ProbeTable>> {
        if n > MAX_SEEDS {
            return Err(IndexError::NoSuchLayer(n).into());
        }
        let l = self.layer(n)?;
        Ok(match kind {
            Kind::Score => Some(&l.score),
            Kind::Lower => l.envelope.as_ref().map(|e| &e.0),
            Kind::Upper => l.envelope.as_ref().map(|e| &e.1),
            Kind::Distance => l.dist.as_ref(),
        })
    }

    /// Whether a table of layer `n` is served from its compressed file
    /// (maps the layer if needed).
    pub fn is_compressed(&self, n: u32, kind: Kind) -> Result<bool> {
        Ok(self
            .table_of(n, kind)?
            .is_some_and(ProbeTable::is_compressed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn database_is_send_and_sync() {
        assert_send_sync::<Database>();
    }
}

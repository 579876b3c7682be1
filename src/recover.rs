//! A way back for a folder of ours whose `manifest.json` was deleted or
//! damaged while its tables are intact (`awari recover`).
//!
//! The manifest is the only place our folders record which tables are
//! finished and their checksums, so without it the builder, `query` and
//! `check` cannot trust the tables. Recovery rebuilds it from the tables,
//! trusting a layer only when
//!
//! * every one of its tables equals a list of known-good checksums (the
//!   repository's `data/known-good.csv`), or
//! * the layer is not in that list, every layer below it was recovered, and
//!   the forward Bellman check ([`crate::verify::bellman_check`]) finds no
//!   stored value that contradicts its children. That check is a
//!   consistency check, not a proof (with cycles the Bellman equations have
//!   more than one solution), and the recovered entry says which way each
//!   layer was trusted.
//!
//! A distance table (`dist.n`) is listed again only where the list has
//! its row and its checksum equals it; otherwise it is left unlisted, and
//! the next build computes it again from the scores (a Bellman check of a
//! layer not in the list checks its scores and envelope only).
//!
//! A layer whose tables differ from the known-good list is never trusted;
//! the files of a layer not trusted are kept under new names
//! (`NAME.untrusted`), so that a build does not replace them unasked
//! ([`store::check_unlisted`]) and the layer can be built again.
//! Recovered entries carry the tables' checksums, pinned counts and score
//! histograms computed from the tables; their build figures are unknown and
//! zero. A damaged manifest is kept beside the new one as
//! `manifest.json.damaged`. Compressed copies (`NAME.zst`) whose header
//! names a recovered table and its checksum are listed again; a layer kept
//! only compressed cannot be recovered (its raw tables are needed).
//!
//! A folder without a manifest and without envelope tables (`lower.n`,
//! `upper.n`, `tables.n.zst`) is a VU dataset or another tool's folder:
//! recovery refuses it ([`StoreError::ForeignFolder`]) and writes nothing there.
//! (A folder of ours built with `--no-envelope` that lost its manifest
//! looks the same and is refused too: rebuild it.)

use crate::error::{Cause, Error, ErrorKind, Result};
use crate::format::{Checksum, Kind};
use crate::index::layer_size;
use crate::plan::{self, Budget};
use crate::probe::{Database, LayerTables};
use crate::rules::{Rules, MAX_SEEDS, PRESETS};
use crate::store::StoreError;
use crate::store::{
    self, Access, CompressedEntry, FileEntry, FolderLock, LayerEntry, Manifest, StoredTable,
};
use crate::verify::{bellman_check, KnownGood, KnownTable};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// How a recovered layer was trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// Every table equals the known-good list.
    KnownGood,
    /// Not in the list; the Bellman check passed on top of recovered layers.
    Bellman,
}

impl Trust {
    /// As the manifest's `recovered` field records it.
    pub fn describe(self) -> &'static str {
        match self {
            Trust::KnownGood => "known-good checksums",
            Trust::Bellman => "Bellman check (consistency only)",
        }
    }
}

/// One layer found in the folder.
#[derive(Debug, Serialize)]
pub struct LayerOutcome {
    /// Seeds of the layer.
    pub seeds: u32,
    /// How it was trusted, if it was.
    pub trust: Option<Trust>,
    /// Why it was not, if it was not (written as its message in JSON).
    #[serde(serialize_with = "message")]
    pub reason: Option<Error>,
    /// The new names of its files when it was not trusted (`NAME.untrusted`):
    /// kept, out of the way of a build.
    pub set_aside: Vec<String>,
}

fn message<S: serde::Serializer>(e: &Option<Error>, s: S) -> std::result::Result<S::Ok, S::Error> {
    match e {
        Some(e) => s.serialize_str(&e.to_string()),
        None => s.serialize_none(),
    }
}

/// The result of [`recover`].
#[derive(Debug, Default, Serialize)]
pub struct RecoverReport {
    /// Every layer with tables in the folder, in order.
    pub layers: Vec<LayerOutcome>,
    /// Where the damaged manifest was moved, if there was one.
    pub damaged_manifest: Option<PathBuf>,
    /// Compressed copies listed again.
    pub compressed: Vec<String>,
    /// The rule set the manifest was written for.
    pub rules: &'static str,
}

impl RecoverReport {
    /// The layers recorded in the new manifest.
    pub fn recovered(&self) -> impl Iterator<Item = &LayerOutcome> {
        self.layers.iter().filter(|l| l.trust.is_some())
    }
    /// The layers left out.
    pub fn rejected(&self) -> impl Iterator<Item = &LayerOutcome> {
        self.layers.iter().filter(|l| l.trust.is_none())
    }
}

/// The raw tables of layer `n` found on disk, opened (read with
/// `pread`: nothing is held); why they cannot be recovered (an error of
/// the damage or input kind, not a failure of the recovery); or `None`
/// if it has none.
type Found = Option<std::result::Result<LayerTables<StoredTable>, Error>>;

/// `with_dist`: the distance table too, where it is there at its size
/// (only a known-good list can vouch for it: without, it is left to the
/// next build, which computes it again).
fn find_layer(dir: &Path, n: u32, with_dist: bool) -> Result<Found> {
    // Where the folder keeps each table (no manifest to go by).
    let mut stored = Vec::new();
    for k in [Kind::Score, Kind::Lower, Kind::Upper] {
        stored.push(store::locate(dir, None, n, k)?);
    }
    let raw = |i: usize| matches!(stored[i], Some(store::Stored::Raw(_)));
    let [s, lo, hi] = [raw(0), raw(1), raw(2)];
    if !s && !lo && !hi {
        let zst = stored
            .iter()
            .any(|t| t.as_ref().is_some_and(|t| t.is_compressed()));
        return Ok(zst.then_some(Err(RecoverError::OnlyCompressed(n).into())));
    }
    if !s {
        return Ok(Some(Err(RecoverError::NoScoreTable(
            Kind::Score.file_name(n),
        )
        .into())));
    }
    if lo != hi {
        let [has, lacks] = if lo {
            [Kind::Lower, Kind::Upper]
        } else {
            [Kind::Upper, Kind::Lower]
        };
        return Ok(Some(Err(RecoverError::HalfEnvelope(
            has.file_name(n),
            lacks.file_name(n),
        )
        .into())));
    }
    let open = |i: usize, k: Kind| {
        let stored = stored[i].as_ref().expect("a raw table");
        match StoredTable::open(stored, n, k, None, Access::READ) {
            Err(e) if matches!(e.cause(), Some(StoreError::Size { .. })) => Ok(Err(e)),
            r => r.map(Ok),
        }
    };
    let score = match open(0, Kind::Score)? {
        Ok(t) => t,
        Err(e) => return Ok(Some(Err(e))),
    };
    let envelope = if lo {
        match (open(1, Kind::Lower)?, open(2, Kind::Upper)?) {
            (Ok(a), Ok(b)) => Some((a, b)),
            (Err(e), _) | (_, Err(e)) => return Ok(Some(Err(e))),
        }
    } else {
        None
    };
    let dist = match store::locate(dir, None, n, Kind::Distance)? {
        Some(stored @ store::Stored::Raw(_)) if with_dist => {
            StoredTable::open(&stored, n, Kind::Distance, None, Access::READ).ok()
        }
        _ => None,
    };
    Ok(Some(Ok(LayerTables {
        score,
        envelope,
        dist,
    })))
}

/// Rebuilds the manifest of our folder `dir` from its tables (see the
/// module's documentation). The tables follow `rules`; `None`: the rule set
/// the damaged manifest names, else the one under which the most layers
/// are trusted, among the rule sets of the lists `known` (all four
/// presets when there is none); two that trust the same number of layers
/// are [`RecoverError::RulesUnknown`]. `known`: lists of known-good checksums,
/// at most one a rule set.
///
/// Memory: within `budget`, layer by layer. The tables are read with
/// `pread`, streamed for their checksums and figures; a layer's Bellman
/// check holds its own tables and reads the lower ones in index order, and
/// one that does not fit ([`plan::fit_check`]) is refused with
/// [`PlanError::Memory`](crate::plan::PlanError::Memory) before anything is written.
pub fn recover(
    dir: &Path,
    rules: Option<&Rules>,
    known: &[KnownGood],
    budget: Budget,
) -> Result<RecoverReport> {
    store::check_folder(dir)?;
    if let (Some(r), [k]) = (rules, known) {
        if r != &k.rules {
            return Err(RecoverError::ListOfOtherRules {
                path: k.path.clone(),
                list: k.rules.name,
                asked: r.name,
            }
            .into());
        }
    }
    // A folder without a manifest and without our envelope tables is a
    // VU dataset or another tool's: refused before anything is written
    // there (not even the lock).
    if !store::has_manifest(dir) {
        match store::read_folder(dir) {
            Ok(store::Folder::Vu) => return Err(store::foreign_folder(dir)),
            Ok(_) => {}
            Err(e) if matches!(e.cause(), Some(StoreError::LostManifest { .. })) => {}
            Err(e) => return Err(e),
        }
    }
    let _lock = FolderLock::acquire(dir)?;
    let mut report = RecoverReport::default();
    let damaged = match Manifest::load(dir) {
        Ok(Some(_)) => return Err(RecoverError::ManifestFine(dir.to_path_buf()).into()),
        Ok(None) => false,
        Err(e) if matches!(e.cause(), Some(StoreError::ForeignManifest { .. })) => true,
        Err(e) => return Err(e),
    };
    // The rule sets the tables may follow, each with its list (if any).
    let list_of = |r: &Rules| known.iter().find(|k| &k.rules == r);
    let named = damaged_rules(dir).filter(|r| known.is_empty() || list_of(r).is_some());
    let candidates: Vec<(Rules, Option<&KnownGood>)> = match (rules.copied(), named) {
        (Some(r), _) | (None, Some(r)) => vec![(r, list_of(&r))],
        (None, None) if !known.is_empty() => known.iter().map(|k| (k.rules, Some(k))).collect(),
        (None, None) => PRESETS.iter().map(|r| (*r, None)).collect(),
    };
    let mut assessed = Vec::new();
    for (r, list) in candidates {
        let (layers, entries) = assess(dir, &r, list, budget)?;
        assessed.push((r, layers, entries));
    }
    // The rule set under which the most layers are trusted; two or more
    // that trust the same layers (small layers play alike under several
    // rule sets) leave the folder's rule set unknown: refused.
    let most = assessed.iter().map(|a| a.2.len()).max().unwrap_or(0);
    let tied: Vec<&'static str> = assessed
        .iter()
        .filter(|a| a.2.len() == most)
        .map(|a| a.0.name)
        .collect();
    if tied.len() > 1 && most > 0 {
        return Err(RecoverError::RulesUnknown {
            dir: dir.to_path_buf(),
            rules: tied,
        }
        .into());
    }
    let best = assessed.into_iter().find(|a| a.2.len() == most);
    let (rules, layers, entries) = best.expect("a candidate");
    let rules = &rules;
    report.rules = rules.name;
    report.layers = layers;

    let mut manifest = Manifest::new(rules);
    for e in entries {
        manifest.put(e);
    }
    // Compressed copies of recovered tables, as their headers describe them.
    for l in manifest.layers.clone() {
        for (kind, f) in l.files() {
            let found = store::unlisted_copies(dir, l.seeds, kind).find_map(|stored| {
                let t = StoredTable::open(&stored, l.seeds, kind, None, Access::READ).ok()?;
                t.header()?.holds(kind).then_some(t)
            });
            let Some(t) = found else {
                continue;
            };
            let (path, len) = (t.path().to_path_buf(), t.file_len());
            let name = path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let h = t.header().expect("a compressed copy");
            if h.rules != *rules
                || h.kind != kind
                || h.layer != l.seeds
                || h.raw_checksum() != f.xxh3
            {
                continue;
            }
            let sum = store::checksum_file(&path)?;
            manifest.put_compressed(CompressedEntry::from_header(
                l.seeds, &f.name, &name, len, sum, h,
            ));
            if !report.compressed.contains(&name) {
                report.compressed.push(name);
            }
        }
    }
    if damaged {
        // Kept under a name no earlier recovery used.
        report.damaged_manifest = Some(store::set_aside_damaged_manifest(dir)?);
    }
    // What was not trusted is kept under another name, so that no build
    // replaces it unasked and nothing in the folder goes unlisted.
    for l in report.layers.iter_mut().filter(|l| l.trust.is_none()) {
        for name in store::layer_files(dir, l.seeds) {
            l.set_aside.push(store::set_aside(dir, &name)?);
        }
    }
    manifest.store(dir)?;
    Ok(report)
}

/// The rule set a damaged manifest names, if its `rule_set` can be read.
pub fn damaged_rules(dir: &Path) -> Option<Rules> {
    let text = store::damaged_manifest_text(dir)?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Rules::by_tag(v.get("rule_set")?.as_str()?)
}

/// Which layers of `dir` can be trusted as tables of `rules`: every layer
/// found, and the manifest entries of those trusted.
fn assess(
    dir: &Path,
    rules: &Rules,
    known: Option<&KnownGood>,
    budget: Budget,
) -> Result<(Vec<LayerOutcome>, Vec<LayerEntry>)> {
    let mut layers = Vec::new();
    // Every table found goes into one database: checksums, histograms and
    // the Bellman checks read it from there; a layer is checked only once
    // every layer below it is trusted.
    let mut found: Vec<u32> = Vec::new();
    let mut slots: Vec<Option<LayerTables<StoredTable>>> = Vec::new();
    let mut sums: Vec<[Option<Checksum>; 4]> = Vec::new();
    let lists_dist = |n: u32| {
        known.is_some_and(|k| {
            k.tables
                .iter()
                .any(|t| t.layer == n && t.kind == Kind::Distance)
        })
    };
    for n in (0..=MAX_SEEDS).filter(|&n| n != 47) {
        match find_layer(dir, n, lists_dist(n))? {
            None => {}
            Some(Ok(tables)) => {
                // Checksums streamed, the three tables in parallel.
                let (lo, hi) = match &tables.envelope {
                    Some((lo, hi)) => (Some(lo), Some(hi)),
                    None => (None, None),
                };
                let sum = |t: Option<&StoredTable>| t.map(StoredTable::checksum).transpose();
                let ((s, d), (lo, hi)) = rayon::join(
                    || rayon::join(|| sum(Some(&tables.score)), || sum(tables.dist.as_ref())),
                    || rayon::join(|| sum(lo), || sum(hi)),
                );
                sums.push([s?, lo?, hi?, d?]);
                found.push(n);
                slots.resize_with(n as usize + 1, || None);
                slots[n as usize] = Some(tables);
            }
            Some(Err(reason)) => layers.push(LayerOutcome {
                seeds: n,
                trust: None,
                reason: Some(reason),
                set_aside: Vec::new(),
            }),
        }
    }
    if found.is_empty() {
        return Err(StoreError::NoTables(dir.to_path_buf()).into());
    }
    // Every check must fit before the first starts.
    let threads = rayon::current_num_threads();
    for &n in &found {
        plan::fit_check(
            n,
            slots[n as usize]
                .as_ref()
                .is_some_and(|l| l.envelope.is_some()),
            threads,
            budget,
        )?;
    }
    let db = Database::from_stored(rules, slots)?;
    let kinds = [Kind::Score, Kind::Lower, Kind::Upper];
    // A distance table is listed where the list vouches for it (it was
    // opened only where the list has its row).
    let dist_vouched = |n: u32, sum: &Option<Checksum>| {
        sum.as_ref().is_some_and(|sum| {
            known.is_some_and(|k| {
                k.tables
                    .iter()
                    .any(|t| t.layer == n && t.kind == Kind::Distance && &t.xxh3 == sum)
            })
        })
    };
    let mut entries = Vec::new();
    let mut trusted = std::collections::BTreeSet::new();
    for (&n, sums) in found.iter().zip(&sums) {
        let listed: Vec<&KnownTable> = known
            .map_or(&[][..], |k| &k.tables)
            .iter()
            .filter(|k| k.layer == n)
            .collect();
        let mut trust = None;
        let mut reason = None;
        if !listed.is_empty() {
            let mut differs = Vec::new();
            for (k, sum) in kinds.iter().zip(sums.iter()) {
                let Some(sum) = sum else { continue };
                match listed.iter().find(|l| l.kind == *k) {
                    Some(l) if &l.xxh3 == sum => {}
                    Some(_) => differs.push(k.file_name(n)),
                    None => differs.push(format!("{} (not in the list)", k.file_name(n))),
                }
            }
            if differs.is_empty() {
                trust = Some(Trust::KnownGood);
            } else {
                reason = Some(RecoverError::NotKnownGood(differs).into());
            }
        } else {
            let missing_below = (0..n).find(|&k| k != 47 && !trusted.contains(&k));
            if let Some(k) = missing_below {
                reason = Some(RecoverError::BelowNotRecovered(n, k).into());
            } else {
                let v = bellman_check(&db, n, 1)?;
                if v.mismatches == 0 {
                    trust = Some(Trust::Bellman);
                } else {
                    reason = Some(RecoverError::Contradicted(n, v.mismatches).into());
                }
            }
        }
        if let Some(t) = trust {
            let dist = sums[3].filter(|_| dist_vouched(n, &sums[3]));
            match entry(&db, n, sums, dist, t) {
                Ok(e) => {
                    trusted.insert(n);
                    entries.push(e);
                }
                Err(e) if matches!(e.cause(), Some(StoreError::BadValue { .. })) => {
                    trust = None;
                    reason = Some(e);
                }
                Err(e) => return Err(e),
            }
        }
        layers.push(LayerOutcome {
            seeds: n,
            trust,
            reason,
            set_aside: Vec::new(),
        });
    }
    layers.sort_by_key(|l| l.seeds);
    Ok((layers, entries))
}

/// The manifest entry of a recovered layer of `db`, from its tables
/// (streamed: [`crate::stats::count_layer`]) and their checksums; an
/// [`StoreError::BadValue`] if a score lies outside `-n..=n`.
fn entry(
    db: &Database,
    n: u32,
    sums: &[Option<Checksum>; 4],
    dist: Option<Checksum>,
    trust: Trust,
) -> Result<LayerEntry> {
    let size = layer_size(n);
    let file = |k: Kind, sum: &Option<Checksum>| {
        sum.as_ref().map(|s| FileEntry {
            name: k.file_name(n),
            bytes: size,
            xxh3: *s,
        })
    };
    let (histogram, pinned) = crate::stats::count_layer(db, n)?;
    let scores = file(Kind::Score, &sums[0]).expect("a score table");
    Ok(LayerEntry {
        lower: file(Kind::Lower, &sums[1]),
        upper: file(Kind::Upper, &sums[2]),
        dist: file(Kind::Distance, &dist),
        pinned,
        score_histogram: histogram,
        ..LayerEntry::from_tables(n, scores, trust.describe())
    })
}

/// Why `awari recover` refuses a folder or leaves a layer out.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecoverError {
    /// A list of known-good checksums of another rule set than the one
    /// asked for.
    #[error("{}: lists the checksums of {list} tables, not of {asked}", path.display())]
    ListOfOtherRules {
        /// The list.
        path: PathBuf,
        /// Its rule set.
        list: &'static str,
        /// The rule set asked for.
        asked: &'static str,
    },
    /// The tables play alike under several rule sets.
    #[error(
        "{}: its tables are those of any of the {} rules as far as they go; say which with --rules",
        dir.display(), rules.join(", ")
    )]
    RulesUnknown {
        /// The folder.
        dir: PathBuf,
        /// The rule sets they fit.
        rules: Vec<&'static str>,
    },
    /// The manifest is readable: there is nothing to recover.
    #[error("{}: manifest.json is readable; nothing to recover", .0.display())]
    ManifestFine(PathBuf),
    /// Only compressed copies of the layer's tables are there.
    #[error("only compressed copies are there; recovery needs the raw tables")]
    OnlyCompressed(u32),
    /// The layer has envelope tables but not its scores (the table named).
    #[error("{0} is missing")]
    NoScoreTable(String),
    /// One envelope table without the other: `.0` is there, `.1` not.
    #[error("{0} without {1}")]
    HalfEnvelope(String, String),
    /// These tables differ from the known-good checksums.
    #[error("{} differ(s) from the known-good checksums", .0.join(", "))]
    NotKnownGood(Vec<String>),
    /// A layer below (`.1`) is not recovered, so layer `.0` cannot be checked.
    #[error("layer {1} below it is not recovered, so its values cannot be checked")]
    BelowNotRecovered(u32, u32),
    /// Stored values of layer `.0` contradict their children (`.1` of them).
    #[error("{1} stored value(s) contradict their children (Bellman check)")]
    Contradicted(u32, u64),
}

impl Cause for RecoverError {
    fn kind(&self) -> ErrorKind {
        use RecoverError::*;
        match self {
            NoScoreTable(_) | HalfEnvelope(..) | NotKnownGood(_) | Contradicted(..) => {
                ErrorKind::Damaged
            }
            _ => ErrorKind::Input,
        }
    }

    fn path(&self) -> Option<&Path> {
        use RecoverError::*;
        match self {
            ListOfOtherRules { path, .. } => Some(path),
            ManifestFine(p) => Some(p),
            RulesUnknown { dir, .. } => Some(dir),
            _ => None,
        }
    }
}

//! Known-good checksums: reading the list from a CSV file, and comparing
//! every table of a folder with it, each checksum recomputed from the
//! table's bytes.

use super::csv;
use crate::error::{AtPath, Result};
use crate::format::{Checksum, Kind};
use crate::index::layer_size;
use crate::rules::{Rules, MAX_SEEDS};
use crate::store::StoreError;
use crate::store::{self, Access, Manifest, StoredTable};
use serde::Serialize;
use std::ops::RangeInclusive;
use std::path::Path;

/// One row of a list of known-good checksums (`layer,table,bytes,xxh3`, as
/// in the repository's `data/known-good.csv`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KnownTable {
    /// Seeds of the layer.
    pub layer: u32,
    /// The table.
    #[serde(serialize_with = "kind_name")]
    pub kind: Kind,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its `xxh3-64`.
    pub xxh3: Checksum,
}

fn kind_name<S: serde::Serializer>(k: &Kind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.stem())
}

/// A list of known-good checksums and the rule set of its tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownGood {
    /// The file it was read from.
    pub path: std::path::PathBuf,
    /// The rule set (a `# rules: NAME` line; awari without one).
    pub rules: Rules,
    /// The tables, in the file's order.
    pub tables: Vec<KnownTable>,
}

/// Reads a list of known-good checksums: an optional line `# rules: NAME`
/// naming the rule set of the tables (awari without it), a header line
/// `layer,table,bytes,xxh3`, then one line per table; blank lines and
/// other lines starting with `#` are skipped. Each table of a layer is
/// listed at most once, with the layer's size.
pub fn read_known_good(path: &Path) -> Result<KnownGood> {
    let text = std::fs::read(path).at(path)?;
    let text = String::from_utf8(text).map_err(|_| csv::error(path)(1, "not UTF-8 text".into()))?;
    parse_known_good(&text, path)
}

/// The repository's lists of known-good checksums, built into the library
/// (`data/known-good.csv`, `data/known-good-RULES.csv` for abapa, olympiad
/// and awale), so that a binary
/// installed without the repository has them: the list of `rules`, if
/// there is one. Its `path` names it `known-good list of RULES (built
/// in)`.
pub fn builtin_known_good(rules: &Rules) -> Option<KnownGood> {
    let text = match rules.name {
        "awari" => include_str!("../../data/known-good.csv"),
        "abapa" => include_str!("../../data/known-good-abapa.csv"),
        "olympiad" => include_str!("../../data/known-good-olympiad.csv"),
        "awale" => include_str!("../../data/known-good-awale.csv"),
        _ => return None,
    };
    let label = format!("known-good list of {} (built in)", rules.name);
    Some(parse_known_good(text, Path::new(&label)).expect("the built-in lists parse"))
}

/// [`read_known_good`] on the text of a list; `path` names it in errors.
pub fn parse_known_good(text: &str, path: &Path) -> Result<KnownGood> {
    let bad = csv::error(path);
    let mut rules = crate::rules::AWARI;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        let comment = line.strip_prefix('#').map(str::trim_start);
        if let Some(name) = comment.and_then(|c| c.strip_prefix("rules:")) {
            rules = Rules::by_name(name.trim()).map_err(|e| bad(i + 1, e.to_string()))?;
        }
    }
    let mut rows = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut header = false;
    for (lineno, f) in csv::records(csv::lines(text), true) {
        if !header {
            if f != ["layer", "table", "bytes", "xxh3"] {
                return Err(bad(
                    lineno,
                    "the header must be 'layer,table,bytes,xxh3'".into(),
                ));
            }
            header = true;
            continue;
        }
        if f.len() != 4 {
            return Err(bad(lineno, format!("{} columns, expected 4", f.len())));
        }
        let layer = f[0]
            .parse::<u32>()
            .ok()
            .filter(|&n| n <= MAX_SEEDS && n != 47)
            .ok_or_else(|| bad(lineno, format!("'{}' is not a layer", f[0])))?;
        let kind = match f[1] {
            "scores" => Kind::Score,
            "lower" => Kind::Lower,
            "upper" => Kind::Upper,
            "dist" => Kind::Distance,
            t => {
                return Err(bad(
                    lineno,
                    format!("'{t}' is not a table (scores, lower, upper, dist)"),
                ))
            }
        };
        let bytes: u64 = f[2]
            .parse()
            .map_err(|_| bad(lineno, format!("'{}' is not a size", f[2])))?;
        if bytes != layer_size(layer) {
            return Err(bad(
                lineno,
                format!(
                    "layer {layer} has {} positions, the line says {bytes} bytes",
                    layer_size(layer)
                ),
            ));
        }
        let xxh3: Checksum = f[3].parse().map_err(|_| {
            bad(
                lineno,
                format!("'{}' is not an xxh3-64 (16 hex digits)", f[3]),
            )
        })?;
        if !seen.insert((layer, kind.stem())) {
            return Err(bad(
                lineno,
                format!("{} is listed twice", kind.file_name(layer)),
            ));
        }
        rows.push(KnownTable {
            layer,
            kind,
            bytes,
            xxh3,
        });
    }
    if !header {
        return Err(bad(1, "empty list".into()));
    }
    Ok(KnownGood {
        path: path.to_path_buf(),
        rules,
        tables: rows,
    })
}

/// How one table compares with its known-good checksum.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum TableOutcome {
    /// Same size and checksum.
    Equal,
    /// Another checksum or size: the table holds other bytes.
    Differs {
        /// What was found (`xxh3` or a size).
        found: String,
    },
    /// The manifest lists the table, but the folder holds neither it nor a
    /// compressed copy.
    Missing,
    /// A compressed copy could not be read back (a damaged block).
    Damaged {
        /// What is wrong.
        reason: String,
    },
}

/// One table checked by [`compare_checksums`].
#[derive(Clone, Debug, Serialize)]
pub struct TableCheck {
    /// The known-good row.
    pub known: KnownTable,
    /// The file read (the raw table, or its compressed copy).
    pub file: String,
    /// The outcome.
    #[serde(flatten)]
    pub outcome: TableOutcome,
}

/// The result of [`compare_checksums`].
#[derive(Clone, Debug, Default, Serialize)]
pub struct ChecksumReport {
    /// Every table compared, by layer.
    pub tables: Vec<TableCheck>,
    /// Layers of the list that the folder does not hold (skipped).
    pub not_built: Vec<u32>,
    /// Tables of the list whose layer the folder holds, but not that table,
    /// and the manifest does not list it either (a VU folder's envelope, a
    /// build without the envelope): not compared.
    pub absent: Vec<String>,
    /// Layers the folder holds that the list does not cover.
    pub not_listed: Vec<u32>,
}

impl ChecksumReport {
    /// Tables that differ, are missing or are damaged.
    pub fn failures(&self) -> impl Iterator<Item = &TableCheck> {
        self.tables
            .iter()
            .filter(|t| t.outcome != TableOutcome::Equal)
    }
}

/// The file holding table `kind` of layer `n` in `dir`, found by name (the
/// manifest is not trusted): the raw table, else its compressed copy
/// (`NAME.zst`); `None` when neither exists.
fn table_file(dir: &Path, kind: Kind, n: u32) -> Option<std::path::PathBuf> {
    match store::locate(dir, None, n, kind) {
        Ok(Some(s)) => Some(s.path().to_path_buf()),
        _ => None,
    }
}

/// Compares every table of `dir` in `layers` with the list `known`,
/// recomputing each checksum from the table's bytes (a compressed copy is
/// decompressed as it is read), so neither the manifest's checksums nor a
/// compressed header are trusted. Works on our folders, on folders whose
/// manifest was lost and on VU dataset folders (whose `scores.N` are
/// compared). A layer the folder does not hold is skipped and listed in
/// [`ChecksumReport::not_built`].
pub fn compare_checksums(
    dir: &Path,
    known: &KnownGood,
    layers: RangeInclusive<u32>,
) -> Result<ChecksumReport> {
    store::check_folder(dir)?;
    let manifest = Manifest::load(dir)?;
    // The rule set the manifest or, without one, the compressed files
    // name (raw tables without manifest name none).
    let named = match &manifest {
        Some(m) => Some(m.rules()),
        None => store::headers_rules(dir)?,
    };
    if let Some(r) = named {
        store::rules_agree(
            dir,
            &r,
            &known.rules,
            ": the checksums listed are of another rule set's tables",
        )?;
    }
    let listed = |n: u32, kind: Kind| {
        manifest
            .as_ref()
            .and_then(|m| m.layer(n))
            .is_some_and(|l| l.files().any(|(k, _)| k == kind))
    };
    let held = |n: u32| {
        [Kind::Score, Kind::Lower, Kind::Upper, Kind::Distance]
            .iter()
            .any(|&k| table_file(dir, k, n).is_some())
            || manifest.as_ref().is_some_and(|m| m.layer(n).is_some())
    };
    let mut report = ChecksumReport::default();
    let mut covered = std::collections::BTreeSet::new();
    for k in known.tables.iter().filter(|k| layers.contains(&k.layer)) {
        covered.insert(k.layer);
        if !held(k.layer) {
            if report.not_built.last() != Some(&k.layer) {
                report.not_built.push(k.layer);
            }
            continue;
        }
        let name = k.kind.file_name(k.layer);
        let Some(path) = table_file(dir, k.kind, k.layer) else {
            if listed(k.layer, k.kind) {
                report.tables.push(TableCheck {
                    known: k.clone(),
                    file: name,
                    outcome: TableOutcome::Missing,
                });
            } else {
                report.absent.push(name);
            }
            continue;
        };
        let outcome = checksum_of(dir, k)?;
        report.tables.push(TableCheck {
            known: k.clone(),
            file: path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or(name),
            outcome,
        });
    }
    report.not_listed = (0..=MAX_SEEDS)
        .filter(|&n| n != 47 && layers.contains(&n) && !covered.contains(&n) && held(n))
        .collect();
    Ok(report)
}

/// Size and checksum of table `k` of `dir` (found by name, no manifest
/// trusted) against its known-good row, opened by [`StoredTable::find`].
fn checksum_of(dir: &Path, k: &KnownTable) -> Result<TableOutcome> {
    let damaged = |reason: String| Ok(TableOutcome::Damaged { reason });
    let table = match StoredTable::find(dir, None, k.layer, k.kind, None, Access::READ) {
        Ok(Some(t)) => t,
        Ok(None) => return Err(StoreError::Missing(dir.join(k.kind.file_name(k.layer))).into()),
        Err(e) => match e.cause() {
            Some(StoreError::Size { found, .. }) => {
                return Ok(TableOutcome::Differs {
                    found: format!("{found} bytes, expected {}", k.bytes),
                })
            }
            Some(StoreError::Compressed { source, .. }) => return damaged(source.to_string()),
            _ => return Err(e),
        },
    };
    if let Some(h) = table.header() {
        if h.kind != k.kind || h.layer != k.layer {
            return damaged(format!(
                "it holds {}, not {}",
                h.kind.file_name(h.layer),
                k.kind.file_name(k.layer)
            ));
        }
    }
    let total = table.len();
    if !table.is_compressed() && total != k.bytes {
        return Ok(TableOutcome::Differs {
            found: format!("{total} bytes, expected {}", k.bytes),
        });
    }
    let found = match table.checksum() {
        Ok(sum) => sum,
        Err(e) => match e.cause() {
            Some(StoreError::Compressed { source, .. }) => return damaged(source.to_string()),
            _ => return Err(e),
        },
    };
    Ok(if total != k.bytes {
        TableOutcome::Differs {
            found: format!("{total} bytes, expected {}", k.bytes),
        }
    } else if found == k.xxh3 {
        TableOutcome::Equal
    } else {
        TableOutcome::Differs {
            found: found.to_string(),
        }
    })
}

//! `manifest.json`: what a folder holds, layer by layer.
//!
//! The manifest names the rule set (its tag and its fields, see
//! [`crate::rules::Rules`]; a manifest written before there were rule sets
//! is awari, and gets the fields when it is next written), the format
//! version and the checksum algorithm, and lists every finished layer (its
//! tables' names, sizes and checksums, and the figures of its build) and
//! every compressed copy of a table. A layer is finished when the manifest lists it, and not before:
//! the builder writes a layer's tables first, then the manifest, each
//! atomically ([`super::write`]).

use crate::error::IoError;
use crate::error::{Error, Result};
use crate::format::{Checksum, Kind, CHECKSUM};
use crate::rules::{Rules, AWARI, PRESETS};
use crate::store::StoreError;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io;
use std::path::Path;

/// The `format` field of our manifests.
pub const FORMAT: &str = "awari-egdb";
/// Manifest version this code reads and writes.
pub const VERSION: u32 = 1;
/// Name of the manifest file.
pub const MANIFEST: &str = "manifest.json";

/// What is wrong with a manifest that is not one of ours or not valid
/// ([`StoreError::ForeignManifest`]): the entry and what is wrong with it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestFault {
    /// Not UTF-8 text.
    #[error("not JSON: not even UTF-8 text")]
    NotText,
    /// Not JSON.
    #[error("not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// JSON without our `format` field.
    #[error("no \"format\": \"awari-egdb\" field")]
    NoFormat,
    /// JSON whose fields are not a manifest's.
    #[error("{0}")]
    Fields(#[source] serde_json::Error),
    /// Its `rules` are not a rule set of this program.
    #[error("{0}")]
    Rules(#[source] Box<Error>),
    /// Its `rule_set` (tag) and its `rules` (fields) name different rule
    /// sets.
    #[error("its rule_set says {rule_set} and its rules say {rules}")]
    RulesDisagree {
        /// The rule set of the tag.
        rule_set: Rules,
        /// The rule set of the fields.
        rules: Rules,
    },
    /// It lists a layer that does not exist.
    #[error("it lists layer {0}, which does not exist")]
    NoSuchLayer(u32),
    /// It lists a layer twice.
    #[error("it lists layer {0} twice")]
    LayerTwice(u32),
    /// A layer's entry has the wrong number of positions.
    #[error("layer {layer} has {expected} positions, it says {found}")]
    Positions {
        /// The layer.
        layer: u32,
        /// Its positions.
        expected: u64,
        /// The positions the entry says.
        found: u64,
    },
    /// A table's entry has the wrong size.
    #[error("{file} should hold {expected} bytes, it says {found}")]
    FileBytes {
        /// The table's file name.
        file: String,
        /// Positions of its layer.
        expected: u64,
        /// The bytes the entry says.
        found: u64,
    },
    /// A file name that points outside the folder.
    #[error("file name '{0}' points outside the folder")]
    NameOutside(String),
    /// A compressed copy of a layer the manifest does not list.
    #[error("it lists {file} for layer {layer}, which it does not list")]
    CopyOfNoLayer {
        /// The compressed file's name.
        file: String,
        /// Its layer.
        layer: u32,
    },
    /// A compressed copy of a file that is not a table of its layer.
    #[error("{file} compresses '{raw}', which is not a table of layer {layer}")]
    NotATable {
        /// The compressed file's name.
        file: String,
        /// The raw table it says it holds.
        raw: String,
        /// Its layer.
        layer: u32,
    },
    /// Two compressed copies of one table.
    #[error("it lists two compressed copies of {0}")]
    TwoCopies(String),
    /// One file name for two files.
    #[error("it lists the file name {0} twice")]
    NameTwice(String),
    /// A compressed copy's settings out of range.
    #[error("{file}: {setting} {reason}")]
    Setting {
        /// The compressed file's name.
        file: String,
        /// The setting.
        setting: &'static str,
        /// What is wrong with its value (the codec's words).
        reason: String,
    },
}

/// One table file as the manifest records it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileEntry {
    /// File name inside the folder.
    pub name: String,
    /// Size in bytes (one per position).
    pub bytes: u64,
    /// `xxh3-64` of the contents.
    pub xxh3: Checksum,
}

/// A compressed copy of one table, written by `awari compress` (the format
/// is in [`crate::codec`]). The table's [`FileEntry`] stays the truth:
/// the compressed file's header carries the same checksum of the
/// uncompressed bytes, and the raw file may be absent once it was removed.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct CompressedEntry {
    /// Seeds of the layer.
    pub seeds: u32,
    /// Name of the raw table it holds (the [`FileEntry`] name).
    pub raw: String,
    /// File name inside the folder (`scores.n.zst`, ...).
    pub name: String,
    /// Size in bytes of the compressed file.
    pub bytes: u64,
    /// `xxh3-64` of the compressed file.
    pub xxh3: Checksum,
    /// Entries per block.
    pub block_size: u32,
    /// The zstd level of the retired formats 1 and 2; 0 (written for the
    /// manifests of earlier releases to read).
    pub level: i32,
    /// The zstd dictionary of the retired format 2; 0.
    #[serde(default)]
    pub dictionary: u32,
    /// The format: 4 (a full-form file `tables.n.zst` is listed once for
    /// each of the layer's three tables). Manifests of earlier releases
    /// list 3, or 0 (absent) for formats 1 and 2: retired formats, whose
    /// files this release refuses to open.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub version: u32,
    /// Format 4: bytes per block (absent or 0 for the retired formats).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub block_bytes: u32,
}

impl CompressedEntry {
    /// The entry of the compressed file `name` (its size `bytes`, its
    /// checksum `xxh3`) that holds the raw table `raw` of layer `seeds`,
    /// with the settings its header `h` records.
    pub fn from_header(
        seeds: u32,
        raw: &str,
        name: &str,
        bytes: u64,
        xxh3: Checksum,
        h: &crate::codec::Header,
    ) -> CompressedEntry {
        CompressedEntry {
            seeds,
            raw: raw.into(),
            name: name.into(),
            bytes,
            xxh3,
            block_size: h.block_size,
            level: 0,
            dictionary: 0,
            version: h.version,
            block_bytes: h.v4().block_bytes,
        }
    }
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// Seconds spent in each phase of a layer.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PhaseSeconds {
    /// Computing exits and counters.
    pub exits: f64,
    /// The envelope sweep.
    pub envelope: f64,
    /// The score sweep.
    pub score: f64,
    /// Writing and checksumming the files.
    pub write: f64,
    /// Computing the distance table (written with the others).
    #[serde(default)]
    pub distance: f64,
}

/// One layer in the manifest.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LayerEntry {
    /// Seeds on the board.
    pub seeds: u32,
    /// Positions (entries per table).
    pub positions: u64,
    /// `scores.n`.
    pub scores: FileEntry,
    /// `lower.n`, with the envelope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<FileEntry>,
    /// `upper.n`, with the envelope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<FileEntry>,
    /// `dist.n`, the distance to the next capture, unless the layer was
    /// built without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dist: Option<FileEntry>,
    /// Wall time of the build of this layer.
    pub wall_seconds: f64,
    /// Positions per second over the wall time.
    pub positions_per_second: f64,
    /// Where the time went.
    pub phase_seconds: PhaseSeconds,
    /// Peak resident memory of the process while building this layer
    /// (anonymous plus mapped file pages).
    pub peak_rss_bytes: u64,
    /// The solver's own working memory for this layer.
    pub working_bytes: u64,
    /// Peak anonymous resident memory of the process while building this
    /// layer (sampled every 20 ms): the working arrays plus heap and stacks;
    /// what the memory guard estimates.
    #[serde(default)]
    pub peak_anon_bytes: u64,
    /// Peak resident pages of the process's mapped files while building this
    /// layer (sampled): the lower layers' tables, page cache the kernel can
    /// reclaim.
    #[serde(default)]
    pub peak_file_bytes: u64,
    /// The memory guard's estimate for this layer.
    #[serde(default)]
    pub estimate_bytes: u64,
    /// Threads used.
    pub threads: usize,
    /// Settlements (predecessor walks) per position, score and envelope.
    pub settlements_per_position: f64,
    /// Positions with `lower == upper`, with the envelope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<u64>,
    /// Number of positions per score, from `-n` to `n`.
    pub score_histogram: Vec<u64>,
    /// Set when the entry was written from the tables rather than by
    /// their build (by `awari recover`, or by `awari decompress` of a
    /// folder of scores without manifest; its build figures are then
    /// unknown and zero): how the tables were trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered: Option<String>,
    /// The solver that built the layer: `in-memory` or `compact` (absent
    /// in manifests written before there were two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solver: Option<String>,
    /// The compact solver's disk traffic (summed over the ranks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<IoFigures>,
    /// Ranks that built the layer, when more than one (MPI); the memory
    /// figures are then the largest rank's, the threads each rank's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<usize>,
}

/// Disk traffic of a layer built by the compact solver.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct IoFigures {
    /// Bytes of lower-layer tables read (uncompressed bytes: the entries
    /// streamed).
    pub lower_read_bytes: u64,
    /// Bytes written to the scratch folder (lists and per-position facts).
    pub scratch_written_bytes: u64,
    /// Bytes read back from the scratch folder.
    pub scratch_read_bytes: u64,
    /// Most bytes the scratch files held at once.
    pub scratch_peak_bytes: u64,
    /// Bytes of updates this rank sent to other ranks (0 in one process).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sent_bytes: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

impl LayerEntry {
    /// The entry of layer `seeds` written from its tables rather than by
    /// their build: its scores' file, and how the tables were trusted
    /// ([`recovered`](Self::recovered)); build figures unknown and zero, no
    /// envelope and no histogram until the writer sets them.
    pub fn from_tables(seeds: u32, scores: FileEntry, trusted: &str) -> LayerEntry {
        LayerEntry {
            seeds,
            positions: crate::index::layer_size(seeds),
            scores,
            lower: None,
            upper: None,
            dist: None,
            wall_seconds: 0.0,
            positions_per_second: 0.0,
            phase_seconds: PhaseSeconds::default(),
            peak_rss_bytes: 0,
            working_bytes: 0,
            peak_anon_bytes: 0,
            peak_file_bytes: 0,
            estimate_bytes: 0,
            threads: 0,
            settlements_per_position: 0.0,
            pinned: None,
            score_histogram: Vec::new(),
            recovered: Some(trusted.into()),
            solver: None,
            io: None,
            ranks: None,
        }
    }

    /// The file entries recorded, score first.
    pub fn files(&self) -> impl Iterator<Item = (Kind, &FileEntry)> {
        [
            (Kind::Score, Some(&self.scores)),
            (Kind::Lower, self.lower.as_ref()),
            (Kind::Upper, self.upper.as_ref()),
            (Kind::Distance, self.dist.as_ref()),
        ]
        .into_iter()
        .filter_map(|(k, f)| f.map(|f| (k, f)))
    }
}

/// `manifest.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u32,
    /// The rule set's tag ([`Rules::tag`]): `awari-vu2002` (also every
    /// manifest written before there were rule sets), else the preset's name
    /// (`abapa`, `olympiad`, `awale`).
    pub rule_set: String,
    /// The rule set's fields ([`Rules::to_json`]); absent in manifests
    /// written before there were rule sets (awari).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<serde_json::Value>,
    /// Always [`CHECKSUM`].
    pub checksum: String,
    /// The finished layers, by seeds.
    pub layers: Vec<LayerEntry>,
    /// Compressed copies of tables (`awari compress`), by raw file name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compressed: Vec<CompressedEntry>,
}

impl Default for Manifest {
    /// An empty manifest of the awari rule set.
    fn default() -> Self {
        Manifest::new(&AWARI)
    }
}

impl Manifest {
    /// An empty manifest of a folder of `rules`.
    pub fn new(rules: &Rules) -> Manifest {
        Manifest {
            format: FORMAT.into(),
            version: VERSION,
            rule_set: rules.tag().into(),
            rules: Some(rules.to_json()),
            checksum: CHECKSUM.into(),
            layers: Vec::new(),
            compressed: Vec::new(),
        }
    }

    /// The rule set of the folder's tables (checked when it was loaded).
    pub fn rules(&self) -> Rules {
        Rules::by_tag(&self.rule_set).unwrap_or(AWARI)
    }

    /// Reads `dir/manifest.json`; `Ok(None)` when there is none.
    pub fn load(dir: &Path) -> Result<Option<Manifest>> {
        let path = dir.join(MANIFEST);
        let bytes = match fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(IoError { path, source }.into()),
        };
        let text = String::from_utf8(bytes).map_err(|_| StoreError::ForeignManifest {
            path: path.clone(),
            reason: ManifestFault::NotText,
        })?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| StoreError::ForeignManifest {
                path: path.clone(),
                reason: ManifestFault::NotJson(e),
            })?;
        if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err(StoreError::ForeignManifest {
                path,
                reason: ManifestFault::NoFormat,
            }
            .into());
        }
        let m: Manifest =
            serde_json::from_value(value).map_err(|e| StoreError::ForeignManifest {
                path: path.clone(),
                reason: ManifestFault::Fields(e),
            })?;
        m.validate().map_err(|reason| StoreError::ForeignManifest {
            path: path.clone(),
            reason,
        })?;
        let known = Rules::by_tag(&m.rule_set);
        let found = format!("rule set {} v{} ({})", m.rule_set, m.version, m.checksum);
        let expected = format!(
            "rule set {} v{VERSION} ({CHECKSUM})",
            PRESETS.map(|r| r.tag()).join(" or ")
        );
        if known.is_none() || m.version != VERSION || m.checksum != CHECKSUM {
            return Err(StoreError::OtherRules {
                path,
                found,
                expected,
            }
            .into());
        }
        if let (Some(r), Some(v)) = (known, &m.rules) {
            match Rules::from_json(v) {
                Ok(f) if f == r => {}
                Ok(f) => {
                    return Err(StoreError::ForeignManifest {
                        path,
                        reason: ManifestFault::RulesDisagree {
                            rule_set: r,
                            rules: f,
                        },
                    }
                    .into())
                }
                Err(e) => {
                    return Err(StoreError::ForeignManifest {
                        path,
                        reason: ManifestFault::Rules(Box::new(e)),
                    }
                    .into())
                }
            }
        }
        let mut m = m;
        if let (Some(r), None) = (known, &m.rules) {
            // Written before there were rule sets: record the fields from
            // the next write on.
            m.rules = Some(r.to_json());
        }
        Ok(Some(m))
    }

    /// Reads `dir/manifest.json` of a folder that must be one of ours: a
    /// missing folder or manifest is an error.
    pub fn load_ours(dir: &Path) -> Result<Manifest> {
        super::check_folder(dir)?;
        Ok(Manifest::load(dir)?.ok_or_else(|| StoreError::NotOurs(dir.to_path_buf()))?)
    }

    /// Writes `dir/manifest.json` atomically.
    pub fn store(&self, dir: &Path) -> Result<()> {
        let mut text = serde_json::to_string_pretty(self).expect("manifest serialises");
        text.push('\n');
        super::write::write_atomic(&dir.join(MANIFEST), text.as_bytes())
    }

    /// Checks what the rest of the code relies on: real layers, each once,
    /// with one byte per position in every file.
    fn validate(&self) -> std::result::Result<(), ManifestFault> {
        let mut seen = std::collections::HashSet::new();
        for l in &self.layers {
            let n = l.seeds;
            if n > crate::rules::MAX_SEEDS || n == 47 {
                return Err(ManifestFault::NoSuchLayer(n));
            }
            if !seen.insert(n) {
                return Err(ManifestFault::LayerTwice(n));
            }
            let size = crate::index::layer_size(n);
            if l.positions != size {
                return Err(ManifestFault::Positions {
                    layer: n,
                    expected: size,
                    found: l.positions,
                });
            }
            for (_, f) in l.files() {
                if f.bytes != size {
                    return Err(ManifestFault::FileBytes {
                        file: f.name.clone(),
                        expected: size,
                        found: f.bytes,
                    });
                }
                check_name(&f.name)?;
            }
        }
        let mut names: std::collections::HashSet<&str> = self
            .layers
            .iter()
            .flat_map(|l| l.files().map(|(_, f)| f.name.as_str()))
            .collect();
        let mut raws = std::collections::HashSet::new();
        for c in &self.compressed {
            let Some(l) = self.layer(c.seeds) else {
                return Err(ManifestFault::CopyOfNoLayer {
                    file: c.name.clone(),
                    layer: c.seeds,
                });
            };
            if !l.files().any(|(_, f)| f.name == c.raw) {
                return Err(ManifestFault::NotATable {
                    file: c.name.clone(),
                    raw: c.raw.clone(),
                    layer: c.seeds,
                });
            }
            if !raws.insert(c.raw.as_str()) {
                return Err(ManifestFault::TwoCopies(c.raw.clone()));
            }
            check_name(&c.name)?;
            // A full-form file holds a layer's three tables: only such a
            // file is listed more than once.
            let shared = c.version >= 3 && c.name == crate::codec::layer_file_name(c.seeds);
            if !names.insert(c.name.as_str()) && !shared {
                return Err(ManifestFault::NameTwice(c.name.clone()));
            }
            match c.version {
                crate::codec::FORMAT_VERSION => {
                    crate::codec::v4::check_blocks(c.block_bytes, c.block_size)
                }
                // Formats 1 and 2 (listed as 0) and 3, retired: the
                // manifest stands, opening the file refuses it by name
                // (`CompressError::Retired`).
                0 | 3 => Ok(()),
                v => Err(("format", format!("version {v}: no release wrote it"))),
            }
            .map_err(|(setting, reason)| ManifestFault::Setting {
                file: c.name.clone(),
                setting,
                reason,
            })?;
        }
        Ok(())
    }

    /// The entry of layer `n`.
    pub fn layer(&self, n: u32) -> Option<&LayerEntry> {
        self.layers.iter().find(|l| l.seeds == n)
    }

    /// Inserts or replaces the entry of a layer, keeping them sorted.
    pub fn put(&mut self, e: LayerEntry) {
        self.remove(e.seeds);
        self.layers.push(e);
        self.layers.sort_by_key(|l| l.seeds);
    }

    /// Forgets layer `n`, with the compressed copies of its tables.
    pub fn remove(&mut self, n: u32) {
        self.layers.retain(|l| l.seeds != n);
        self.compressed.retain(|c| c.seeds != n);
    }

    /// Whether the file `name` is a table of a layer listed here or a
    /// compressed copy listed here.
    pub fn lists(&self, name: &str) -> bool {
        self.compressed.iter().any(|c| c.name == name)
            || self
                .layers
                .iter()
                .any(|l| l.files().any(|(_, f)| f.name == name))
    }

    /// The compressed copy of the raw table named `raw`, if any.
    pub fn compressed(&self, raw: &str) -> Option<&CompressedEntry> {
        self.compressed.iter().find(|c| c.raw == raw)
    }

    /// Records a compressed copy, replacing the one of the same raw table.
    pub fn put_compressed(&mut self, e: CompressedEntry) {
        self.remove_compressed(&e.raw.clone());
        self.compressed.push(e);
        self.compressed
            .sort_by(|a, b| (a.seeds, &a.name).cmp(&(b.seeds, &b.name)));
    }

    /// Forgets the compressed copy of the raw table named `raw`.
    pub fn remove_compressed(&mut self, raw: &str) {
        self.compressed.retain(|c| c.raw != raw);
    }
}

/// A file name must stay inside the folder.
fn check_name(name: &str) -> std::result::Result<(), ManifestFault> {
    if name.is_empty() || name.contains('/') || name.contains('\\') || name.starts_with('.') {
        return Err(ManifestFault::NameOutside(name.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{RulesError, ABAPA};

    /// `m` written to a fresh folder and read back.
    fn reload(m: &Manifest) -> Result<Option<Manifest>> {
        let dir = tempfile::tempdir().unwrap();
        m.store(dir.path())?;
        Manifest::load(dir.path())
    }

    #[test]
    fn faults_name_the_entry_and_what_is_wrong() {
        assert!(reload(&Manifest::new(&ABAPA)).unwrap().is_some());

        let mut m = Manifest::new(&ABAPA);
        m.rules.as_mut().unwrap()["grand_slam"] = "illegal-unless-forced".into();
        let err = reload(&m).unwrap_err();
        match err.cause() {
            Some(StoreError::ForeignManifest {
                reason: ManifestFault::Rules(e),
                ..
            }) => match e.cause() {
                Some(&RulesError::RulesFieldDiffers { name, field, .. }) => {
                    assert_eq!((name, field), ("abapa", "grand_slam"))
                }
                _ => panic!("{e:?}"),
            },
            _ => panic!("{err:?}"),
        }

        let mut m = Manifest::new(&AWARI);
        m.compressed.push(CompressedEntry {
            seeds: 3,
            raw: "scores.3".into(),
            name: "scores.3.zst".into(),
            bytes: 100,
            xxh3: Checksum(0),
            block_size: 4096,
            level: 3,
            dictionary: 0,
            version: 0,
            block_bytes: 0,
        });
        let e = reload(&m).unwrap_err();
        assert!(e.to_string().ends_with(
            "not an awari-egdb manifest (it lists scores.3.zst for layer 3, which it does not list)"
        ));
        match e.cause() {
            Some(StoreError::ForeignManifest {
                reason: ManifestFault::CopyOfNoLayer { file, layer },
                ..
            }) => assert_eq!((file.as_str(), *layer), ("scores.3.zst", 3)),
            _ => panic!("{e:?}"),
        }
        assert!(matches!(
            check_name("../scores.3"),
            Err(ManifestFault::NameOutside(n)) if n == "../scores.3"
        ));
    }
}

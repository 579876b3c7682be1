//! Looking up exact scores: [`Database`] over a folder of tables.
//!
//! A folder is either one of ours (with `manifest.json`: scores and, when
//! built, the cycle envelope, each checksummed) or a plain VU dataset folder
//! holding only `scores.N` files. Layers are memory-mapped on first use; a
//! missing layer or a file of the wrong size is a typed error naming the
//! file. `Database` is `Send + Sync` and every probe takes `&self`.
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
//! the compressed file is mapped instead, and a probe decompresses the one
//! block that holds its entry (kept in a small per-thread cache of recently
//! used blocks).

use crate::codec::{CompressedTable, Damaged};
use crate::format::{ChecksumMismatch, Kind};
use crate::index::{layer_size, rank};
use crate::mem::prefetch;
use crate::pack::{open_listed, OpenError};
use crate::rules::{Position, PositionError, MAX_SEEDS};
use crate::table::{
    checksum_file, FileEntry, LayerEntry, Manifest, ManifestError, MapError, Mapped,
};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The environment variable the VU dataset's own tools read the folder from.
pub const AWARI_PATH: &str = "AWARI_PATH";

/// Why a probe failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// The board is not a position of the database.
    #[error(transparent)]
    Position(#[from] PositionError),
    /// No such index.
    #[error(transparent)]
    Index(#[from] crate::index::IndexError),
    /// The folder (or the tables given in memory) lacks the layer.
    #[error("layer {layer} is not in {}", dir.display())]
    MissingLayer {
        /// The layer.
        layer: u32,
        /// The folder (`(memory)` for tables given in memory).
        dir: PathBuf,
        /// Whether the folder is a VU dataset folder.
        vu: bool,
    },
    /// 47 seeds never occur (a capture takes at least 2 of the 48).
    #[error("a board of 47 seeds cannot occur in awari (every capture takes at least 2 of the 48 seeds), so no database has layer 47")]
    Layer47,
    /// A table handed to [`Database::from_tables`] has the wrong size.
    #[error(
        "layer {layer}: {table} table of {found} bytes, but the layer has {expected} positions"
    )]
    TableSize {
        /// The layer.
        layer: u32,
        /// `scores`, `lower` or `upper`.
        table: &'static str,
        /// Positions of the layer.
        expected: u64,
        /// Bytes given.
        found: u64,
    },
    /// A table cannot be mapped (I/O error or wrong size).
    #[error(transparent)]
    Map(#[from] MapError),
    /// A table (or compressed file) does not match the manifest's checksum.
    #[error(transparent)]
    Checksum(#[from] ChecksumMismatch),
    /// The manifest cannot be used.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// A table the manifest lists is absent, and no compressed copy of it is
    /// listed either.
    #[error("{}: missing (the manifest lists it)", .0.display())]
    MissingTable(PathBuf),
    /// A folder that has our envelope tables (`lower.N`, `upper.N`) but no
    /// `manifest.json`: one of ours whose manifest was lost.
    #[error("{}: holds {file} but no manifest.json: a folder of ours whose manifest was lost", dir.display())]
    LostManifest {
        /// The folder.
        dir: PathBuf,
        /// An envelope table found there.
        file: String,
    },
    /// No folder was given and `AWARI_PATH` is not set.
    #[error("no database folder given, and AWARI_PATH is not set")]
    NoFolder,
    /// The path is not a folder of tables.
    #[error("{}: not a folder of tables (no manifest.json and no scores.N files)", .0.display())]
    NotAFolder(PathBuf),
    /// A compressed table is damaged or is not the table it stands for.
    #[error(transparent)]
    Compressed(#[from] Damaged),
    /// [`Database::scores`] was given a different number of outputs than
    /// positions.
    #[error("{positions} positions but {outputs} outputs")]
    Lengths {
        /// Positions given.
        positions: usize,
        /// Outputs given.
        outputs: usize,
    },
}

impl From<OpenError> for ProbeError {
    fn from(e: OpenError) -> Self {
        match e {
            OpenError::Map(e) => ProbeError::Map(e),
            OpenError::Checksum(e) => ProbeError::Checksum(e),
            OpenError::Compressed(e) => ProbeError::Compressed(e),
        }
    }
}

impl ProbeError {
    /// Whether the error says that a table is damaged: missing though listed,
    /// of the wrong size, not matching its checksum, or a damaged compressed
    /// file. The other errors are bad input (a position, a layer not built,
    /// a folder that is not one of tables) or I/O trouble.
    pub fn is_damage(&self) -> bool {
        match self {
            ProbeError::Checksum(_) | ProbeError::Compressed(_) | ProbeError::MissingTable(_) => {
                true
            }
            ProbeError::Map(e) => e.is_damage(),
            _ => false,
        }
    }
}

/// How far the cycle rule could move a score.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Envelope {
    /// The score if endless play went to the opponent.
    pub lower: i8,
    /// The score if endless play went to the mover.
    pub upper: i8,
}

impl Envelope {
    /// Whether the score cannot depend on the cycle rule.
    pub fn pinned(&self) -> bool {
        self.lower == self.upper
    }
}

/// One of the mover's six pits as a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MoveInfo {
    /// The pit, 0..5.
    pub pit: u8,
    /// Whether the pit holds seeds.
    pub nonempty: bool,
    /// Whether the move is legal.
    pub legal: bool,
    /// Seeds it captures (0 for an empty pit).
    pub captures: u8,
    /// Its worth for the mover (`captures - score of the child`, or
    /// `captures + seeds left` when the opponent is left without seeds);
    /// `None` for an empty pit or an illegal move.
    pub score: Option<i8>,
    /// The position after the move, from the opponent's side.
    #[serde(skip)]
    pub child: Option<Position>,
}

/// Why a principal variation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PvEnd {
    /// The side to move has no seeds: the game is over.
    GameOver,
    /// A position repeated: play goes on forever from here.
    Repetition,
    /// The step limit was reached.
    Limit,
}

/// One move of a principal variation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PvStep {
    /// The position before the move.
    pub position: Position,
    /// Its score.
    pub score: i8,
    /// The pit played (a best move, the lowest pit among equals).
    pub pit: u8,
    /// Seeds captured by it.
    pub captures: u8,
}

/// A line of best play.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Pv {
    /// The moves.
    pub steps: Vec<PvStep>,
    /// The position reached.
    pub last: Position,
    /// Why the line stops.
    pub end: PvEnd,
}

/// The tables of one layer handed to [`Database::from_tables`], each in the
/// file format (one signed byte per Goedel index).
pub struct LayerTables<T> {
    /// `scores.n`.
    pub score: T,
    /// `lower.n` and `upper.n`, if any.
    pub envelope: Option<(T, T)>,
}

/// A table's bytes, from a mapping or a buffer.
type Bytes = Box<dyn AsRef<[u8]> + Send + Sync>;

/// One table: raw bytes (one per position), or compressed blocks.
enum Table {
    Raw(Bytes),
    Compressed {
        table: CompressedTable<Mapped>,
        path: PathBuf,
        /// The whole table, once [`Database::table`] asked for it.
        whole: OnceLock<Vec<u8>>,
    },
}

impl Table {
    /// The entry at Goedel index `g`, which the caller checked is inside
    /// the layer.
    #[inline(always)]
    fn get(&self, g: u64) -> Result<i8, ProbeError> {
        match self {
            Table::Raw(b) => Ok(lookup(&**b, g)),
            Table::Compressed { .. } => self.get_compressed(g),
        }
    }

    /// [`get`](Self::get) on a compressed table, kept out of line so that
    /// the raw path stays small enough to inline.
    #[inline(never)]
    fn get_compressed(&self, g: u64) -> Result<i8, ProbeError> {
        match self {
            Table::Raw(b) => Ok(lookup(&**b, g)),
            Table::Compressed { table, path, .. } => table.get(g).map_err(|source| {
                Damaged {
                    path: path.clone(),
                    source,
                }
                .into()
            }),
        }
    }

    /// The bytes, for a raw table.
    #[inline]
    fn as_slice(&self) -> Option<&[u8]> {
        match self {
            Table::Raw(b) => Some((**b).as_ref()),
            Table::Compressed { .. } => None,
        }
    }

    /// The bytes, decompressing a compressed table into memory once.
    fn whole(&self) -> Result<&[u8], ProbeError> {
        match self {
            Table::Raw(b) => Ok((**b).as_ref()),
            Table::Compressed { table, path, whole } => {
                if let Some(w) = whole.get() {
                    return Ok(w);
                }
                let bytes = table.decompress_all().map_err(|source| Damaged {
                    path: path.clone(),
                    source,
                })?;
                // Another thread may have won the race; either copy is the same.
                let _ = whole.set(bytes);
                Ok(whole.get().expect("just set"))
            }
        }
    }
}

/// The tables of one layer.
struct Layer {
    score: Table,
    envelope: Option<(Table, Table)>,
}

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

/// The value at Goedel index `g` of a table in the file format.
#[inline]
pub fn lookup<T: AsRef<[u8]> + ?Sized>(table: &T, g: u64) -> i8 {
    table.as_ref()[g as usize] as i8
}

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
    layers: Vec<OnceLock<Layer>>,
    /// Checksum every table of ours as its layer is mapped.
    verify_on_load: bool,
}

impl Database {
    /// Opens a folder of tables. Nothing is mapped yet; each layer is mapped
    /// when first probed, after its tables' sizes (and, for compressed
    /// tables, headers) are checked. No table is read whole: see
    /// [`verify`](Self::verify) and [`verify_on_load`](Self::verify_on_load).
    ///
    /// A folder without `manifest.json` is taken for a VU dataset folder
    /// (`scores.N` files only); one that also holds our envelope tables is
    /// one of ours that lost its manifest, and is refused
    /// ([`ProbeError::LostManifest`]).
    pub fn open(dir: impl AsRef<Path>) -> Result<Database, ProbeError> {
        let dir = dir.as_ref().to_path_buf();
        if !dir.is_dir() {
            return Err(ProbeError::NotAFolder(dir));
        }
        let source = match Manifest::load(&dir)? {
            Some(manifest) => Source::Ours { dir, manifest },
            None => {
                let ours = (0..=MAX_SEEDS)
                    .flat_map(|n| [Kind::Lower.file_name(n), Kind::Upper.file_name(n)])
                    .find(|f| dir.join(f).exists());
                if let Some(file) = ours {
                    return Err(ProbeError::LostManifest { dir, file });
                }
                let any_scores =
                    (0..=MAX_SEEDS).any(|n| dir.join(Kind::Score.file_name(n)).exists());
                if !any_scores {
                    return Err(ProbeError::NotAFolder(dir));
                }
                Source::Vu { dir }
            }
        };
        Ok(Database {
            source,
            layers: (0..=MAX_SEEDS).map(|_| OnceLock::new()).collect(),
            verify_on_load: false,
        })
    }

    /// With `yes`, every table of ours is checksummed (read whole) when its
    /// layer is first mapped, and a table that does not match the manifest
    /// is a [`ProbeError::Checksum`] error: slower first probes, for callers
    /// that want each answer to come from verified tables. A VU folder has
    /// no checksums to verify.
    pub fn verify_on_load(mut self, yes: bool) -> Database {
        self.verify_on_load = yes;
        self
    }

    /// Opens the folder named by `AWARI_PATH`.
    pub fn from_env() -> Result<Database, ProbeError> {
        match std::env::var_os(AWARI_PATH) {
            Some(p) if !p.is_empty() => Self::open(PathBuf::from(p)),
            _ => Err(ProbeError::NoFolder),
        }
    }

    /// A database over in-memory tables: `layers[n]` holds layer `n`'s
    /// tables, if any; each must hold one byte per position of its layer.
    pub fn from_tables<T: AsRef<[u8]> + Send + Sync + 'static>(
        layers: Vec<Option<LayerTables<T>>>,
    ) -> Result<Database, ProbeError> {
        let slots: Vec<OnceLock<Layer>> = (0..=MAX_SEEDS).map(|_| OnceLock::new()).collect();
        for (n, l) in layers.into_iter().enumerate() {
            let Some(LayerTables { score, envelope }) = l else {
                continue;
            };
            let n = n as u32;
            if n > MAX_SEEDS {
                return Err(crate::index::IndexError::NoSuchLayer(n).into());
            }
            let check = |t: &T, table: &'static str| {
                let found = t.as_ref().len() as u64;
                let expected = layer_size(n);
                if found == expected {
                    Ok(())
                } else {
                    Err(ProbeError::TableSize {
                        layer: n,
                        table,
                        expected,
                        found,
                    })
                }
            };
            check(&score, "scores")?;
            if let Some((lo, hi)) = &envelope {
                check(lo, "lower")?;
                check(hi, "upper")?;
            }
            let _ = slots[n as usize].set(Layer {
                score: Table::Raw(Box::new(score)),
                envelope: envelope.map(|(lo, hi)| {
                    (
                        Table::Raw(Box::new(lo) as Bytes),
                        Table::Raw(Box::new(hi) as Bytes),
                    )
                }),
            });
        }
        Ok(Database {
            source: Source::Memory,
            layers: slots,
            verify_on_load: false,
        })
    }

    /// The folder, if the tables come from one.
    pub fn dir(&self) -> Option<&Path> {
        match &self.source {
            Source::Ours { dir, .. } | Source::Vu { dir } => Some(dir),
            Source::Memory => None,
        }
    }

    /// Whether this is a plain VU folder (scores only, no checksums).
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

    /// The layers available: built (ours), present (VU) or loaded (memory).
    pub fn layers(&self) -> Vec<u32> {
        match &self.source {
            Source::Ours { manifest, .. } => manifest.layers.iter().map(|l| l.seeds).collect(),
            Source::Vu { dir } => (0..=MAX_SEEDS)
                .filter(|&n| dir.join(Kind::Score.file_name(n)).exists())
                .collect(),
            Source::Memory => (0..=MAX_SEEDS)
                .filter(|&n| self.layers[n as usize].get().is_some())
                .collect(),
        }
    }

    /// Maps every available layer now and verifies the checksums of our
    /// tables ([`verify_layer`](Self::verify_layer)); returns the layers
    /// checked.
    pub fn verify(&self) -> Result<Vec<u32>, ProbeError> {
        let layers = self.layers();
        for &n in &layers {
            self.verify_layer(n)?;
        }
        Ok(layers)
    }

    /// Maps layer `n` and, in a folder of ours, reads each of its tables
    /// whole and compares its checksum with the manifest's: a raw table's
    /// bytes, or a compressed table's file (whose header carries the raw
    /// table's checksum, checked on opening). Returns whether there were
    /// checksums to verify (`false` for a VU folder or tables in memory,
    /// which are only mapped).
    pub fn verify_layer(&self, n: u32) -> Result<bool, ProbeError> {
        if n > MAX_SEEDS {
            return Err(crate::index::IndexError::NoSuchLayer(n).into());
        }
        let l = self.layer(n)?;
        let Source::Ours { dir, manifest } = &self.source else {
            return Ok(false);
        };
        let Some(e) = manifest.layer(n) else {
            return Ok(false);
        };
        let tables = [
            Some(&l.score),
            l.envelope.as_ref().map(|t| &t.0),
            l.envelope.as_ref().map(|t| &t.1),
        ];
        for ((_, f), t) in e.files().zip(tables) {
            match t {
                Some(Table::Raw(_)) => check_raw(dir, f)?,
                Some(Table::Compressed { path, .. }) => {
                    let c = manifest.compressed(&f.name).expect("served compressed");
                    check_file(
                        path,
                        &c.xxh3,
                        "the manifest's checksum of the compressed file",
                    )?;
                }
                None => {}
            }
        }
        Ok(true)
    }

    #[inline]
    fn layer(&self, n: u32) -> Result<&Layer, ProbeError> {
        let slot = &self.layers[n as usize];
        if let Some(l) = slot.get() {
            return Ok(l);
        }
        self.layer_slow(n)
    }

    #[cold]
    fn layer_slow(&self, n: u32) -> Result<&Layer, ProbeError> {
        let slot = &self.layers[n as usize];
        let l = self.load(n)?;
        // Another thread may have won the race; either copy is the same.
        let _ = slot.set(l);
        Ok(slot.get().expect("layer just set"))
    }

    fn load(&self, n: u32) -> Result<Layer, ProbeError> {
        match &self.source {
            Source::Ours { dir, manifest } => {
                let entry = manifest.layer(n).ok_or_else(|| ProbeError::MissingLayer {
                    layer: n,
                    dir: dir.clone(),
                    vu: false,
                })?;
                load_ours(dir, manifest, entry, self.verify_on_load)
            }
            Source::Vu { dir } => {
                let path = dir.join(Kind::Score.file_name(n));
                if !path.exists() {
                    return Err(ProbeError::MissingLayer {
                        layer: n,
                        dir: dir.clone(),
                        vu: true,
                    });
                }
                Ok(Layer {
                    score: Table::Raw(Box::new(map_vu(&path, n)?)),
                    envelope: None,
                })
            }
            Source::Memory => Err(ProbeError::MissingLayer {
                layer: n,
                dir: PathBuf::from("(memory)"),
                vu: false,
            }),
        }
    }

    /// The raw bytes of one table of layer `n` (one signed byte per Goedel
    /// index); `None` for an envelope table the folder does not have.
    ///
    /// A compressed table is decompressed into memory (in parallel, and
    /// checked against its checksum) on the first call, and kept until the
    /// `Database` is dropped: that costs the table's size in memory.
    pub fn table(&self, n: u32, kind: Kind) -> Result<Option<&[u8]>, ProbeError> {
        self.table_of(n, kind)?.map(Table::whole).transpose()
    }

    /// Table `kind` of layer `n` (mapping the layer if needed); `None` for
    /// an envelope table of a layer built without it.
    fn table_of(&self, n: u32, kind: Kind) -> Result<Option<&Table>, ProbeError> {
        if n > MAX_SEEDS {
            return Err(crate::index::IndexError::NoSuchLayer(n).into());
        }
        let l = self.layer(n)?;
        Ok(match kind {
            Kind::Score => Some(&l.score),
            Kind::Lower => l.envelope.as_ref().map(|e| &e.0),
            Kind::Upper => l.envelope.as_ref().map(|e| &e.1),
        })
    }

    /// Whether a table of layer `n` is served from its compressed file
    /// (maps the layer if needed).
    pub fn is_compressed(&self, n: u32, kind: Kind) -> Result<bool, ProbeError> {
        Ok(matches!(
            self.table_of(n, kind)?,
            Some(Table::Compressed { .. })
        ))
    }

    /// The layer and Goedel index of a board, checking it has them.
    #[inline]
    fn locate(p: &Position) -> Result<(u32, u64), ProbeError> {
        let n = p.seeds();
        if n > MAX_SEEDS {
            return Err(PositionError::TooManySeeds(n).into());
        }
        if !p.is_indexable() {
            return Err(PositionError::OpponentFull.into());
        }
        if n == 47 {
            return Err(ProbeError::Layer47);
        }
        Ok((n, rank(p)))
    }

    /// The score of a position for the side to move.
    #[inline]
    pub fn score(&self, p: &Position) -> Result<i8, ProbeError> {
        let (n, g) = Self::locate(p)?;
        self.layer(n)?.score.get(g)
    }

    /// The scores of many positions, written to `out` (one per position).
    /// Table reads are prefetched a group at a time, so their cache misses
    /// overlap: much faster than one [`score`](Self::score) after another
    /// on random positions. Positions in compressed tables are looked up
    /// last, in index order, so that each block is decompressed once per
    /// call. Stops at the first position that fails.
    pub fn scores(&self, ps: &[Position], out: &mut [i8]) -> Result<(), ProbeError> {
        if ps.len() != out.len() {
            return Err(ProbeError::Lengths {
                positions: ps.len(),
                outputs: out.len(),
            });
        }
        const GROUP: usize = 16;
        static NONE: [u8; 1] = [0];
        let mut at = [(&NONE[..], 0usize); GROUP];
        let mut later: Vec<(u32, u64, usize)> = Vec::new();
        for (c, (pc, oc)) in ps.chunks(GROUP).zip(out.chunks_mut(GROUP)).enumerate() {
            for (k, p) in pc.iter().enumerate() {
                let (n, g) = Self::locate(p)?;
                match self.layer(n)?.score.as_slice() {
                    Some(t) => {
                        let g = g as usize;
                        prefetch(t[g..].as_ptr());
                        at[k] = (t, g);
                    }
                    None => {
                        later.push((n, g, c * GROUP + k));
                        at[k] = (&NONE[..], 0);
                    }
                }
            }
            for (o, &(t, g)) in oc.iter_mut().zip(&at) {
                *o = t[g] as i8;
            }
        }
        later.sort_unstable();
        for (n, g, i) in later {
            out[i] = self.layer(n)?.score.get(g)?;
        }
        Ok(())
    }

    /// The score at Goedel index `g` of layer `n`.
    pub fn score_at(&self, n: u32, g: u64) -> Result<i8, ProbeError> {
        if n > MAX_SEEDS || g >= layer_size(n) {
            crate::index::unrank(n, g)?;
        }
        self.layer(n)?.score.get(g)
    }

    /// The cycle envelope of a position (`None` for tables without one).
    pub fn envelope(&self, p: &Position) -> Result<Option<Envelope>, ProbeError> {
        let (n, g) = Self::locate(p)?;
        match &self.layer(n)?.envelope {
            Some((lo, hi)) => Ok(Some(Envelope {
                lower: lo.get(g)?,
                upper: hi.get(g)?,
            })),
            None => Ok(None),
        }
    }

    /// The six pits as moves, with their legality, captures and worth.
    pub fn moves(&self, p: &Position) -> Result<[MoveInfo; 6], ProbeError> {
        let (n, _) = Self::locate(p)?;
        let list = p.moves();
        let mut out = [MoveInfo {
            pit: 0,
            nonempty: false,
            legal: false,
            captures: 0,
            score: None,
            child: None,
        }; 6];
        for (pit, m) in out.iter_mut().enumerate() {
            m.pit = pit as u8;
        }
        for mv in list.as_slice() {
            let m = &mut out[mv.pit as usize];
            m.nonempty = true;
            m.legal = mv.legal;
            m.captures = mv.captured;
            m.child = Some(mv.child);
            if mv.legal {
                let left = n - mv.captured as u32;
                let child_score = if mv.child.mover_seeds() == 0 {
                    // The opponent has no move: we take every seed left.
                    -(left as i32)
                } else {
                    self.layer(left)?.score.get(rank(&mv.child))? as i32
                };
                m.score = Some((mv.captured as i32 - child_score) as i8);
            }
        }
        Ok(out)
    }

    /// The legal moves of best worth (empty when the mover has no seeds).
    pub fn best_moves(&self, p: &Position) -> Result<Vec<u8>, ProbeError> {
        let moves = self.moves(p)?;
        let best = moves.iter().filter_map(|m| m.score).max();
        Ok(moves
            .iter()
            .filter(|m| m.score.is_some() && m.score == best)
            .map(|m| m.pit)
            .collect())
    }

    /// The line of best moves (lowest pit among equals) from `p` until the
    /// game ends, a position repeats, or `limit` moves were made.
    pub fn principal_variation(&self, p: &Position, limit: usize) -> Result<Pv, ProbeError> {
        Self::locate(p)?;
        let mut pos = *p;
        let mut seen = HashSet::new();
        let mut steps = Vec::new();
        loop {
            if pos.mover_seeds() == 0 {
                return Ok(Pv {
                    steps,
                    last: pos,
                    end: PvEnd::GameOver,
                });
            }
            if !seen.insert(pos) {
                return Ok(Pv {
                    steps,
                    last: pos,
                    end: PvEnd::Repetition,
                });
            }
            if steps.len() >= limit {
                return Ok(Pv {
                    steps,
                    last: pos,
                    end: PvEnd::Limit,
                });
            }
            let moves = self.moves(&pos)?;
            let best = moves
                .iter()
                .filter(|m| m.score.is_some())
                .max_by_key(|m| (m.score, std::cmp::Reverse(m.pit)))
                .expect("a mover with seeds has a legal move");
            steps.push(PvStep {
                position: pos,
                score: self.score(&pos)?,
                pit: best.pit,
                captures: best.captures,
            });
            pos = best.child.expect("legal move has a child");
        }
    }
}

/// The checksum of a whole file, compared with `expected`.
fn check_file(path: &Path, expected: &str, what: &'static str) -> Result<(), ProbeError> {
    let found = checksum_file(path).map_err(MapError::from)?;
    if found != expected {
        return Err(ChecksumMismatch {
            path: path.to_path_buf(),
            what,
            expected: expected.to_string(),
            found,
        }
        .into());
    }
    Ok(())
}

/// A raw table of ours against the manifest's checksum.
fn check_raw(dir: &Path, f: &FileEntry) -> Result<(), ProbeError> {
    check_file(
        &dir.join(&f.name),
        &f.xxh3,
        "the manifest's checksum of the table",
    )
}

/// Maps the tables of one of our layers, each raw if its file is there,
/// else compressed if the manifest lists a compressed copy. Sizes and
/// compressed headers are checked; with `verify`, each table's checksum too.
fn load_ours(
    dir: &Path,
    manifest: &Manifest,
    e: &LayerEntry,
    verify: bool,
) -> Result<Layer, ProbeError> {
    let n = e.seeds;
    let size = layer_size(n);
    let open = |kind: Kind, f: &FileEntry| -> Result<Table, ProbeError> {
        let path = dir.join(&f.name);
        if !path.exists() {
            if let Some(c) = manifest.compressed(&f.name) {
                let (table, path) = open_listed(dir, c, kind, f, verify)?;
                return Ok(Table::Compressed {
                    table,
                    path,
                    whole: OnceLock::new(),
                });
            }
            return Err(ProbeError::MissingTable(path));
        }
        let map = Mapped::open(&path, size)?;
        if verify {
            check_raw(dir, f)?;
        }
        Ok(Table::Raw(Box::new(map)))
    };
    let score = open(Kind::Score, &e.scores)?;
    let envelope = match (&e.lower, &e.upper) {
        (Some(lo), Some(hi)) => Some((open(Kind::Lower, lo)?, open(Kind::Upper, hi)?)),
        _ => None,
    };
    Ok(Layer { score, envelope })
}

/// Maps a VU `scores.n`; layer 48 may hold one extra byte (the initial
/// position), which is never read.
fn map_vu(path: &Path, n: u32) -> Result<Mapped, ProbeError> {
    let size = layer_size(n);
    match Mapped::open(path, size) {
        Err(MapError::Size { found, .. }) if n == 48 && found == size + 1 => {
            Ok(Mapped::open(path, size + 1)?)
        }
        r => Ok(r?),
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

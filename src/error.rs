//! The library's one error type.
//!
//! Every fallible function of the library returns [`Error`]. Its variants
//! keep what went wrong as data (paths, layers, sizes, checksums) and the
//! underlying error as their [`source`](std::error::Error::source); their
//! messages name files and figures, never a command or a flag of the
//! `awari` binary (which adds those words itself). [`Error::kind`] sorts
//! them into the few classes a caller acts on: a damaged table is
//! [`ErrorKind::Damaged`] on every path that finds it (the probe, the
//! builder's lower layers, the verifier, compress, recover), so the binary
//! decides its exit status from the kind alone.
//!
//! The compressed-file format reports its faults as
//! [`CompressError`]; the library hands them
//! out inside [`Error::Compressed`], with the file's path.

use crate::codec::error::CompressError;
use crate::format::Checksum;
use crate::store::ManifestFault;
use std::io;
use std::path::{Path, PathBuf};

/// What kind of failure an [`Error`] is: what the caller can do about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Bad input: a position, layer, range, setting or folder the call
    /// cannot take, or a layer the folder does not have.
    Input,
    /// The operating system failed a file operation (permissions, a full
    /// disk, a missing folder the caller named).
    Io,
    /// A table, compressed file or manifest entry is damaged: the wrong
    /// size or checksum, missing though listed, values no score can take.
    /// Rebuilding the table repairs it.
    Damaged,
    /// A layer does not fit in the memory allowed.
    Memory,
    /// Another process holds the folder's lock.
    Busy,
    /// Another rank of a build stopped.
    Stopped,
}

/// Sizes: what a file's expected size is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SizeOf {
    /// One byte per position of its layer (a raw table).
    Layer,
    /// The size the manifest records for it (a compressed file).
    Recorded,
    /// The size it had when it was opened (a file no manifest lists).
    Opened,
}

/// Why a call failed. See the [module documentation](self).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    // ---- input --------------------------------------------------------
    /// More than 48 seeds on the board.
    #[error("{0} seeds on the board; awari has at most 48")]
    TooManySeeds(u32),
    /// Every opponent pit (a..f) holds seeds, so the opponent cannot have
    /// just moved; such boards have no Goedel number.
    #[error(
        "every pit of the opponent (a..f) holds seeds, so the opponent cannot have just moved \
         (a move empties the pit it sows from); such a board has no Goedel number"
    )]
    OpponentFull,
    /// The layer does not exist.
    #[error("layer {0} does not exist: layers have 0 to 48 seeds")]
    NoSuchLayer(u32),
    /// 47 seeds never occur (a capture takes at least 2 of the 48).
    #[error(
        "a board of 47 seeds cannot occur in awari (every capture takes at least 2 of the 48 \
         seeds), so no database has layer 47"
    )]
    Layer47,
    /// The index is not below the layer's size.
    #[error("index {index} is outside layer {seeds}, which holds {size} positions (0..={last})", last = size - 1)]
    IndexOutOfRange {
        /// Seeds of the layer.
        seeds: u32,
        /// The index asked for.
        index: u64,
        /// The layer's size.
        size: u64,
    },
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
    /// A table handed over in memory has the wrong size.
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
    /// Two slices that must have the same length do not.
    #[error("{positions} positions but {outputs} outputs")]
    Lengths {
        /// Positions given.
        positions: usize,
        /// Outputs given.
        outputs: usize,
    },
    /// No folder was given and `AWARI_PATH` is not set.
    #[error("no database folder given, and AWARI_PATH is not set")]
    NoFolder,
    /// The folder does not exist.
    #[error("{}: no such folder", .0.display())]
    NoSuchFolder(PathBuf),
    /// The path exists and is not a folder.
    #[error("{}: not a folder", .0.display())]
    NotAFolder(PathBuf),
    /// The folder holds no tables at all.
    #[error("{}: not a folder of tables (no manifest.json and no scores.N files)", .0.display())]
    NoTables(PathBuf),
    /// The folder has no manifest, so it is not one of ours.
    #[error("{}: no manifest.json: not a database folder of this library", .0.display())]
    NotOurs(PathBuf),
    /// The manifest is not one of ours, or is not valid.
    #[error("{}: not an awari-egdb manifest ({reason})", path.display())]
    ForeignManifest {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        reason: ManifestFault,
    },
    /// The manifest is ours, but for other rules or another format version.
    #[error("{}: built for {found}, not for {expected}", path.display())]
    OtherRules {
        /// The file.
        path: PathBuf,
        /// What it says.
        found: String,
        /// What this library builds.
        expected: String,
    },
    /// A rule set name that is not a preset.
    #[error("unknown rule set '{name}'; the rule sets are: {known}")]
    UnknownRules {
        /// The name asked for.
        name: String,
        /// The presets' names.
        known: String,
    },
    /// A rule set written out (a manifest's `rules`) without its name.
    #[error("no \"name\" field")]
    RulesUnnamed,
    /// A rule set written out (a manifest's `rules`) that differs from
    /// this program's preset of its name in a field that shapes the tables.
    #[error("its rule set '{name}' differs from this program's in {field}")]
    RulesFieldDiffers {
        /// The preset's name.
        name: &'static str,
        /// The first field that differs.
        field: &'static str,
        /// Its value there (`None`: absent).
        found: Option<serde_json::Value>,
    },
    /// A folder's tables follow one rule set and the command asked for
    /// another.
    #[error("{}: its tables follow the {folder} rules, not {asked}{hint}", dir.display())]
    RulesDiffer {
        /// The folder.
        dir: PathBuf,
        /// The folder's rule set.
        folder: &'static str,
        /// The rule set asked for.
        asked: &'static str,
        /// What to do instead.
        hint: &'static str,
    },
    /// A folder without manifest whose compressed files name different
    /// rule sets in their headers.
    #[error(
        "{}: its compressed files name different rule sets ({}); a folder holds the tables of \
         one rule set", dir.display(), mixed(files)
    )]
    RulesMixed {
        /// The folder.
        dir: PathBuf,
        /// Each file that names one, and the rule set it names.
        files: Vec<(String, &'static str)>,
    },
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
    /// A check that needs the VU data (awari only) asked of another rule
    /// set's folder.
    #[error("{}: {what} compares with the VU database, which follows the awari rules; this folder follows {rules}", dir.display())]
    VuOnly {
        /// The folder.
        dir: PathBuf,
        /// The check.
        what: &'static str,
        /// The folder's rule set.
        rules: &'static str,
    },
    /// A folder that has our envelope tables (`lower.N`, `upper.N`) but no
    /// `manifest.json`: one of ours whose manifest was lost.
    #[error("{}: holds {file} but no manifest.json: a folder of ours whose manifest was lost", dir.display())]
    LostManifest {
        /// The folder.
        dir: PathBuf,
        /// An envelope table found there.
        file: String,
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
    /// Tables of layers to build that the folder's manifest does not list.
    #[error(
        "{}: holds {} but its manifest does not list {}; a build does not replace tables it did \
         not write: `awari recover` lists them if they can be trusted, else move them out of \
         the folder",
        dir.display(), files.join(", "), if files.len() == 1 { "it" } else { "them" }
    )]
    Unlisted {
        /// The folder.
        dir: PathBuf,
        /// The files.
        files: Vec<String>,
    },
    /// The folder holds tables but no manifest, and none of our envelope
    /// tables: a VU dataset or another tool's folder; nothing is written
    /// there.
    #[error("{}: holds {file} but no manifest.json (a VU dataset or another tool's folder); refusing to write there", dir.display())]
    ForeignFolder {
        /// The folder.
        dir: PathBuf,
        /// A table file found there.
        file: String,
    },
    /// The manifest is readable: there is nothing to recover.
    #[error("{}: manifest.json is readable; nothing to recover", .0.display())]
    ManifestFine(PathBuf),
    // ---- why recovery leaves a layer out (`crate::recover`) ----------
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
    /// A layer was built without the envelope, which the call needs.
    #[error("{}: layer {layer} was built without the envelope (lower.{layer}, upper.{layer})", dir.display())]
    NoEnvelope {
        /// The folder.
        dir: PathBuf,
        /// The layer.
        layer: u32,
    },
    /// A CSV file (move facts, known-good checksums) cannot be read.
    #[error("{}: line {line}: {reason}", path.display())]
    Csv {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A setting out of range (compression level, block size, ...).
    #[error("{name} {reason}")]
    Setting {
        /// The setting.
        name: &'static str,
        /// What is wrong with its value.
        reason: String,
    },
    /// The ranks of a build were not started alike.
    #[error("the ranks disagree on {0}")]
    RanksDisagree(&'static str),
    /// MPI cannot be started as the build needs it.
    #[error("{0}")]
    Mpi(String),
    /// The in-memory solver with several ranks.
    #[error(
        "the in-memory solver runs in one process; with several ranks every layer is built by \
         the compact solver"
    )]
    RanksNeedCompact,
    /// Not a pit label.
    #[error("'{0}' is not a move: a move is a pit label, A..F for South or a..f for North")]
    NotALabel(String),
    /// A pit of the side not to move.
    #[error("{label} is a pit of {owner}, but {to_move} is to move")]
    NotYourPit {
        /// The label given.
        label: char,
        /// Whose pit it is.
        owner: &'static str,
        /// Who is to move.
        to_move: &'static str,
    },
    /// The pit holds no seeds.
    #[error("pit {0} is empty")]
    EmptyPit(char),
    /// The move would leave the opponent without seeds while another move
    /// would not.
    #[error("{0} would leave the opponent without seeds while another move does not: illegal")]
    IllegalMove(char),
    /// Not a time control.
    #[error(
        "'{0}' is not a time control: give the time per side and an optional increment per \
         move, e.g. 30m, 90s, 1h30m or 5m+2s"
    )]
    BadClock(String),
    /// A search asked to run on no thread.
    #[error("a search needs at least one thread")]
    NoThreads,
    /// The game is over.
    #[error("the game is over")]
    GameOver,
    /// Nothing to retract.
    #[error("no move to take back")]
    NothingToUndo,
    /// The seeds captured do not add up with the board's.
    #[error("{board} seeds on the board and {captured} captured make {}, not 48", board + captured)]
    SeedCount {
        /// Seeds on the board.
        board: u32,
        /// Seeds captured.
        captured: u32,
    },
    /// A text that is not a position in the notation ([`crate::game`]).
    #[error("'{text}' is not a position: {fault}")]
    Notation {
        /// The text given.
        text: String,
        /// What is wrong with it: a `game::NotationFault` (boxed, so that
        /// this room does not import the game's).
        #[source]
        fault: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A game record that cannot be read.
    #[error("line {line}: {source}")]
    Record {
        /// 1-based line number.
        line: usize,
        /// What is wrong with the line.
        #[source]
        source: Box<Error>,
    },
    /// A game record whose lines are not in order.
    #[error("{0}")]
    RecordSyntax(&'static str),
    /// A word of a game record that is not what its place needs.
    #[error("'{word}' is not {expected}")]
    RecordWord {
        /// The word.
        word: String,
        /// What it must be.
        expected: &'static str,
    },

    // ---- I/O ----------------------------------------------------------
    /// A file operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
    /// A solver's scratch file (exits or lists, in the scratch folder)
    /// could not be created, written or read.
    #[error("scratch file in {}: {source}", dir.display())]
    Scratch {
        /// The scratch folder.
        dir: PathBuf,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
    /// The solver's working arrays could not be allocated.
    #[error("cannot allocate the working arrays ({bytes} bytes): {source}")]
    Alloc {
        /// Bytes asked for.
        bytes: u64,
        /// What the system said.
        #[source]
        source: io::Error,
    },

    // ---- damage -------------------------------------------------------
    /// A table file has the wrong size.
    #[error("{}: {found} bytes, {}", path.display(), match of {
        SizeOf::Layer => format!("but the layer has {expected} positions"),
        SizeOf::Recorded => format!("but the manifest records {expected}"),
        SizeOf::Opened => format!("but it had {expected} when it was opened"),
    })]
    Size {
        /// The file.
        path: PathBuf,
        /// Bytes it should hold.
        expected: u64,
        /// Bytes it holds.
        found: u64,
        /// Where the expected size comes from.
        of: SizeOf,
    },
    /// A table the manifest lists is absent, and no compressed copy of it
    /// is listed either.
    #[error("{}: missing (the manifest lists it, and no compressed copy of it)", .0.display())]
    Missing(PathBuf),
    /// A file does not have the checksum it must have.
    #[error("{}: checksum {found}, expected {expected} ({what})", path.display())]
    Checksum {
        /// The file.
        path: PathBuf,
        /// What was checked, against what.
        what: &'static str,
        /// The checksum it must have.
        expected: Checksum,
        /// The checksum of what is there.
        found: Checksum,
    },
    /// A format 4 file that leaves "don't care" entries, read as a
    /// table: only a probe resolves its values to scores.
    #[error(
        "{}: the file leaves \"don't care\" entries, which only a probe resolves to scores (awari query)",
        .0.display()
    )]
    DontCare(PathBuf),
    /// A compressed file is damaged or holds another table.
    #[error("{}: {source}", path.display())]
    Compressed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: CompressError,
    },
    /// A table holds a value no score of its layer can take.
    #[error("{}: entry {index} holds {value}, outside -{layer}..={layer}", path.display())]
    BadValue {
        /// The table (its file, or `(memory)`).
        path: PathBuf,
        /// Its layer.
        layer: u32,
        /// The entry.
        index: u64,
        /// The value found.
        value: i8,
    },
    /// A layer's score lies outside its own envelope: one of its three
    /// tables is damaged.
    #[error(
        "{}: entry {index} of layer {layer} holds score {score:+} outside its envelope \
         {lower:+}..{upper:+}; one of scores.{layer}, lower.{layer}, upper.{layer} is damaged",
        dir.display()
    )]
    OutsideEnvelope {
        /// The folder.
        dir: PathBuf,
        /// The layer.
        layer: u32,
        /// The entry.
        index: u64,
        /// The score.
        score: i8,
        /// The envelope's lower end.
        lower: i8,
        /// Its upper end.
        upper: i8,
    },

    // ---- other --------------------------------------------------------
    /// A layer does not fit in the memory allowed.
    #[error(
        "layer {layer} needs {} of memory ({what}) but only {} is available{}",
        human(*needed), human(*available),
        if *from_limit { " (the memory limit)" } else { " on this machine" }
    )]
    Memory {
        /// What the memory is for.
        what: &'static str,
        /// The layer refused.
        layer: u32,
        /// Bytes it needs.
        needed: u64,
        /// Bytes allowed.
        available: u64,
        /// Whether the bytes allowed are the caller's limit (else what the
        /// machine has available).
        from_limit: bool,
    },
    /// A layer range does not fit on the disk.
    #[error(
        "layers {first}..={last} need about {} of disk in {}, but it has {} free",
        human(*needed), dir.display(), human(*free)
    )]
    Disk {
        /// The folder.
        dir: PathBuf,
        /// First layer to build.
        first: u32,
        /// Last layer to build.
        last: u32,
        /// Bytes the tables need.
        needed: u64,
        /// Bytes free.
        free: u64,
    },
    /// Another process holds the folder's lock.
    #[error("{}: another build, compress or recover is running in this folder (it holds build.lock)", .0.display())]
    Locked(PathBuf),
    /// Another rank of a build stopped.
    #[error("rank {rank} of {ranks} stopped: {reason}")]
    Stopped {
        /// The rank that saw it.
        rank: usize,
        /// Ranks in all.
        ranks: usize,
        /// What it saw.
        reason: String,
    },
}

impl Error {
    /// The class of the failure: what a caller can do about it.
    pub fn kind(&self) -> ErrorKind {
        use Error::*;
        match self {
            Io { .. } | Alloc { .. } | Scratch { .. } => ErrorKind::Io,
            Compressed {
                source: CompressError::Read(k),
                ..
            } if *k != io::ErrorKind::UnexpectedEof => ErrorKind::Io,
            Size { .. }
            | Missing(_)
            | Checksum { .. }
            | Compressed { .. }
            | BadValue { .. }
            | OutsideEnvelope { .. } => ErrorKind::Damaged,
            NoScoreTable(_) | HalfEnvelope(..) | NotKnownGood(_) | Contradicted(..) => {
                ErrorKind::Damaged
            }
            Memory { .. } | Disk { .. } => ErrorKind::Memory,
            Locked(_) => ErrorKind::Busy,
            Stopped { .. } => ErrorKind::Stopped,
            Record { source, .. } => source.kind(),
            _ => ErrorKind::Input,
        }
    }

    /// Whether it says a table is damaged ([`ErrorKind::Damaged`]).
    pub fn is_damage(&self) -> bool {
        self.kind() == ErrorKind::Damaged
    }

    /// The path the error concerns, when it concerns one file or folder.
    pub fn path(&self) -> Option<&Path> {
        use Error::*;
        match self {
            Io { path, .. }
            | Size { path, .. }
            | Checksum { path, .. }
            | Compressed { path, .. }
            | BadValue { path, .. }
            | ForeignManifest { path, .. }
            | OtherRules { path, .. }
            | ListOfOtherRules { path, .. }
            | Csv { path, .. } => Some(path),
            Missing(p) | NoSuchFolder(p) | NotAFolder(p) | NoTables(p) | NotOurs(p)
            | ManifestFine(p) | Locked(p) | DontCare(p) => Some(p),
            MissingLayer { dir, .. }
            | RulesDiffer { dir, .. }
            | RulesMixed { dir, .. }
            | VuOnly { dir, .. }
            | LostManifest { dir, .. }
            | Unlisted { dir, .. }
            | OutsideEnvelope { dir, .. }
            | RulesUnknown { dir, .. }
            | ForeignFolder { dir, .. }
            | NoEnvelope { dir, .. }
            | Scratch { dir, .. }
            | Disk { dir, .. } => Some(dir),
            _ => None,
        }
    }

    /// A compressed file's fault at `path`.
    pub fn compressed(path: impl Into<PathBuf>, source: CompressError) -> Error {
        Error::Compressed {
            path: path.into(),
            source,
        }
    }
}

/// The library's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attaches a path to an I/O result, making an [`Error::Io`].
pub trait AtPath<T> {
    /// The error with `path`.
    fn at(self, path: &Path) -> Result<T>;
}

impl<T> AtPath<T> for io::Result<T> {
    fn at(self, path: &Path) -> Result<T> {
        self.map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}

#[path = "error_display.rs"]
mod display;
use display::mixed;
pub use display::{human, Layers};

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;

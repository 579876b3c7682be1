//! Proving tables right: against an oracle folder (the VU dataset), by the
//! forward Bellman check, and against recorded move facts.

use crate::codec::{CompressError, Damaged};
use crate::format::Kind;
use crate::index::{layer_size, rank, LayerIter};
use crate::pack::open_listed;
use crate::probe::{Database, ProbeError};
use crate::rules::{Position, MAX_SEEDS};
use crate::table::{AtPath, FileEntry, Manifest, PathError};
use rayon::prelude::*;
use serde::Serialize;
use std::fs::File;
use std::io::Read;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Why a verification could not run (as opposed to finding disagreements).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// File trouble.
    #[error(transparent)]
    Io(#[from] PathError),
    /// Trouble opening or reading our tables.
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// Our folder was built without the envelope, so pinned positions are
    /// unknown.
    #[error("{}: layer {layer} was built without the envelope, so its pinned positions are unknown; rebuild it with the envelope", dir.display())]
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
}

/// One position where two tables differ.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Disagreement {
    /// Seeds.
    pub seeds: u32,
    /// Goedel index.
    pub index: u64,
    /// The board.
    pub pits: [u8; 12],
    /// Our value.
    pub ours: i8,
    /// The oracle's value.
    pub theirs: i8,
}

/// The outcome of comparing one layer with the oracle.
#[derive(Clone, Debug, Serialize)]
pub struct LayerVerdict {
    /// Seeds.
    pub seeds: u32,
    /// Positions in the layer.
    pub positions: u64,
    /// Set when the layer could not be compared (missing or wrong-size
    /// oracle file, layer not built by us); the counts are then zero.
    pub skipped: Option<String>,
    /// Whether we built the layer (a layer we did not build is skipped).
    pub built: bool,
    /// Pinned positions compared.
    pub pinned: u64,
    /// Pinned positions where both agree.
    pub pinned_agree: u64,
    /// Pinned positions where they differ: a real disagreement.
    pub pinned_disagree: u64,
    /// Unpinned positions (for information: they show how the oracle scores
    /// endless play).
    pub unpinned: u64,
    /// Unpinned positions where both agree.
    pub unpinned_agree: u64,
    /// The first pinned disagreements.
    pub first_disagreements: Vec<Disagreement>,
    /// Whether our files matched their checksums while streamed.
    pub checksums_ok: bool,
}

/// Bytes read per step when streaming tables.
const STEP: usize = 1 << 24;

/// Reads up to `buf.len()` bytes, fewer only at the end of the file.
fn read_full(f: &mut dyn Read, buf: &mut [u8], path: &Path) -> Result<usize, PathError> {
    let mut got = 0;
    while got < buf.len() {
        let k = f.read(&mut buf[got..]).at(path)?;
        if k == 0 {
            break;
        }
        got += k;
    }
    Ok(got)
}

/// A read error of a compressed table that found it damaged becomes the
/// probe's error for it; other errors stay I/O errors.
fn damaged(e: PathError) -> VerifyError {
    let found = e
        .source
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<CompressError>())
        .cloned();
    match found {
        Some(source) => ProbeError::Compressed(Damaged {
            path: e.path,
            source,
        })
        .into(),
        None => e.into(),
    }
}

/// Compares our `scores.n` with the oracle's, on pinned positions, for every
/// layer in `layers` that we built (47 is skipped). Both are streamed
/// sequentially; our files are checksummed on the way. A table of ours
/// whose raw file is absent is streamed from its compressed copy, block by
/// block, and the decompressed bytes are checksummed.
pub fn compare_with_oracle(
    ours: &Path,
    oracle: &Path,
    layers: RangeInclusive<u32>,
    max_listed: usize,
) -> Result<Vec<LayerVerdict>, VerifyError> {
    let manifest = Manifest::load_ours(ours).map_err(ProbeError::from)?;
    let mut out = Vec::new();
    for n in layers {
        if n == 47 || n > MAX_SEEDS {
            continue;
        }
        let positions = layer_size(n);
        let mut v = LayerVerdict {
            seeds: n,
            positions,
            skipped: None,
            built: true,
            pinned: 0,
            pinned_agree: 0,
            pinned_disagree: 0,
            unpinned: 0,
            unpinned_agree: 0,
            first_disagreements: Vec::new(),
            checksums_ok: true,
        };
        let Some(entry) = manifest.layer(n) else {
            v.built = false;
            v.skipped = Some(format!("layer {n} is not built in {}", ours.display()));
            out.push(v);
            continue;
        };
        let (Some(lo_e), Some(hi_e)) = (&entry.lower, &entry.upper) else {
            return Err(VerifyError::NoEnvelope {
                dir: ours.to_path_buf(),
                layer: n,
            });
        };
        let theirs = oracle.join(Kind::Score.file_name(n));
        let their_len = match std::fs::metadata(&theirs) {
            Ok(m) => m.len(),
            Err(e) => {
                v.skipped = Some(format!("{}: {e}", theirs.display()));
                out.push(v);
                continue;
            }
        };
        // The dataset's scores.48 may hold the initial position as one more
        // entry; it is never compared.
        if their_len != positions && !(n == 48 && their_len == positions + 1) {
            v.skipped = Some(format!(
                "{}: {their_len} bytes, but layer {n} has {positions} positions",
                theirs.display()
            ));
            out.push(v);
            continue;
        }
        compare_layer(
            ours,
            &manifest,
            &theirs,
            [
                (Kind::Score, &entry.scores),
                (Kind::Lower, lo_e),
                (Kind::Upper, hi_e),
            ],
            &mut v,
            max_listed,
        )?;
        out.push(v);
    }
    Ok(out)
}

/// A sequential reader of one of our tables: the raw file, or its
/// compressed copy when the raw file is absent.
fn open_ours(
    dir: &Path,
    manifest: &Manifest,
    kind: Kind,
    f: &FileEntry,
) -> Result<(Box<dyn Read>, PathBuf), VerifyError> {
    let path = dir.join(&f.name);
    if !path.exists() {
        if let Some(c) = manifest.compressed(&f.name) {
            let (table, path) = open_listed(dir, c, kind, f, false).map_err(ProbeError::from)?;
            return Ok((Box::new(table.into_reader()), path));
        }
    }
    Ok((Box::new(File::open(&path).at(&path)?), path))
}

fn compare_layer(
    dir: &Path,
    manifest: &Manifest,
    theirs: &Path,
    files: [(Kind, &FileEntry); 3],
    v: &mut LayerVerdict,
    max_listed: usize,
) -> Result<(), VerifyError> {
    let n = v.seeds;
    let mut handles = Vec::new();
    for (kind, f) in files {
        handles.push(open_ours(dir, manifest, kind, f)?);
    }
    handles.push((
        Box::new(File::open(theirs).at(theirs)?),
        theirs.to_path_buf(),
    ));
    let files = files.map(|(_, f)| f);
    let mut bufs = vec![vec![0u8; STEP]; 4];
    let mut hashers: Vec<_> = (0..3).map(|_| xxhash_rust::xxh3::Xxh3::new()).collect();
    let mut start = 0u64;
    while start < v.positions {
        let want = (v.positions - start).min(STEP as u64) as usize;
        for (i, (f, p)) in handles.iter_mut().enumerate() {
            let got = read_full(f, &mut bufs[i][..want], p).map_err(damaged)?;
            if got != want {
                return Err(VerifyError::Io(PathError {
                    path: p.clone(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "file shorter than its layer",
                    ),
                }));
            }
        }
        bufs[..3]
            .par_iter()
            .zip(hashers.par_iter_mut())
            .for_each(|(b, h)| h.update(&b[..want]));
        let (sc, lo, hi, th) = (&bufs[0], &bufs[1], &bufs[2], &bufs[3]);
        let counts = (0..want)
            .into_par_iter()
            .with_min_len(1 << 16)
            .fold(
                || [0u64; 4],
                |mut c, i| {
                    if lo[i] == hi[i] {
                        c[0] += 1;
                        c[1] += u64::from(sc[i] == th[i]);
                    } else {
                        c[2] += 1;
                        c[3] += u64::from(sc[i] == th[i]);
                    }
                    c
                },
            )
            .reduce(|| [0u64; 4], |a, b| std::array::from_fn(|k| a[k] + b[k]));
        v.pinned += counts[0];
        v.pinned_agree += counts[1];
        v.unpinned += counts[2];
        v.unpinned_agree += counts[3];
        if counts[1] < counts[0] && v.first_disagreements.len() < max_listed {
            // This step holds disagreements: list the first ones in order.
            let found = (0..want).filter(|&i| lo[i] == hi[i] && sc[i] != th[i]);
            for i in found.take(max_listed - v.first_disagreements.len()) {
                let g = start + i as u64;
                v.first_disagreements.push(Disagreement {
                    seeds: n,
                    index: g,
                    pits: crate::index::unrank_unchecked(n, g).0,
                    ours: sc[i] as i8,
                    theirs: th[i] as i8,
                });
            }
        }
        start += want as u64;
    }
    v.pinned_disagree = v.pinned - v.pinned_agree;
    v.checksums_ok = files
        .iter()
        .zip(&hashers)
        .all(|(f, h)| format!("{:016x}", h.digest()) == f.xxh3);
    Ok(())
}

/// One stored value that its children contradict.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct BellmanMismatch {
    /// Seeds.
    pub seeds: u32,
    /// Goedel index.
    pub index: u64,
    /// The board.
    pub pits: [u8; 12],
    /// `scores`, `lower` or `upper`.
    pub table: &'static str,
    /// What is stored.
    pub stored: i8,
    /// What the children give.
    pub recomputed: i8,
}

/// The Bellman check of one layer.
#[derive(Clone, Debug, Serialize)]
pub struct BellmanVerdict {
    /// Seeds.
    pub seeds: u32,
    /// Positions checked.
    pub positions: u64,
    /// Whether the envelope was checked too.
    pub envelope: bool,
    /// Mismatching values.
    pub mismatches: u64,
    /// The first of them.
    pub first_mismatches: Vec<BellmanMismatch>,
}

/// Recomputes every stored score (and envelope bound) of layer `n` forward
/// from its children and compares: `score(P) = max over legal moves of
/// (captures - score(child))` (`-n` without a move; a child whose mover has
/// no seeds scores minus its seeds), and likewise `lower` from the
/// children's `upper` and `upper` from their `lower`.
pub fn bellman_check(
    db: &Database,
    n: u32,
    max_listed: usize,
) -> Result<BellmanVerdict, VerifyError> {
    let size = layer_size(n);
    // Every layer the check reads, mapped (and checksummed) up front.
    let mut tables: Vec<[Option<&[u8]>; 3]> = Vec::new();
    for k in 0..=n {
        tables.push(if k == 47 {
            [None; 3]
        } else {
            [
                db.table(k, Kind::Score)?,
                db.table(k, Kind::Lower)?,
                db.table(k, Kind::Upper)?,
            ]
        });
    }
    let envelope = tables[n as usize][1].is_some() && tables[n as usize][2].is_some();
    let get = |k: u32, t: usize, g: u64| -> i32 {
        tables[k as usize][t].map_or(0, |b| b[g as usize] as i8 as i32)
    };
    let listed = Mutex::new(Vec::new());
    let chunk = 1u64 << 16;
    let mismatches: u64 = (0..size.div_ceil(chunk))
        .into_par_iter()
        .map(|c| {
            let mut bad = 0u64;
            for (g, p) in LayerIter::range(n, c * chunk, (c + 1) * chunk) {
                let want = forward(&p, envelope, &get);
                for (t, name) in ["scores", "lower", "upper"].iter().enumerate() {
                    if t > 0 && !envelope {
                        continue;
                    }
                    let stored = get(n, t, g);
                    if stored != want[t] {
                        bad += 1;
                        let mut l = listed.lock().expect("list lock");
                        if l.len() < max_listed {
                            l.push(BellmanMismatch {
                                seeds: n,
                                index: g,
                                pits: p.0,
                                table: name,
                                stored: stored as i8,
                                recomputed: want[t] as i8,
                            });
                        }
                    }
                }
            }
            bad
        })
        .sum();
    let mut first = listed.into_inner().expect("list lock");
    first.sort_by_key(|m| (m.index, m.table));
    Ok(BellmanVerdict {
        seeds: n,
        positions: size,
        envelope,
        mismatches,
        first_mismatches: first,
    })
}

/// Score, lower and upper of `p` recomputed from its children, read with
/// `get(layer, table, index)` (table 0 score, 1 lower, 2 upper).
fn forward(p: &Position, envelope: bool, get: &impl Fn(u32, usize, u64) -> i32) -> [i32; 3] {
    let n = p.seeds() as i32;
    if p.mover_seeds() == 0 {
        return [-n; 3];
    }
    let mut best = [i32::MIN; 3];
    for m in p.moves().legal() {
        let c = m.captured as i32;
        let left = n - c;
        let child = if m.child.mover_seeds() == 0 {
            [-left; 3]
        } else {
            let g = rank(&m.child);
            let s = get(left as u32, 0, g);
            if envelope {
                [s, get(left as u32, 1, g), get(left as u32, 2, g)]
            } else {
                [s; 3]
            }
        };
        best[0] = best[0].max(c - child[0]);
        best[1] = best[1].max(c - child[2]);
        best[2] = best[2].max(c - child[1]);
    }
    best
}

/// A recorded move fact: playing `mv` in `pits` loses `loss` points against
/// the best move (one row of `data/vu-move-facts.csv`).
#[derive(Clone, Debug, Serialize)]
pub struct Fact {
    /// Its id in the file.
    pub id: String,
    /// The board.
    pub pits: [u8; 12],
    /// Seeds as recorded.
    pub seeds: u32,
    /// Goedel index as recorded.
    pub index: u64,
    /// The pit played.
    pub mv: u8,
    /// Points lost against the best move.
    pub loss: i32,
}

/// Reads a move-facts CSV (columns by header name: `fact_id`, `seeds`,
/// `p0`..`p11`, `goedel_index`, `move`, `loss_vs_best`).
pub fn read_facts(path: &Path) -> Result<Vec<Fact>, VerifyError> {
    let text = std::fs::read_to_string(path).at(path)?;
    let bad = |line: usize, reason: String| VerifyError::Csv {
        path: path.to_path_buf(),
        line,
        reason,
    };
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .ok_or_else(|| bad(1, "empty file".into()))?
        .split(',')
        .map(str::trim)
        .collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| bad(1, format!("no column '{name}'")))
    };
    let (id, seeds, gi, mv, loss) = (
        col("fact_id")?,
        col("seeds")?,
        col("goedel_index")?,
        col("move")?,
        col("loss_vs_best")?,
    );
    let pit_cols: Vec<usize> = (0..12)
        .map(|k| col(&format!("p{k}")))
        .collect::<Result<_, _>>()?;
    let mut facts = Vec::new();
    for (i, line) in lines.enumerate() {
        let lineno = i + 2;
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let get = |c: usize| -> Result<&str, VerifyError> {
            f.get(c)
                .copied()
                .ok_or_else(|| bad(lineno, "too few columns".into()))
        };
        let num = |c: usize| -> Result<i64, VerifyError> {
            let s = get(c)?;
            s.parse()
                .map_err(|_| bad(lineno, format!("'{s}' is not a number")))
        };
        let mut pits = [0u8; 12];
        for (k, &c) in pit_cols.iter().enumerate() {
            let v = num(c)?;
            if !(0..=48).contains(&v) {
                return Err(bad(lineno, format!("pit {k} holds {v} seeds")));
            }
            pits[k] = v as u8;
        }
        let mvv = num(mv)?;
        if !(0..6).contains(&mvv) {
            return Err(bad(lineno, format!("move {mvv} is not a pit 0..5")));
        }
        facts.push(Fact {
            id: get(id)?.to_string(),
            pits,
            seeds: num(seeds)? as u32,
            index: num(gi)? as u64,
            mv: mvv as u8,
            loss: num(loss)? as i32,
        });
    }
    Ok(facts)
}

/// The outcome of checking one fact.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum FactOutcome {
    /// Our tables give the recorded loss.
    Agrees,
    /// They do not.
    Disagrees {
        /// Why.
        reason: String,
    },
    /// A layer the fact needs is not in the folder.
    Skipped {
        /// The missing layer.
        layer: u32,
    },
}

/// Checks one fact against a database.
pub fn check_fact(db: &Database, f: &Fact) -> Result<FactOutcome, VerifyError> {
    let p = Position(f.pits);
    let n = p.seeds();
    if n != f.seeds {
        return Ok(FactOutcome::Disagrees {
            reason: format!("board holds {n} seeds, the fact says {}", f.seeds),
        });
    }
    if !p.is_indexable() {
        return Ok(FactOutcome::Disagrees {
            reason: "board has no Goedel number (opponent side full)".into(),
        });
    }
    if rank(&p) != f.index {
        return Ok(FactOutcome::Disagrees {
            reason: format!("Goedel index is {}, the fact says {}", rank(&p), f.index),
        });
    }
    let moves = match db.moves(&p) {
        Ok(m) => m,
        Err(ProbeError::MissingLayer { layer, .. }) => return Ok(FactOutcome::Skipped { layer }),
        Err(e) => return Err(e.into()),
    };
    let best = moves.iter().filter_map(|m| m.score).max();
    let played = moves[f.mv as usize].score;
    match (best, played) {
        (Some(b), Some(s)) if (b as i32 - s as i32) == f.loss => Ok(FactOutcome::Agrees),
        (Some(b), Some(s)) => Ok(FactOutcome::Disagrees {
            reason: format!(
                "move {} loses {} against the best move, the fact says {}",
                f.mv,
                b as i32 - s as i32,
                f.loss
            ),
        }),
        _ => Ok(FactOutcome::Disagrees {
            reason: format!("move {} is not legal here", f.mv),
        }),
    }
}

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
    /// Its `xxh3-64`, 16 lower-case hex digits.
    pub xxh3: String,
}

fn kind_name<S: serde::Serializer>(k: &Kind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.stem())
}

/// Reads a list of known-good checksums: a header line `layer,table,bytes,xxh3`
/// then one line per table; blank lines and lines starting with `#` are
/// skipped. Each table of a layer is listed at most once, with the layer's
/// size.
pub fn read_known_good(path: &Path) -> Result<Vec<KnownTable>, VerifyError> {
    let text = std::fs::read(path).at(path)?;
    let bad = |line: usize, reason: String| VerifyError::Csv {
        path: path.to_path_buf(),
        line,
        reason,
    };
    let text = String::from_utf8(text).map_err(|_| bad(1, "not UTF-8 text".into()))?;
    let mut rows = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut header = false;
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
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
            t => {
                return Err(bad(
                    lineno,
                    format!("'{t}' is not a table (scores, lower, upper)"),
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
        let xxh3 = f[3].to_ascii_lowercase();
        if xxh3.len() != 16 || !xxh3.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad(
                lineno,
                format!("'{}' is not an xxh3-64 (16 hex digits)", f[3]),
            ));
        }
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
    Ok(rows)
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

impl VerifyError {
    /// Whether the error says that a table is damaged (see
    /// [`ProbeError::is_damage`]), as opposed to bad input or I/O trouble.
    pub fn is_damage(&self) -> bool {
        match self {
            VerifyError::Probe(e) => e.is_damage(),
            VerifyError::Io(e) => e
                .source
                .get_ref()
                .is_some_and(|inner| inner.is::<CompressError>()),
            _ => false,
        }
    }
}

impl ChecksumReport {
    /// Tables that differ, are missing or are damaged.
    pub fn failures(&self) -> impl Iterator<Item = &TableCheck> {
        self.tables
            .iter()
            .filter(|t| t.outcome != TableOutcome::Equal)
    }
}

/// The file holding table `kind` of layer `n` in `dir`: the raw table, else
/// its compressed copy (`NAME.zst`); `None` when neither exists.
fn table_file(dir: &Path, kind: Kind, n: u32) -> Option<(PathBuf, bool)> {
    let raw = dir.join(kind.file_name(n));
    if raw.exists() {
        return Some((raw, false));
    }
    let zst = dir.join(crate::codec::file_name(&kind.file_name(n)));
    zst.exists().then_some((zst, true))
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
    known: &[KnownTable],
    layers: RangeInclusive<u32>,
) -> Result<ChecksumReport, VerifyError> {
    if !dir.is_dir() {
        return Err(ProbeError::NotAFolder(dir.to_path_buf()).into());
    }
    let manifest = Manifest::load(dir).map_err(ProbeError::from)?;
    let listed = |n: u32, kind: Kind| {
        manifest
            .as_ref()
            .and_then(|m| m.layer(n))
            .is_some_and(|l| l.files().any(|(k, _)| k == kind))
    };
    let held = |n: u32| {
        [Kind::Score, Kind::Lower, Kind::Upper]
            .iter()
            .any(|&k| table_file(dir, k, n).is_some())
            || manifest.as_ref().is_some_and(|m| m.layer(n).is_some())
    };
    let mut report = ChecksumReport::default();
    let mut covered = std::collections::BTreeSet::new();
    for k in known.iter().filter(|k| layers.contains(&k.layer)) {
        covered.insert(k.layer);
        if !held(k.layer) {
            if report.not_built.last() != Some(&k.layer) {
                report.not_built.push(k.layer);
            }
            continue;
        }
        let name = k.kind.file_name(k.layer);
        let Some((path, compressed)) = table_file(dir, k.kind, k.layer) else {
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
        let outcome = checksum_of(&path, compressed, k)?;
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

/// Size and checksum of one table file against its known-good row.
fn checksum_of(path: &Path, compressed: bool, k: &KnownTable) -> Result<TableOutcome, VerifyError> {
    if !compressed {
        let len = std::fs::metadata(path).at(path)?.len();
        if len != k.bytes {
            return Ok(TableOutcome::Differs {
                found: format!("{len} bytes, expected {}", k.bytes),
            });
        }
        let found = crate::table::checksum_file(path)?;
        return Ok(if found == k.xxh3 {
            TableOutcome::Equal
        } else {
            TableOutcome::Differs { found }
        });
    }
    let len = std::fs::metadata(path).at(path)?.len();
    let map = crate::table::Mapped::open(path, len).map_err(ProbeError::from)?;
    let table = match crate::codec::CompressedTable::parse(map) {
        Ok(t) => t,
        Err(e) => {
            return Ok(TableOutcome::Damaged {
                reason: e.to_string(),
            })
        }
    };
    let h = table.header();
    if h.kind != k.kind || h.layer != k.layer {
        return Ok(TableOutcome::Damaged {
            reason: format!(
                "it holds {}, not {}",
                h.kind.file_name(h.layer),
                k.kind.file_name(k.layer)
            ),
        });
    }
    let mut reader = table.into_reader();
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; STEP];
    let mut total = 0u64;
    loop {
        let got = match read_full(&mut reader, &mut buf, path) {
            Ok(g) => g,
            Err(e) => match damaged(e) {
                VerifyError::Probe(ProbeError::Compressed(Damaged { source, .. })) => {
                    return Ok(TableOutcome::Damaged {
                        reason: source.to_string(),
                    })
                }
                other => return Err(other),
            },
        };
        if got == 0 {
            break;
        }
        hasher.update(&buf[..got]);
        total += got as u64;
    }
    let found = format!("{:016x}", hasher.digest());
    Ok(if total != k.bytes {
        TableOutcome::Differs {
            found: format!("{total} bytes, expected {}", k.bytes),
        }
    } else if found == k.xxh3 {
        TableOutcome::Equal
    } else {
        TableOutcome::Differs { found }
    })
}

//! Python bindings of `awari_egdb`: exact endgame scores of Awari (Oware)
//! from a folder of tables, as the Python module `awari_egdb`.
//!
//! Every board is 12 pit counts, the mover's pits A..F (0..5) first, or a
//! position in the notation (`4,4,4,4,4,4/4,4,4,4,4,4/S/0,0`). No user
//! input reaches an `unwrap`: a bad board is a `ValueError`, a missing
//! folder or layer a `FileNotFoundError`, a damaged table a
//! `DamagedTable` (a subclass of `OSError`) naming the file.

use ::awari_egdb::error::IoError;
use ::awari_egdb::game::{Board, Side};
use ::awari_egdb::index::{self, IndexError};
use ::awari_egdb::probe::{Database as Db, Distance, PvEnd};
use ::awari_egdb::rules::{Position, RulesError};
use ::awari_egdb::store::StoreError;
use ::awari_egdb::{Error, ErrorKind};
use numpy::{PyArray1, PyReadonlyArray2};
use pyo3::exceptions::{
    PyBlockingIOError, PyFileNotFoundError, PyMemoryError, PyNotADirectoryError, PyOSError,
    PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

pyo3::create_exception!(
    awari_egdb,
    DamagedTable,
    PyOSError,
    "A table of the folder is damaged (wrong size or checksum, or a value no \
     score of its layer can take). `path` names the file; rebuilding the \
     layer repairs it."
);

/// The library's error as a Python exception.
fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let msg = e.to_string();
    let path = e.path().map(|p| p.display().to_string());
    let not_found = matches!(
        e.cause(),
        Some(
            StoreError::MissingLayer { .. } | StoreError::NoSuchFolder(_) | StoreError::NoTables(_)
        )
    ) || e
        .cause::<IoError>()
        .is_some_and(|io| io.source.kind() == std::io::ErrorKind::NotFound);
    match e.cause() {
        _ if not_found => PyFileNotFoundError::new_err(msg),
        Some(StoreError::NotAFolder(_)) => PyNotADirectoryError::new_err(msg),
        _ => match e.kind() {
            ErrorKind::Damaged => {
                let err = DamagedTable::new_err(msg);
                // The file, as an attribute; a failure to set it leaves the message.
                let _ = err.value(py).setattr("path", path);
                err
            }
            ErrorKind::Io => PyOSError::new_err(msg),
            ErrorKind::Memory => PyMemoryError::new_err(msg),
            ErrorKind::Busy => PyBlockingIOError::new_err(msg),
            ErrorKind::Stopped => PyRuntimeError::new_err(msg),
            _ => PyValueError::new_err(msg),
        },
    }
}

/// A board from Python: 12 pit counts (the mover's A..F first), checked
/// pit by pit as every front end checks them (`Position::from_counts`), or
/// a position in the notation (seen from its side to move), then also as
/// the players' board.
fn board_side(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<(Position, Option<Board>)> {
    if let Ok(text) = obj.extract::<String>() {
        let b = Board::from_notation(&text).map_err(|e| to_py(py, e))?;
        return Ok((b.position(), Some(b)));
    }
    if obj.is_instance_of::<pyo3::types::PyBytes>() {
        return Err(PyValueError::new_err(
            "a board is a sequence of 12 pit counts or a position's notation, not bytes",
        ));
    }
    let n = obj.len().map_err(|_| {
        PyValueError::new_err(
            "a board is a sequence of 12 pit counts (ints from 0 to 48) or a position's \
             notation (e.g. \"4,4,4,4,4,4/4,4,4,4,4,4/S/0,0\")",
        )
    })?;
    let mut counts = Vec::with_capacity(n);
    for k in 0..n {
        let item = obj.get_item(k)?;
        match item.extract::<i64>() {
            Ok(v) => counts.push(v),
            // A value that is no int is named only when the count is right.
            Err(_) if n == 12 => {
                let value = item.str().map_or_else(|_| "?".into(), |s| s.to_string());
                let e = RulesError::NotASeedCount {
                    pit: Position::label(k),
                    value,
                };
                return Err(to_py(py, e.into()));
            }
            Err(_) => counts.push(0),
        }
    }
    let p = Position::from_counts(&counts).map_err(|e| to_py(py, e))?;
    Ok((p, None))
}

/// 12 pit counts from Python ([`board_side`]'s board).
fn pits_of(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<[u8; 12]> {
    Ok(board_side(py, obj)?.0 .0)
}

/// Any board a probe answers: at most 48 seeds, not 47 (a board without a
/// Goedel number is answered from its moves), with its players' board
/// where a notation gave it.
fn probe_board(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<(Position, Option<Board>)> {
    let (p, board) = board_side(py, obj)?;
    if p.seeds() == 47 {
        return Err(to_py(py, IndexError::Layer47.into()));
    }
    Ok((p, board))
}

/// [`probe_board`]'s position.
fn board_of(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Position> {
    Ok(probe_board(py, obj)?.0)
}

/// A board that has a Goedel number (at most 48 seeds, some opponent pit
/// empty).
fn position_of(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Position> {
    Position::indexable(pits_of(py, obj)?).map_err(|e| to_py(py, e))
}

/// A count given from Python, checked: a `ValueError` naming `what` for a
/// negative one (not pyo3's `OverflowError`).
fn count<T: TryFrom<i64>>(what: &str, v: i64) -> PyResult<T> {
    T::try_from(v).map_err(|_| PyValueError::new_err(format!("{what} must be at least 0, not {v}")))
}

/// Bytes as a list of ints (a `Vec<u8>` would become `bytes`).
fn ints(b: &[u8]) -> Vec<u32> {
    b.iter().map(|&x| x as u32).collect()
}

/// A distance as Python sees it: the plies, or "endless".
fn distance_obj(py: Python<'_>, d: Distance) -> PyResult<Bound<'_, PyAny>> {
    Ok(match d {
        Distance::Plies(k) => k.into_pyobject(py)?.into_any(),
        Distance::Endless => "endless".into_pyobject(py)?.into_any(),
    })
}

fn end_name(end: PvEnd) -> &'static str {
    match end {
        PvEnd::GameOver => "game_over",
        PvEnd::Repetition => "repetition",
        PvEnd::Limit => "limit",
    }
}

/// Exact scores from a folder of tables (one built by `awari build`, or a
/// VU dataset folder of `scores.N` files).
///
/// A board is any sequence of 12 ints, the mover's pits 0..5 (A..F)
/// first, then the opponent's 6..11. A score is the number of seeds the
/// side to move captures from here on, minus the opponent's, with best
/// play by both. Layers are opened on first use and read with `pread`;
/// the object is safe to share between threads, and `scores` releases the
/// GIL while it probes.
#[pyclass(frozen, module = "awari_egdb")]
struct Database {
    /// `None` once closed.
    db: std::sync::RwLock<Option<Db>>,
    path: String,
}

impl Database {
    /// Runs `f` on the open database; a `ValueError` once it is closed.
    fn with<T>(&self, f: impl FnOnce(&Db) -> PyResult<T>) -> PyResult<T> {
        let guard = self.db.read().unwrap_or_else(|e| e.into_inner());
        match guard.as_ref() {
            Some(db) => f(db),
            None => Err(PyValueError::new_err(format!(
                "the database of {:?} is closed",
                self.path
            ))),
        }
    }
}

#[pymethods]
impl Database {
    /// Opens the folder `path`. Raises FileNotFoundError when it does not
    /// exist or holds no tables, DamagedTable for a damaged manifest.
    ///
    /// The tables are read under the rule set the folder names: its
    /// manifest's, else the one its compressed files' headers name (files
    /// naming different ones raise ValueError). Raw tables without manifest
    /// (a VU folder) name none: read as awari's, `rules_assumed` then
    /// True. `rules="awale"` says which rule set the tables follow: taken
    /// for raw tables without manifest, a ValueError naming both where the
    /// folder names another.
    ///
    /// By default the tables are read with `pread`: a table cut short
    /// while open is an error, never a crash. With `mapped=True` they are
    /// mapped into memory instead (batch probes several times faster), and
    /// the caller promises that no table of the folder is truncated or
    /// modified while the Database lives: a mapped page gone from its file
    /// kills the process (SIGBUS), the contract of the library's
    /// `Database::open_mapped` and the C API's `awari_open_mapped`.
    #[new]
    #[pyo3(signature = (path, *, mapped = false, rules = None))]
    fn new(
        py: Python<'_>,
        path: std::path::PathBuf,
        mapped: bool,
        rules: Option<&str>,
    ) -> PyResult<Self> {
        let rules = rules
            .map(::awari_egdb::rules::Rules::by_name)
            .transpose()
            .map_err(|e| to_py(py, e))?;
        let db = if mapped {
            // SAFETY: the caller asked for the mapping and its contract
            // (documented above): no table is truncated while mapped.
            unsafe { Db::open_mapped(&path) }
        } else {
            Db::open(&path)
        }
        .and_then(|db| match &rules {
            Some(r) => db.with_rules(r),
            None => Ok(db),
        })
        .map_err(|e| to_py(py, e))?;
        Ok(Database {
            db: std::sync::RwLock::new(Some(db)),
            path: path.display().to_string(),
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        // Python's own quoting of the path.
        let path = pyo3::types::PyString::new(py, &self.path)
            .repr()?
            .to_string();
        let guard = self.db.read().unwrap_or_else(|e| e.into_inner());
        Ok(match guard.as_ref() {
            Some(db) => format!(
                "<awari_egdb.Database path={path} rules='{}'>",
                db.rules().name
            ),
            None => format!("<awari_egdb.Database path={path} closed>"),
        })
    }

    /// Closes the folder's tables (their files and mappings); any later
    /// probe raises ValueError. Closing twice is harmless. A `with
    /// Database(...) as db:` block closes it at its end.
    fn close(&self) {
        let mut guard = self.db.write().unwrap_or_else(|e| e.into_inner());
        *guard = None;
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.db.read().unwrap_or_else(|e| e.into_inner()).is_none()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    /// The folder.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// The rule set of the tables: "awari", "abapa", "olympiad" or "awale".
    #[getter]
    fn rules(&self) -> PyResult<&'static str> {
        self.with(|db| Ok(db.rules().name))
    }

    /// Whether nothing named the rule set: raw tables without manifest (a
    /// VU folder) read as awari's; `Database(path, rules=...)` names it.
    #[getter]
    fn rules_assumed(&self) -> PyResult<bool> {
        self.with(|db| Ok(db.rules_assumed()))
    }

    /// The layers (seed counts) the folder holds, ascending.
    fn layers(&self) -> PyResult<Vec<u32>> {
        self.with(|db| Ok(db.layers()))
    }

    /// The exact score of a board for the side to move.
    ///
    /// A board without a Goedel number (every opponent pit holding seeds,
    /// as at the opening) is answered from its moves: its best move's
    /// worth. Raises ValueError for a bad board (not 12 ints from 0 to 48 or
    /// a notation, over 48 seeds, 47 seeds), FileNotFoundError for a layer
    /// the folder lacks, DamagedTable for a damaged table.
    fn score(&self, py: Python<'_>, pits: &Bound<'_, PyAny>) -> PyResult<i8> {
        let p = board_of(py, pits)?;
        self.with(|db| db.score(&p).map_err(|e| to_py(py, e)))
    }

    /// The scores of many boards: `boards` is an (N, 12) array of ints
    /// (any integer dtype, or a list of lists); returns an int8 numpy
    /// array of N scores, boards without a Goedel number answered from
    /// their moves as by `score`. The GIL is released while the tables are
    /// read. By default a board whose layer the folder lacks fails the
    /// whole batch (FileNotFoundError); with `missing=V` (an int, e.g.
    /// -128, which no score takes) such boards get V instead: "not
    /// available".
    #[pyo3(signature = (boards, *, missing = None))]
    fn scores<'py>(
        &self,
        py: Python<'py>,
        boards: &Bound<'py, PyAny>,
        missing: Option<i8>,
    ) -> PyResult<Bound<'py, PyArray1<i8>>> {
        let np = py.import("numpy")?;
        let arr = np.call_method1("asarray", (boards,))?;
        let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
        let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
        if !matches!(kind.as_str(), "u" | "i" | "b") {
            return Err(PyValueError::new_err(format!(
                "boards must be an array of ints, not of dtype kind '{kind}'"
            )));
        }
        if shape.len() != 2 || shape[1] != 12 {
            return Err(PyValueError::new_err(format!(
                "boards must have shape (N, 12), not {shape:?}"
            )));
        }
        let rows = shape[0];
        let mut ps = Vec::with_capacity(rows);
        // Each board checked pit by pit, as `score` checks one.
        let check = |i: usize, p: ::awari_egdb::Result<Position>| {
            let p = p.map_err(|e| PyValueError::new_err(format!("board {i}: {e}")))?;
            if p.seeds() == 47 {
                return Err(PyValueError::new_err(format!(
                    "board {i}: {}",
                    IndexError::Layer47
                )));
            }
            Ok(p)
        };
        if kind == "u"
            && arr
                .getattr("dtype")?
                .getattr("itemsize")?
                .extract::<usize>()?
                == 1
        {
            let a: PyReadonlyArray2<'py, u8> = arr.extract()?;
            for (i, row) in a.as_array().outer_iter().enumerate() {
                let mut pits = [0u8; 12];
                for (d, &s) in pits.iter_mut().zip(row.iter()) {
                    *d = s;
                }
                ps.push(check(i, Position::new(pits))?);
            }
        } else {
            let a = arr.call_method1("astype", (np.getattr("int64")?,))?;
            let a: PyReadonlyArray2<'py, i64> = a.extract()?;
            for (i, row) in a.as_array().outer_iter().enumerate() {
                let counts: Vec<i64> = row.iter().copied().collect();
                ps.push(check(i, Position::from_counts(&counts))?);
            }
        }
        let out = self.with(|db| {
            py.detach(|| match missing {
                None => {
                    let mut out = vec![0i8; rows];
                    db.scores(&ps, &mut out).map(|_| out)
                }
                Some(v) => {
                    let mut out = vec![None; rows];
                    db.scores_where_built(&ps, &mut out)
                        .map(|_| out.into_iter().map(|s| s.unwrap_or(v)).collect())
                }
            })
            .map_err(|e| to_py(py, e))
        })?;
        Ok(PyArray1::from_vec(py, out))
    }

    /// The cycle envelope of a board, (lower, upper), where the folder
    /// holds it (built with the envelope); else None. The score is
    /// independent of the cycle rule when lower == upper. A board without
    /// a Goedel number is answered from its moves (the best of their
    /// envelopes).
    fn envelope(&self, py: Python<'_>, pits: &Bound<'_, PyAny>) -> PyResult<Option<(i8, i8)>> {
        let p = board_of(py, pits)?;
        let env = self.with(|db| db.envelope(&p).map_err(|e| to_py(py, e)))?;
        Ok(env.map(|e| (e.lower, e.upper)))
    }

    /// The distance of a board to the next capture when both sides keep
    /// the score: the plies (0: the game is over), "endless" when only
    /// endless play keeps the score, None when the folder has no distance
    /// table for its layer (built without it, or a VU folder: best play by
    /// `best` may then repeat a position before the capture the score
    /// needs).
    fn distance<'py>(
        &self,
        py: Python<'py>,
        pits: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let p = board_of(py, pits)?;
        let d = self.with(|db| db.distance(&p).map_err(|e| to_py(py, e)))?;
        d.map(|d| distance_obj(py, d)).transpose()
    }

    /// The six pits of the mover as moves: a list of 6 dicts with `pit`
    /// (0..5), `label` ("A".."F"; "a".."f" for a notation with North to
    /// move, as `play` writes North's moves), `legal`, `captures` (seeds the move
    /// captures), `worth` (the move's score for the mover, None for an
    /// empty pit or an illegal move), `distance` (how far the next capture
    /// is after the move, this move counted, as `distance` gives it; None
    /// for an empty pit or an illegal move, or without a distance table)
    /// and `child` (the board after a legal move, from the opponent's
    /// side, else None).
    fn moves<'py>(
        &self,
        py: Python<'py>,
        pits: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let (p, board) = probe_board(py, pits)?;
        let side = board.map_or(Side::South, |b| b.to_move);
        let moves = self.with(|db| db.moves(&p).map_err(|e| to_py(py, e)))?;
        moves
            .iter()
            .map(|m| {
                let d = PyDict::new(py);
                d.set_item("pit", m.pit)?;
                d.set_item("label", side.label(m.pit as usize).to_string())?;
                d.set_item("legal", m.legal)?;
                d.set_item("captures", m.captures)?;
                d.set_item("worth", m.score)?;
                d.set_item(
                    "distance",
                    m.distance.map(|x| distance_obj(py, x)).transpose()?,
                )?;
                d.set_item("child", m.child.filter(|_| m.legal).map(|c| ints(&c.0)))?;
                Ok(d)
            })
            .collect()
    }

    /// The best pits (0..5): the legal moves of the best worth and, where
    /// the folder has the distance, of the best distance among them (the
    /// least when the score is 0 or more, the greatest below), so that
    /// play by them reaches the score; empty when the game is over.
    fn best(&self, py: Python<'_>, pits: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
        let p = board_of(py, pits)?;
        let best = self.with(|db| db.best_moves(&p).map_err(|e| to_py(py, e)))?;
        Ok(ints(&best))
    }

    /// The line of best play (the lowest best pit at each step) of at most
    /// `n` moves: a dict with `steps` (a list of dicts: `pits`, the board
    /// before the move; `score`, its score; `distance`, its distance as
    /// `distance` gives it; `pit`, the pit played; `captures`), `last` (the
    /// board reached) and `end`, why the line stops: "game_over",
    /// "repetition" (with the distance, only where the score is endless
    /// play's) or "limit".
    #[pyo3(signature = (pits, n = 100))]
    fn pv<'py>(
        &self,
        py: Python<'py>,
        pits: &Bound<'py, PyAny>,
        n: i64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let p = board_of(py, pits)?;
        let n: usize = count("n", n)?;
        let line = self.with(|db| db.principal_variation(&p, n).map_err(|e| to_py(py, e)))?;
        let steps = PyList::empty(py);
        for s in &line.steps {
            let d = PyDict::new(py);
            d.set_item("pits", ints(&s.position.0))?;
            d.set_item("score", s.score)?;
            d.set_item(
                "distance",
                s.distance.map(|x| distance_obj(py, x)).transpose()?,
            )?;
            d.set_item("pit", s.pit)?;
            d.set_item("captures", s.captures)?;
            steps.append(d)?;
        }
        let out = PyDict::new(py);
        out.set_item("steps", steps)?;
        out.set_item("last", ints(&line.last.0))?;
        out.set_item("end", end_name(line.end))?;
        Ok(out)
    }

    /// Everything about one board as a dict, the object `awari query
    /// --json` prints (rules, pits, seeds, index, score, lower, upper,
    /// pinned, moves, best, and with `pv` a line of at most `pv` moves).
    /// A board without a Goedel number (every opponent pit holding seeds,
    /// as at the opening) is answered from its moves.
    #[pyo3(signature = (pits, pv = None))]
    fn answer<'py>(
        &self,
        py: Python<'py>,
        pits: &Bound<'py, PyAny>,
        pv: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (p, board) = probe_board(py, pits)?;
        let pv = pv.map(|n| count::<usize>("pv", n)).transpose()?;
        let a = self.with(|db| {
            match &board {
                Some(b) => b.answer(db, pv),
                None => db.answer(&p, pv),
            }
            .map_err(|e| to_py(py, e))
        })?;
        let text = serde_json::to_string(&a)
            .map_err(|e| PyRuntimeError::new_err(format!("cannot encode the answer: {e}")))?;
        py.import("json")?.call_method1("loads", (text,))
    }

    /// The Goedel number of a board within its layer (see `index`).
    fn index(&self, py: Python<'_>, pits: &Bound<'_, PyAny>) -> PyResult<u64> {
        self.with(|_| Ok(index::rank(&position_of(py, pits)?)))
    }
}

/// The Goedel number of a board within its layer (its seed count): the
/// entry of `scores.N` that holds its score. Raises ValueError for a board
/// that has none.
#[pyfunction(name = "index")]
fn index_of(py: Python<'_>, pits: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(index::rank(&position_of(py, pits)?))
}

/// The board with Goedel number `index` in layer `seeds`, as a list of 12
/// ints. Raises ValueError for a layer outside 0..=48 or 47 (no board of
/// 47 seeds has a table), or an index outside the layer.
#[pyfunction]
fn position(py: Python<'_>, seeds: i64, index: i64) -> PyResult<Vec<u32>> {
    let n: u32 = count("seeds", seeds)?;
    let g: u64 = count("index", index)?;
    if n == 47 {
        return Err(to_py(py, IndexError::Layer47.into()));
    }
    index::unrank(n, g)
        .map(|p| ints(&p.0))
        .map_err(|e| to_py(py, e))
}

/// A position in the notation (`4,4,4,4,4,4/4,4,4,4,4,4/S/0,0`: South's
/// pits A..F, North's a..f, the side to move, the seeds captured by South
/// and North; the last field may be left out, the seeds off the board then
/// split evenly) as a dict: `pits` (12 ints, South's first), `to_move`
/// ("S" or "N"), `captured` (South's, North's) and `board` (the 12 pits
/// from the side to move, as the other calls take them). Raises ValueError
/// saying what is wrong.
#[pyfunction]
fn parse_notation<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
    let b = Board::from_notation(text).map_err(|e| to_py(py, e))?;
    let d = PyDict::new(py);
    d.set_item("pits", ints(&b.pits))?;
    d.set_item("to_move", side_name(b.to_move))?;
    d.set_item("captured", (b.captured[0], b.captured[1]))?;
    d.set_item("board", ints(&b.position().0))?;
    Ok(d)
}

/// The notation of a position: `pits` (12 ints, South's A..F first, then
/// North's a..f), `to_move` ("S" or "N") and `captured` (South's,
/// North's; by default the seeds off the board split evenly).
#[pyfunction]
#[pyo3(signature = (pits, to_move = "S", captured = None))]
fn notation(
    py: Python<'_>,
    pits: &Bound<'_, PyAny>,
    to_move: &str,
    captured: Option<(i64, i64)>,
) -> PyResult<String> {
    if pits.extract::<String>().is_ok() {
        return Err(PyValueError::new_err("pits: 12 ints, South's A..F first"));
    }
    let pits = pits_of(py, pits)?;
    let captured = captured
        .map(|(s, n)| Ok::<_, PyErr>([count("captured", s)?, count("captured", n)?]))
        .transpose()?;
    let mut b = Board::new(pits, captured).map_err(|e| to_py(py, e))?;
    b.to_move = match to_move {
        "S" | "s" | "South" => Side::South,
        "N" | "n" | "North" => Side::North,
        other => {
            return Err(PyValueError::new_err(format!(
                "to_move '{other}': \"S\" (South) or \"N\" (North)"
            )))
        }
    };
    Ok(b.notation())
}

fn side_name(s: Side) -> &'static str {
    match s {
        Side::South => "S",
        Side::North => "N",
    }
}

/// Exact endgame scores for Awari (Oware): `Database(folder)` probes a
/// folder of tables built by `awari build` (or a VU dataset folder).
#[pymodule]
#[pyo3(name = "_native")]
fn py_awari_egdb(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Database>()?;
    m.add("DamagedTable", m.py().get_type::<DamagedTable>())?;
    m.add_function(wrap_pyfunction!(index_of, m)?)?;
    m.add_function(wrap_pyfunction!(position, m)?)?;
    m.add_function(wrap_pyfunction!(parse_notation, m)?)?;
    m.add_function(wrap_pyfunction!(notation, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

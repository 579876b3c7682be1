//! The C API: a folder of tables opened once and probed from C, C++ or any
//! language that calls C (`include/awari_egdb.h`; the library is built as
//! `libawari_egdb.so` and `libawari_egdb.a` beside the Rust library).
//!
//! Every function returns an [`awari_status`] code (0 on success) and
//! writes its results through pointers the caller owns; on failure
//! [`awari_last_error`] gives the message, per thread. A handle is
//! [`probe::Database`](egdb::probe::Database) itself: any number of
//! threads may probe one handle at once. No call panics across the
//! boundary: a bug inside is `AWARI_INTERNAL`. Boards are 12 pit counts
//! from the side to move's view (its pits 0..5 first), as everywhere in
//! this crate.

#![allow(non_camel_case_types, clippy::missing_safety_doc)]

use egdb::error::{Error, ErrorKind};
use egdb::probe::Database;
use egdb::rules::Position;
use egdb::store::StoreError;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A status code of the C API.
pub type awari_status = c_int;
/// Success.
pub const AWARI_OK: awari_status = 0;
/// Bad input: a board the tables cannot take, a null pointer, a bad path.
pub const AWARI_BAD_INPUT: awari_status = 1;
/// A layer the folder does not hold.
pub const AWARI_NOT_BUILT: awari_status = 2;
/// A damaged table (named in the message).
pub const AWARI_DAMAGED: awari_status = 3;
/// The operating system failed a file operation.
pub const AWARI_IO: awari_status = 4;
/// A bug inside the library (it did not cross into the caller).
pub const AWARI_INTERNAL: awari_status = 5;

/// One of the mover's six pits as a move.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct awari_move {
    /// The pit, 0..5.
    pub pit: u8,
    /// 1 when the move is legal, else 0 (an empty pit, or illegal).
    pub legal: u8,
    /// Seeds it captures.
    pub captures: u8,
    /// Its exact worth for the mover (only when `legal`).
    pub worth: i8,
}

/// An open folder of tables.
pub struct awari_db {
    db: Database,
    rules: CString,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

#[cold]
#[inline(never)]
fn fail(code: awari_status, message: String) -> awari_status {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
    code
}

#[cold]
#[inline(never)]
fn error(e: Error) -> awari_status {
    let code = match (e.cause(), e.kind()) {
        (Some(StoreError::MissingLayer { .. }), _) => AWARI_NOT_BUILT,
        (_, ErrorKind::Input) => AWARI_BAD_INPUT,
        (_, ErrorKind::Damaged) => AWARI_DAMAGED,
        (_, ErrorKind::Io) => AWARI_IO,
        _ => AWARI_INTERNAL,
    };
    fail(code, e.to_string())
}

/// Runs `f`, turning a panic into `AWARI_INTERNAL`.
fn guard(f: impl FnOnce() -> awari_status) -> awari_status {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        fail(
            AWARI_INTERNAL,
            "a bug inside awari-egdb (please report it)".into(),
        )
    })
}

/// The board at `pits`, or why not.
#[inline]
unsafe fn board(pits: *const u8) -> Result<Position, awari_status> {
    if pits.is_null() {
        return Err(fail(AWARI_BAD_INPUT, "pits is a null pointer".into()));
    }
    let mut b = [0u8; 12];
    b.copy_from_slice(std::slice::from_raw_parts(pits, 12));
    // Checked pit by pit, in the words of every front end.
    Position::new(b).map_err(error)
}

/// Opens the folder at `path` (UTF-8, NUL-terminated) into `*out`; the
/// tables are read with `pread` (a table cut short while open is an
/// error, never a crash).
#[no_mangle]
pub unsafe extern "C" fn awari_open(path: *const c_char, out: *mut *mut awari_db) -> awari_status {
    guard(|| open_with(path, out, |dir| Database::open(dir)))
}

/// [`awari_open`] with the tables mapped into memory: probes at memory
/// speed. The caller promises what [`Database::open_mapped`] asks: no
/// table of the folder is truncated or modified while the handle is open
/// (a mapped page gone from its file kills the process with `SIGBUS`).
#[no_mangle]
pub unsafe extern "C" fn awari_open_mapped(
    path: *const c_char,
    out: *mut *mut awari_db,
) -> awari_status {
    // SAFETY: the caller's promise, in the function's contract.
    guard(|| open_with(path, out, |dir| unsafe { Database::open_mapped(dir) }))
}

unsafe fn open_with(
    path: *const c_char,
    out: *mut *mut awari_db,
    open: impl FnOnce(&str) -> egdb::Result<Database>,
) -> awari_status {
    if path.is_null() || out.is_null() {
        return fail(AWARI_BAD_INPUT, "a null pointer".into());
    }
    let Ok(dir) = CStr::from_ptr(path).to_str() else {
        return fail(AWARI_BAD_INPUT, "the path is not UTF-8".into());
    };
    match open(dir) {
        Ok(db) => {
            let rules = CString::new(db.rules().name).unwrap_or_default();
            *out = Box::into_raw(Box::new(awari_db { db, rules }));
            AWARI_OK
        }
        Err(e) => error(e),
    }
}

/// Closes a handle of [`awari_open`] (null is ignored).
#[no_mangle]
pub unsafe extern "C" fn awari_close(db: *mut awari_db) {
    if !db.is_null() {
        drop(Box::from_raw(db));
    }
}

/// The folder's rule set (`"awari"`, `"abapa"`, ...), valid while the
/// handle is open.
#[no_mangle]
pub unsafe extern "C" fn awari_rules(db: *const awari_db) -> *const c_char {
    match db.as_ref() {
        Some(d) => d.rules.as_ptr(),
        None => c"".as_ptr(),
    }
}

/// The part every one-board call shares, under the panic guard: the
/// handle and the output pointer checked (not null), the board read, then
/// `probe(database, board, out)`, its error mapped to a status.
#[inline(always)]
unsafe fn one_board<T>(
    db: *const awari_db,
    pits: *const u8,
    out: *mut T,
    probe: impl FnOnce(&Database, &Position, *mut T) -> Result<(), Error>,
) -> awari_status {
    guard(|| {
        let (Some(d), false) = (db.as_ref(), out.is_null()) else {
            return fail(AWARI_BAD_INPUT, "a null pointer".into());
        };
        let p = match board(pits) {
            Ok(p) => p,
            Err(code) => return code,
        };
        match probe(&d.db, &p, out) {
            Ok(()) => AWARI_OK,
            Err(e) => error(e),
        }
    })
}

/// The exact score of the board `pits[12]` for the side to move.
#[no_mangle]
pub unsafe extern "C" fn awari_score(
    db: *const awari_db,
    pits: *const u8,
    score: *mut i8,
) -> awari_status {
    one_board(db, pits, score, |d, p, out| {
        *out = d.score(p)?;
        Ok(())
    })
}

/// The six pits of the board `pits[12]` as moves, into `moves[6]`.
#[no_mangle]
pub unsafe extern "C" fn awari_moves(
    db: *const awari_db,
    pits: *const u8,
    moves: *mut awari_move,
) -> awari_status {
    one_board(db, pits, moves, |d, p, moves| {
        let ms = d.moves(p)?;
        // SAFETY: the caller gives room for 6 moves at `moves`.
        let out = std::slice::from_raw_parts_mut(moves, 6);
        for (o, m) in out.iter_mut().zip(ms) {
            *o = awari_move {
                pit: m.pit,
                legal: u8::from(m.legal),
                captures: m.captures,
                worth: m.score.unwrap_or(0),
            };
        }
        Ok(())
    })
}

/// A best move of the board `pits[12]` into `*pit` (of best worth, then,
/// where the folder has the distance, of best distance, so that play by
/// it reaches the score; the lowest pit among equals), or -1 when the
/// side to move has no move (the game is over).
#[no_mangle]
pub unsafe extern "C" fn awari_best_move(
    db: *const awari_db,
    pits: *const u8,
    pit: *mut c_int,
) -> awari_status {
    one_board(db, pits, pit, |d, p, out| {
        *out = d.best_moves(p)?.first().map_or(-1, |&b| c_int::from(b));
        Ok(())
    })
}

/// The distance of the board `pits[12]` to the next capture when both
/// sides keep the score, into `*plies`: the plies (0: the game is over),
/// -1 when only endless play keeps the score, -2 when the folder has no
/// distance table for its layer (built without it, or a VU folder).
#[no_mangle]
pub unsafe extern "C" fn awari_distance(
    db: *const awari_db,
    pits: *const u8,
    plies: *mut c_int,
) -> awari_status {
    use egdb::probe::Distance;
    one_board(db, pits, plies, |d, p, out| {
        *out = match d.distance(p)? {
            Some(Distance::Plies(k)) => c_int::from(k),
            Some(Distance::Endless) => -1,
            None => -2,
        };
        Ok(())
    })
}

/// The scores of `count` boards (`pits[12 * count]`, one after another)
/// into `scores[count]`: the batch probe, much faster than one call per
/// board on random boards. Stops at the first board that fails.
#[no_mangle]
pub unsafe extern "C" fn awari_scores(
    db: *const awari_db,
    pits: *const u8,
    count: usize,
    scores: *mut i8,
) -> awari_status {
    awari_scores_where_built(db, pits, count, scores, std::ptr::null_mut())
}

/// [`awari_scores`], where a board whose layer the folder does not hold
/// is "not available" instead of failing the batch: `missing[i]` is 1 for
/// such a board (its score 0), else 0. With `missing` null, it is
/// `awari_scores`.
#[no_mangle]
pub unsafe extern "C" fn awari_scores_where_built(
    db: *const awari_db,
    pits: *const u8,
    count: usize,
    scores: *mut i8,
    missing: *mut u8,
) -> awari_status {
    guard(|| {
        let Some(d) = db.as_ref() else {
            return fail(AWARI_BAD_INPUT, "a null pointer".into());
        };
        if count == 0 {
            return AWARI_OK;
        }
        if pits.is_null() || scores.is_null() {
            return fail(AWARI_BAD_INPUT, "a null pointer".into());
        }
        let Some(len) = count.checked_mul(12) else {
            return fail(AWARI_BAD_INPUT, "count is too large".into());
        };
        let raw = std::slice::from_raw_parts(pits, len);
        let mut boards = Vec::with_capacity(count);
        for (i, c) in raw.chunks_exact(12).enumerate() {
            match Position::new(c.try_into().expect("12 pits")) {
                Ok(p) => boards.push(p),
                Err(e) => return fail(AWARI_BAD_INPUT, format!("board {i}: {e}")),
            }
        }
        let out = std::slice::from_raw_parts_mut(scores, count);
        if missing.is_null() {
            return match d.db.scores(&boards, out) {
                Ok(()) => AWARI_OK,
                Err(e) => error(e),
            };
        }
        let mut got = vec![None; count];
        match d.db.scores_where_built(&boards, &mut got) {
            Ok(_) => {
                let missing = std::slice::from_raw_parts_mut(missing, count);
                for ((o, m), g) in out.iter_mut().zip(missing.iter_mut()).zip(got) {
                    *m = u8::from(g.is_none());
                    *o = g.unwrap_or(0);
                }
                AWARI_OK
            }
            Err(e) => error(e),
        }
    })
}

/// The message of the last failed call on this thread (empty if none),
/// valid until the next failed call on this thread.
#[no_mangle]
pub extern "C" fn awari_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

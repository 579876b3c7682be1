//! The routes the page plays and explores with: a game from a position
//! and the moves played since (`/api/v1/game`: the board now, whether and
//! how the rules ended the game, every move's worth and whether it is
//! pinned, the line of best play, or in words why the tables cannot score
//! it), and a random position of a layer with a chosen result
//! (`/api/v1/random`). The rules of the end are the library's
//! ([`Game::end`], [`Game::result`]): the page does not repeat them.

use super::reply::{blocking, params, pv_count, ApiError};
use super::State;
use awari_egdb::game::{Board, Game, Side};
use awari_egdb::index::{layer_size, unrank};
use awari_egdb::probe::{Answer, Database, PvEnd};
use awari_egdb::store::StoreError;
use axum::extract::{RawQuery, State as With};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::sync::Arc;

/// The most moves a game may carry.
pub const MAX_MOVES: usize = 2_000;
/// Random Goedel numbers tried for one `/api/v1/random`.
pub const RANDOM_TRIES: u64 = 20_000;

type Shared = With<Arc<State>>;
type Reply = Result<Response, ApiError>;

/// A board in the notation, or a 400 that says in players' words why not.
pub fn board_of(text: &str) -> Result<Board, ApiError> {
    Board::from_notation(text).map_err(|e| ApiError::bad(e.to_string()))
}

/// The largest layer the folder holds, as players read it.
pub fn holds(db: &Database) -> String {
    match db.layers().iter().max() {
        Some(m) => format!("this folder holds layers up to {m} seeds"),
        None => "this folder holds no layer".to_string(),
    }
}

/// Why the tables cannot score the board `b`, in words.
fn unknown(db: &Database, b: &Board) -> String {
    let n = b.seeds();
    let start = if *b == Board::opening() {
        "The opening (48 seeds on the board)".to_string()
    } else {
        format!("A position of {n} seeds")
    };
    format!(
        "{start} is beyond the tables: {}. The legal moves are shown without their worth; \
         play on (captures bring the game down) or pick a random position.",
        holds(db)
    )
}

/// `GET /api/v1/game?pos=NOTATION[&moves=LABELS][&pv=N]`.
/// The game is replayed and scored on the blocking pool.
pub async fn game(With(state): Shared, RawQuery(query): RawQuery) -> Reply {
    blocking(move || game_now(&state, &query)).await
}

/// What [`game`] answers.
fn game_now(state: &State, query: &Option<String>) -> Reply {
    let ps = params(query, &["pos", "moves", "pv"])?;
    let mut start = None;
    let mut labels = String::new();
    let mut pv = 0;
    for (name, v) in ps {
        match name {
            "pos" => start = Some(board_of(&v)?),
            "moves" => labels = v,
            _ => pv = pv_count(&v)?,
        }
    }
    let start = start.ok_or_else(|| {
        ApiError::bad("give the start: ?pos=A..F/a..f/S|N[/captured South,North]")
    })?;
    let db = &state.db;
    let mut g = Game::new(start, *db.rules());
    let played: Vec<char> = labels.chars().filter(|c| *c != ',' && *c != ' ').collect();
    if played.len() > MAX_MOVES {
        return Err(ApiError::bad(format!(
            "{} moves; a game here holds at most {MAX_MOVES}",
            played.len()
        )));
    }
    for (i, c) in played.iter().enumerate() {
        g.play(&c.to_string())
            .map_err(|e| ApiError::bad(format!("move {} ({c}): {e}", i + 1)))?;
    }
    let b = *g.board();
    let mut out = json!({
        "rules": db.rules().name,
        "start": g.start().notation(),
        "moves": g.moves().iter().collect::<String>(),
        "pos": b.notation(),
        "pits": b.pits,
        "to_move": side_letter(b.to_move),
        "captured": b.captured,
        "seeds": b.seeds(),
        "end": Value::Null,
        "unknown": Value::Null,
    });
    if let Some(end) = g.end() {
        out["end"] = json!({
            "why": end.describe(),
            "result": g.result(),
            "winner": g.winner().flatten().map(Side::name),
        });
        out["options"] = json!([]);
        return Ok(Json(out).into_response());
    }
    let p = b.position();
    match db.answer(&p, Some(pv)) {
        Ok(a) => {
            fill(&mut out, state, &b, &a)?;
        }
        Err(e) if matches!(e.cause(), Some(StoreError::MissingLayer { .. })) => {
            out["unknown"] = unknown(db, &b).into();
            out["options"] = options(state, &b, None)?;
        }
        Err(e) => return Err(ApiError::of(e, state)),
    }
    Ok(Json(out).into_response())
}

fn side_letter(s: Side) -> &'static str {
    match s {
        Side::South => "S",
        Side::North => "N",
    }
}

/// The answer's figures into `out`, moves and line labelled as players
/// name the pits.
fn fill(out: &mut Value, state: &State, b: &Board, a: &Answer) -> Result<(), ApiError> {
    let side = b.to_move;
    out["score"] = a.score.into();
    out["distance"] = json!(a.distance);
    out["prediction"] = prediction(b, a.score);
    out["lower"] = json!(a.lower);
    out["upper"] = json!(a.upper);
    out["pinned"] = json!(a.pinned);
    out["best"] = json!(a
        .best
        .iter()
        .map(|&p| side.label(p as usize).to_string())
        .collect::<Vec<_>>());
    out["options"] = options(state, b, Some(a))?;
    let mut who = side;
    let mut line = Vec::new();
    for s in a.pv.iter().flatten() {
        line.push(json!({
            "side": who.name(),
            "label": who.label(s.pit as usize).to_string(),
            "captures": s.captures,
            "worth": s.score,
            "distance": s.distance,
        }));
        who = who.other();
    }
    out["pv"] = line.into();
    out["pv_end"] = json!(a.pv_end.map(|e| match e {
        PvEnd::GameOver => "game_over",
        PvEnd::Repetition => "repetition",
        PvEnd::Limit => "limit",
    }));
    Ok(())
}

/// The final result that the captured seeds and the score of `b`'s side
/// to move predict with best play: each side's seeds (the rest of an
/// endless game split evenly, so a half may show), the winner (`null`
/// for a draw) and a sentence ("North wins 25-23 with best play").
fn prediction(b: &Board, score: i8) -> Value {
    let (n, s) = (b.seeds() as i64, score as i64);
    let mover = if b.to_move == Side::South { s } else { -s };
    let half = [
        2 * b.captured[0] as i64 + n + mover,
        2 * b.captured[1] as i64 + n - mover,
    ];
    let seeds = |h: i64| {
        if h % 2 == 0 {
            (h / 2).to_string()
        } else {
            format!("{}.5", h / 2)
        }
    };
    let (south, north) = (seeds(half[0]), seeds(half[1]));
    let (winner, text) = match half[0].cmp(&half[1]) {
        std::cmp::Ordering::Greater => (Some("South"), format!("South wins {south}-{north}")),
        std::cmp::Ordering::Less => (Some("North"), format!("North wins {north}-{south}")),
        std::cmp::Ordering::Equal => (None, format!("a draw, {south}-{north}")),
    };
    json!({
        "south": half[0] as f64 / 2.0,
        "north": half[1] as f64 / 2.0,
        "winner": winner,
        "text": format!("{text} with best play"),
    })
}

/// The mover's six pits as moves: label, seeds, legality, captures, the
/// board after it (notation), its worth (from `a`, else from the child
/// where its layer is built) and whether the worth is pinned (the
/// child's envelope has one value).
fn options(state: &State, b: &Board, a: Option<&Answer>) -> Result<Value, ApiError> {
    let db = &state.db;
    let side = b.to_move;
    let p = b.position();
    let list = p.moves(db.rules());
    let mut out = Vec::new();
    for pit in 0..6 {
        let label = side.label(pit).to_string();
        let seeds = p.0[pit];
        let Some(m) = list.from_pit(pit).filter(|m| m.legal) else {
            out.push(json!({ "label": label, "seeds": seeds, "legal": false }));
            continue;
        };
        let (next, _) = b.play(db.rules(), pit);
        let left = p.seeds() - m.captured as u32;
        let child = m.child;
        let (worth, pinned) = if child.mover_seeds() == 0 {
            let w = a.and_then(|a| a.moves[pit].score);
            (w.or(Some((m.captured as u32 + left) as i8)), Some(true))
        } else {
            let w = match a.and_then(|a| a.moves[pit].score) {
                Some(w) => Some(w),
                None => known(db.score(&child), state)?.map(|s| m.captured as i8 - s),
            };
            let env = known(db.envelope(&child), state)?.flatten();
            (w, env.map(|e| e.pinned()))
        };
        out.push(json!({
            "label": label,
            "seeds": seeds,
            "legal": true,
            "captures": m.captured,
            "worth": worth,
            "distance": a.and_then(|a| a.moves[pit].distance),
            "pinned": pinned,
            "pos": next.notation(),
        }));
    }
    Ok(out.into())
}

/// A probe's value, `None` where the layer is not built.
fn known<T>(r: awari_egdb::Result<T>, state: &State) -> Result<Option<T>, ApiError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if matches!(e.cause(), Some(StoreError::MissingLayer { .. })) => Ok(None),
        Err(e) => Err(ApiError::of(e, state)),
    }
}

/// `GET /api/v1/random?seeds=N[&result=won|drawn|lost][&pinned=true|false]`.
/// The position is drawn (reading the tables) on the blocking pool.
pub async fn random(With(state): Shared, RawQuery(query): RawQuery) -> Reply {
    blocking(move || random_now(&state, &query)).await
}

/// What [`random`] answers.
fn random_now(state: &State, query: &Option<String>) -> Reply {
    let ps = params(query, &["seeds", "result", "pinned"])?;
    let mut seeds = None;
    let mut result = None;
    let mut pinned = None;
    for (name, v) in ps {
        match name {
            "seeds" => {
                let n: u32 = v.trim().parse().ok().filter(|&n| n <= 48).ok_or_else(|| {
                    ApiError::bad(format!("seeds '{v}' is not a layer (0 to 48 seeds)"))
                })?;
                seeds = Some(n);
            }
            "result" => {
                result = Some(match v.as_str() {
                    "won" => 1i8,
                    "drawn" => 0,
                    "lost" => -1,
                    _ => {
                        return Err(ApiError::bad(format!(
                            "result '{v}' is not won, drawn or lost"
                        )))
                    }
                })
            }
            _ => {
                pinned = Some(match v.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(ApiError::bad(format!("pinned '{v}' is not true or false"))),
                })
            }
        }
    }
    let n = seeds.ok_or_else(|| ApiError::bad("give the layer: ?seeds=N"))?;
    let db = &state.db;
    if !db.layers().contains(&n) {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_built",
            format!("layer {n} is not built: {}", holds(db)),
        ));
    }
    if pinned.is_some() && !db.has_envelope(n).map_err(|e| ApiError::of(e, state))? {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_built",
            format!("layer {n} was built without the envelope: pinned is not known"),
        ));
    }
    let size = layer_size(n);
    let mut rng = seed();
    // A layer of at most RANDOM_TRIES positions is walked whole, from a
    // random one on, so that "none" is a fact about the layer.
    let whole = size <= RANDOM_TRIES;
    let start = next(&mut rng) % size;
    for tries in 1..=RANDOM_TRIES.min(size) {
        let g = match whole {
            true => (start + tries - 1) % size,
            false => next(&mut rng) % size,
        };
        let p = unrank(n, g).map_err(|e| ApiError::of(e, state))?;
        // A position to play from: the side to move has a move (one
        // without is a game already over).
        if p.moves(db.rules()).legal().next().is_none() {
            continue;
        }
        let score = db.score_at(n, g).map_err(|e| ApiError::of(e, state))?;
        if result.is_some_and(|r| r != score.signum()) {
            continue;
        }
        let env = match pinned {
            Some(want) => {
                let e = db.envelope(&p).map_err(|e| ApiError::of(e, state))?;
                if e.map(|e| e.pinned()) != Some(want) {
                    continue;
                }
                e
            }
            None => None,
        };
        let b = Board::new(p.0, None).map_err(|e| ApiError::of(e, state))?;
        return Ok(Json(json!({
            "rules": db.rules().name,
            "pos": b.notation(),
            "pits": p.0,
            "seeds": n,
            "index": g,
            "score": score,
            "pinned": env.map(|e| e.pinned()),
            "tries": tries,
        }))
        .into_response());
    }
    let filtered = result.is_some() || pinned.is_some();
    Err(ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        match (whole, filtered) {
            (true, false) => format!(
                "layer {n} has no position to play from: the game is over in every one of its \
                 {size} position{}",
                if size == 1 { "" } else { "s" }
            ),
            (true, true) => format!("no position of layer {n} is one to play from and matches"),
            (false, _) => format!("no such position found in {RANDOM_TRIES} tries of layer {n}"),
        },
    ))
}

/// A random seed for one request.
fn seed() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    t ^ COUNT
        .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
        .rotate_left(17)
}

/// splitmix64.
fn next(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

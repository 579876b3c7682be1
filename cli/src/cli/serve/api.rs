//! The JSON API, `/api/v1`: one position's answer, a batch of scores, the
//! rule set, the layers and the server's health. Every error is JSON,
//! `{"error": message, "kind": kind}` (and `"table"` for a damaged one):
//!
//! | status | kind | when |
//! |---|---|---|
//! | 400 | `bad_input` | a board or parameter the tables cannot take |
//! | 404 | `not_built` | a layer the folder does not hold |
//! | 404 | `not_found` | an unknown path |
//! | 405 | `method` | a known path with another method |
//! | 408 | `timeout` | a request not sent and answered in time |
//! | 413 | `too_large` | a body over [`MAX_BODY`] or over [`MAX_BOARDS`] boards |
//! | 500 | `io`, `internal` | the server failed to read a file, or a bug |
//! | 503 | `damaged` | a table of the folder is damaged (named) |
//!
//! Headers over the connection's limit are refused by the HTTP layer
//! itself, 431 with an empty body (see `conn.rs`).

use super::reply::{blocking, params, pv_count, Answer, ApiError};
use super::State;
use crate::cli::board::{parse_board, parse_pits};
use awari_egdb::rules::Position;
use axum::body::Body;
use axum::extract::{RawQuery, State as With};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::{json, Value};
use std::sync::Arc;

/// The largest request body.
pub const MAX_BODY: usize = 1 << 20;
/// The most boards of one batch.
pub const MAX_BOARDS: usize = 10_000;

type Shared = With<Arc<State>>;

/// The routes of `/api/v1`, and the JSON 404 and 405 of every other path.
pub fn router(state: Arc<State>) -> Router {
    Router::new()
        .route("/api/v1/position", get(position))
        .route("/api/v1/positions", post(positions))
        .route("/api/v1/rules", get(rules))
        .route("/api/v1/layers", get(layers))
        .route("/api/v1/health", get(super::health::health))
        .route("/api/v1/game", get(super::explore::game))
        .route("/api/v1/random", get(super::explore::random))
        .fallback(|| async {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                "no such path; see /api/v1/health",
            )
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method",
                "this path does not take that method",
            )
        })
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            |_: Box<dyn std::any::Any + Send>| {
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "the server failed on this request (a bug: please report it)",
                )
                .response()
            },
        ))
        .with_state(state)
}

/// Twelve pit counts, as words, into a board with a Goedel number.
fn board(words: &[String]) -> Result<Position, ApiError> {
    parse_board(words).map_err(|f| ApiError::bad(f.message))
}

/// Twelve pit counts, as words, into a board the tables answer: one with
/// a Goedel number, or one without (every opponent pit holds seeds, as at
/// the opening), answered from its moves.
fn any_board(words: &[String]) -> Result<Position, ApiError> {
    let p = Position(parse_pits(words).map_err(|f| ApiError::bad(f.message))?);
    let n = p.seeds();
    if p.is_indexable() || n > awari_egdb::rules::MAX_SEEDS || n == 47 {
        return board(words);
    }
    Ok(p)
}

/// Twelve counts as a board with a Goedel number (at most 48 seeds in all,
/// not 47, an opponent pit empty), else `None`.
fn plain(counts: &[u8; 12]) -> Option<Position> {
    let p = Position(*counts);
    let seeds: u32 = counts.iter().map(|&c| u32::from(c)).sum();
    (seeds <= awari_egdb::rules::MAX_SEEDS && seeds != 47 && p.is_indexable()).then_some(p)
}

/// A board of a batch: twelve whole numbers (the common case without a
/// string made), else the message `awari query` gives.
fn batch_board(b: &Value) -> Result<Position, ApiError> {
    if let Value::String(text) = b {
        let p = super::explore::board_of(text)?.position();
        let words: Vec<String> = p.0.iter().map(u8::to_string).collect();
        return board(&words);
    }
    let Some(pits) = b.as_array() else {
        return Err(ApiError::bad(
            "not a board (12 pit counts, or a position in the notation)",
        ));
    };
    let mut counts = [0u8; 12];
    let small = pits.len() == 12
        && pits.iter().zip(&mut counts).all(|(x, c)| match x.as_u64() {
            Some(v) if v <= 255 => {
                *c = v as u8;
                true
            }
            _ => false,
        });
    if let Some(p) = small.then(|| plain(&counts)).flatten() {
        return Ok(p);
    }
    let words: Vec<String> = pits
        .iter()
        .map(|x| match x {
            Value::Number(n) => n.to_string(),
            other => format!("{other}"),
        })
        .collect();
    board(&words)
}

/// `GET /api/v1/position?pits=P0,...,P11[&pv=N]` (or `?pos=NOTATION`, the
/// board seen from its side to move): the object `awari query --json`
/// prints, computed on the blocking pool.
async fn position(With(state): Shared, RawQuery(query): RawQuery) -> Answer {
    blocking(move || position_now(&state, &query)).await
}

/// What [`position`] answers.
fn position_now(state: &State, query: &Option<String>) -> Answer {
    let ps = params(query, &["pits", "pos", "pv"])?;
    // The board, and the side to move where the notation gives it.
    let mut pits = None;
    let mut pv = None;
    for (name, v) in ps {
        match name {
            "pits" | "pos" if pits.is_some() => {
                return Err(ApiError::bad("give the board once: pits= or pos="));
            }
            "pits" => {
                let words: Vec<String> = v.split(',').map(str::to_string).collect();
                pits = Some((any_board(&words)?, None));
            }
            "pos" => {
                let b = super::explore::board_of(&v)?;
                let words: Vec<String> = b.position().0.iter().map(u8::to_string).collect();
                pits = Some((any_board(&words)?, Some(b)));
            }
            _ => pv = Some(pv_count(&v)?),
        }
    }
    let (p, board) =
        pits.ok_or_else(|| ApiError::bad("give the board: ?pits=P0,...,P11 or ?pos=NOTATION"))?;
    let answer = match board {
        Some(b) => b.answer(&state.db, pv),
        None => state.db.answer(&p, pv),
    }
    .map_err(|e| ApiError::of(e, state))?;
    Ok(Json(answer).into_response())
}

/// `POST /api/v1/positions` with `{"boards": [board, ...]}`, each board 12
/// counts or a position in the notation: their scores, in order, `{"rules",
/// "scores"}`; with `"allow_missing": true` a board of a layer not built
/// scores `null` instead of failing the batch. Any other key is refused.
async fn positions(With(state): Shared, body: Body) -> Answer {
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("the body is over {MAX_BODY} bytes"),
        )
    };
    let bytes = match Limited::new(body, MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => return Err(too_large()),
        Err(e) if timed_out(&*e) => {
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "timeout",
                "the body was not sent in time",
            ))
        }
        Err(_) => return Err(ApiError::bad("the body could not be read")),
    };
    let (boards, allow_missing) = match serde_json::from_slice::<PlainBatch>(&bytes) {
        Ok(b) if b.boards.len() <= MAX_BOARDS && b.boards.iter().all(|p| plain(p).is_some()) => (
            b.boards.into_iter().map(Position).collect(),
            b.allow_missing,
        ),
        _ => batch_boards(&bytes)?,
    };
    blocking(move || {
        let scores = if allow_missing {
            let mut out = vec![None; boards.len()];
            state
                .db
                .scores_where_built(&boards, &mut out)
                .map(|_| json!(out))
        } else {
            let mut out = vec![0i8; boards.len()];
            state.db.scores(&boards, &mut out).map(|()| json!(out))
        }
        .map_err(|e| ApiError::of(e, &state))?;
        Ok(Json(json!({ "rules": state.db.rules().name, "scores": scores })).into_response())
    })
    .await
}

/// Whether reading a body failed on the connection's time-out.
fn timed_out(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::TimedOut {
                return true;
            }
        }
        if let Some(h) = err.downcast_ref::<hyper::Error>() {
            if h.is_timeout() {
                return true;
            }
        }
        cur = err.source();
    }
    false
}

/// A batch in its common form, every board twelve counts 0..=255 (checked
/// by [`plain`] before use).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PlainBatch {
    boards: Vec<[u8; 12]>,
    #[serde(default)]
    allow_missing: bool,
}

/// The boards of a batch that is not all plain boards and its
/// `allow_missing`, or the message of the first thing wrong with it.
fn batch_boards(bytes: &[u8]) -> Result<(Vec<Position>, bool), ApiError> {
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad(format!("the body is not JSON: {e}")))?;
    const SHAPE: &str =
        "the body is {\"boards\": [board, ...], \"allow_missing\": true or false}, a board \
         12 pit counts or a position in the notation";
    if let Some(key) = v.as_object().and_then(|o| {
        o.keys()
            .find(|k| !matches!(k.as_str(), "boards" | "allow_missing"))
    }) {
        return Err(ApiError::bad(format!("unknown key '{key}': {SHAPE}")));
    }
    let Some(list) = v.get("boards").and_then(Value::as_array) else {
        return Err(ApiError::bad(SHAPE));
    };
    if list.len() > MAX_BOARDS {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("{} boards; a batch holds at most {MAX_BOARDS}", list.len()),
        ));
    }
    let mut boards = Vec::with_capacity(list.len());
    for (i, b) in list.iter().enumerate() {
        boards
            .push(batch_board(b).map_err(|e| ApiError::bad(format!("board {i}: {}", e.message)))?);
    }
    let allow_missing = match v.get("allow_missing") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(ApiError::bad("allow_missing is true or false")),
    };
    Ok((boards, allow_missing))
}

/// `GET /api/v1/rules`: the folder's rule set, field by field.
async fn rules(With(state): Shared, RawQuery(query): RawQuery) -> Answer {
    params(&query, &[])?;
    Ok(Json(state.db.rules().to_json()).into_response())
}

/// `GET /api/v1/layers`: the layers built, with the figures of `awari
/// stats --json` where the folder's manifest records them.
async fn layers(With(state): Shared, RawQuery(query): RawQuery) -> Answer {
    params(&query, &[])?;
    let mut out = Vec::new();
    for n in state.db.layers() {
        let recorded = state
            .db
            .manifest()
            .and_then(|m| m.layer(n))
            .is_some_and(|e| e.score_histogram.len() == 2 * n as usize + 1);
        out.push(if recorded {
            let s = awari_egdb::stats::layer_stats(&state.db, n)
                .map_err(|e| ApiError::of(e, &state))?;
            serde_json::to_value(s).expect("JSON")
        } else {
            json!({ "seeds": n, "positions": awari_egdb::index::layer_size(n) })
        });
    }
    Ok(Json(json!({ "rules": state.db.rules().name, "layers": out })).into_response())
}

//! `GET /api/v1/health`: the server answers, its rule set and layers, and
//! whether every table the folder lists is there at its size (a few
//! `stat` calls: a table deleted or truncated since the start is named;
//! what a table holds is `awari verify`'s job).

use super::reply::params;
use super::State;
use awari_egdb::format::Kind;
use awari_egdb::store;
use axum::extract::{RawQuery, State as With};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::sync::Arc;

/// The tables of the folder that are missing or not at their size, one
/// object per table: `{"layer", "table", "problem"}`.
pub fn problems(state: &State) -> Vec<Value> {
    let db = &state.db;
    let Some(dir) = db.dir() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for n in db.layers() {
        for kind in [Kind::Score, Kind::Lower, Kind::Upper] {
            let name = |p: &std::path::Path| {
                p.file_name()
                    .map_or_else(|| kind.file_name(n), |f| f.to_string_lossy().into_owned())
            };
            let problem = match store::locate(dir, db.manifest(), n, kind) {
                Ok(None) if kind == Kind::Score => Some((kind.file_name(n), "missing".to_string())),
                Ok(None) => None,
                Err(e) => Some((
                    e.path().map_or_else(|| kind.file_name(n), name),
                    "missing".to_string(),
                )),
                Ok(Some(st)) => {
                    let file = name(st.path());
                    match (std::fs::metadata(st.path()), store::expected_size(&st, n)) {
                        (Err(_), _) | (_, Err(_)) => Some((file, "missing".to_string())),
                        (Ok(m), Ok((want, _))) if m.len() != want => Some((
                            file,
                            format!("{} bytes where it should have {want}", m.len()),
                        )),
                        _ => None,
                    }
                }
            };
            if let Some((table, problem)) = problem {
                out.push(json!({ "layer": n, "table": table, "problem": problem }));
            }
        }
    }
    out
}

/// `GET /api/v1/health`: 200 `"status": "ok"`, or 503 `"status":
/// "damaged"` with the `problems`.
pub async fn health(With(state): With<Arc<State>>, RawQuery(query): RawQuery) -> Response {
    if let Err(e) = params(&query, &[]) {
        return e.response();
    }
    let problems = problems(&state);
    let ok = problems.is_empty();
    let body = json!({
        "status": if ok { "ok" } else { "damaged" },
        "version": env!("CARGO_PKG_VERSION"),
        "rules": state.db.rules().name,
        "layers": state.db.layers(),
        "problems": problems,
    });
    let status = if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, [(header::CACHE_CONTROL, "no-store")], Json(body)).into_response()
}

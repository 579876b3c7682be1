//! What every handler of the API shares: its errors as JSON
//! ([`ApiError`]), the query string's parameters, and running an answer on
//! the blocking pool.

use super::State;
use awari_egdb::store::StoreError;
use awari_egdb::{Error, ErrorKind};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

/// The longest principal variation asked for.
pub const MAX_PV: usize = 1_000;

/// An error of the API, as JSON.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    kind: &'static str,
    pub(super) message: String,
    table: Option<String>,
}

impl ApiError {
    pub fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            kind,
            message: message.into(),
            table: None,
        }
    }

    pub(super) fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_input", message)
    }

    /// A library error, with the folder's path taken out of its message.
    pub(super) fn of(e: Error, state: &State) -> ApiError {
        let (status, kind) = match (e.cause(), e.kind()) {
            (Some(StoreError::MissingLayer { .. }), _) => (StatusCode::NOT_FOUND, "not_built"),
            (_, ErrorKind::Input) => (StatusCode::BAD_REQUEST, "bad_input"),
            (_, ErrorKind::Damaged) => (StatusCode::SERVICE_UNAVAILABLE, "damaged"),
            (_, ErrorKind::Io) => (StatusCode::INTERNAL_SERVER_ERROR, "io"),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        let table = (kind == "damaged")
            .then(|| e.path().and_then(|p| p.file_name()))
            .flatten()
            .map(|f| f.to_string_lossy().into_owned());
        let message = match (&table, kind) {
            // Players read a plain message; the operator's log has the
            // details, and /api/v1/health names the file.
            (Some(t), "damaged") | (Some(t), "io") => {
                eprintln!("awari serve: {e}");
                let layer = t.split('.').find_map(|w| w.parse::<u32>().ok());
                let what = match e.cause() {
                    Some(StoreError::Compressed {
                        source: awari_egdb::codec::CompressError::Retired { .. },
                        ..
                    }) => "is compressed in a format this release no longer reads",
                    _ => "is damaged",
                };
                match layer {
                    Some(n) => format!(
                        "the table of layer {n} ({t}) {what}; the server's log and \
                         /api/v1/health say more"
                    ),
                    None => format!("the table {t} {what}; the server's log says more"),
                }
            }
            _ => e
                .to_string()
                .replace(&state.dir_prefix.0, "")
                .replace(&state.dir_prefix.1, "the folder"),
        };
        ApiError {
            status,
            kind,
            message,
            table,
        }
    }

    pub fn response(self) -> Response {
        let mut body = json!({ "error": self.message, "kind": self.kind });
        if let Some(t) = self.table {
            body["table"] = t.into();
        }
        (self.status, Json(body)).into_response()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        self.response()
    }
}

/// What a handler returns.
pub(super) type Answer = Result<Response, ApiError>;

/// The parameters of a query string, each at most once and each known.
pub(super) fn params<'a>(
    query: &Option<String>,
    known: &[&'a str],
) -> Result<Vec<(&'a str, String)>, ApiError> {
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(query.as_deref().unwrap_or(""))
            .map_err(|_| ApiError::bad("the query string is not key=value pairs"))?;
    let mut out: Vec<(&'a str, String)> = Vec::new();
    for (k, v) in pairs {
        let Some(&name) = known.iter().find(|&&n| n == k) else {
            return Err(ApiError::bad(format!(
                "unknown parameter '{}' (this path takes: {})",
                k.chars().take(40).collect::<String>(),
                known.join(", ")
            )));
        };
        if out.iter().any(|(n, _)| *n == name) {
            return Err(ApiError::bad(format!("parameter '{name}' given twice")));
        }
        out.push((name, v));
    }
    Ok(out)
}

/// A move count of a line of best play, 0..=[`MAX_PV`].
pub(super) fn pv_count(v: &str) -> Result<usize, ApiError> {
    v.trim()
        .parse()
        .ok()
        .filter(|&n| n <= MAX_PV)
        .ok_or_else(|| ApiError::bad(format!("pv '{v}' is not a move count from 0 to {MAX_PV}")))
}

/// Runs `work` on the blocking pool and waits for it: every answer reads
/// the tables (with `pread` or through a mapping's page faults) and may
/// decode blocks and walk a line of best play, which must not hold up the
/// async runtime's threads.
pub(super) async fn blocking(work: impl FnOnce() -> Answer + Send + 'static) -> Answer {
    tokio::task::spawn_blocking(work).await.map_err(|_| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the probe failed",
        )
    })?
}

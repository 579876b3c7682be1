//! The page at `/`: plain HTML, CSS and a little JavaScript, embedded in
//! the binary (no CDN: it works offline). It draws the board as players
//! see it and plays through `/api/v1/game` (the board now, the rules' end,
//! each move's worth and pinned flag, the line of best play), edits a
//! board by clicks, flips sides, asks `/api/v1/random` for a position of a
//! layer and result, shows the layer's statistics from `/api/v1/layers`,
//! and keeps the position in the URL (`/?pos=NOTATION`; old
//! `/?pits=..&turn=..&cap=..` links still open).

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

const INDEX: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/app.js");
const STYLE: &str = include_str!("page/style.css");

/// The page's three files.
pub fn router() -> Router {
    Router::new()
        .route("/", get(|| file("text/html; charset=utf-8", INDEX)))
        .route(
            "/app.js",
            get(|| file("text/javascript; charset=utf-8", SCRIPT)),
        )
        .route("/style.css", get(|| file("text/css; charset=utf-8", STYLE)))
}

async fn file(kind: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
}

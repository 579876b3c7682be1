//! The page at `/`: plain HTML, CSS and a little JavaScript, embedded in
//! the binary (no CDN: it works offline). It draws the board as players
//! see it, asks `/api/v1/position` for every move's worth, plays a clicked
//! pit, undoes, shows the line of best play, sets up a position from 12
//! counts or the start, and keeps the position in the URL
//! (`/?pits=A..F,a..f&turn=S|N&cap=S,N`) so a link can be shared.

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

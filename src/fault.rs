//! Deterministic fault injection for the crash tests: named points in the
//! code that writes tables, manifests and compressed files.
//!
//! When the environment variable `AWARI_FAULT` names a point the process
//! reaches, it prints `awari: fault injected at POINT:WHAT` to stderr and
//! aborts there, as a crash would (no destructors run, nothing is cleaned
//! up). `AWARI_FAULT=POINT` fires at the first time the point is reached;
//! `AWARI_FAULT=POINT:WHAT` only where it is reached for `WHAT` (a file
//! name, or a layer number). Without the variable a point costs one load of
//! a cached value. The points:
//!
//! | point | where | `WHAT` |
//! |---|---|---|
//! | `before-rename` | a file's temporary copy is written and synced, not yet renamed | the file name (`lower.10`) |
//! | `after-rename` | a file was renamed into place (its folder synced) | the file name |
//! | `before-manifest` | every table of a built layer is in place; the manifest does not list it yet | the layer (`10`) |
//! | `mid-compress` | half of a compressed file's blocks are compressed; its temporary file exists (it may still be empty: writes are buffered) | the file name (`scores.10.zst`) |

use std::sync::OnceLock;

/// The environment variable that names the point to fail at.
pub const VAR: &str = "AWARI_FAULT";

fn target() -> Option<&'static (String, Option<String>)> {
    static T: OnceLock<Option<(String, Option<String>)>> = OnceLock::new();
    T.get_or_init(|| {
        let v = std::env::var(VAR).ok().filter(|v| !v.is_empty())?;
        Some(match v.split_once(':') {
            Some((p, w)) => (p.to_string(), Some(w.to_string())),
            None => (v, None),
        })
    })
    .as_ref()
}

/// Aborts the process if `AWARI_FAULT` names `point` (for `what`).
#[inline]
pub fn point(point: &str, what: &dyn std::fmt::Display) {
    if let Some((p, w)) = target() {
        if p == point {
            let what = what.to_string();
            if w.as_ref().map_or(true, |w| *w == what) {
                eprintln!("awari: fault injected at {point}:{what}");
                std::process::abort();
            }
        }
    }
}

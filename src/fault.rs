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
//! | `mid-envelope` | the envelope sweep of a layer is at its middle threshold (0), between two thresholds | the layer |
//! | `mid-score` | the score sweep of a layer is at its middle threshold, between two thresholds | the layer |
//!
//! `AWARI_PAUSE` names a point the same way; there the process prints
//! `awari: paused at POINT:WHAT` to stderr and waits until its standard
//! input is closed (at once where it is already closed or `/dev/null`),
//! so that a test can act at exactly that moment of the work (kill the
//! process, fill its disk) keyed to progress, not to the clock, and then
//! let it go on.

use std::sync::OnceLock;

/// The environment variable that names the point to fail at.
pub const VAR: &str = "AWARI_FAULT";

/// The environment variable that names the point to pause at.
pub const PAUSE: &str = "AWARI_PAUSE";

type Target = Option<(String, Option<String>)>;

fn parse(var: &str) -> Target {
    let v = std::env::var(var).ok().filter(|v| !v.is_empty())?;
    Some(match v.split_once(':') {
        Some((p, w)) => (p.to_string(), Some(w.to_string())),
        None => (v, None),
    })
}

fn targets() -> &'static (Target, Target) {
    static T: OnceLock<(Target, Target)> = OnceLock::new();
    T.get_or_init(|| (parse(VAR), parse(PAUSE)))
}

fn names(t: &Target, point: &str, what: &str) -> bool {
    t.as_ref()
        .is_some_and(|(p, w)| p == point && w.as_ref().map_or(true, |w| w == what))
}

/// Aborts the process if `AWARI_FAULT` names `point` (for `what`); waits
/// until standard input is closed if `AWARI_PAUSE` does.
#[inline]
pub fn point(point: &str, what: &dyn std::fmt::Display) {
    let (fault, pause) = targets();
    if fault.is_none() && pause.is_none() {
        return;
    }
    let what = what.to_string();
    if names(fault, point, &what) {
        eprintln!("awari: fault injected at {point}:{what}");
        std::process::abort();
    }
    if names(pause, point, &what) {
        eprintln!("awari: paused at {point}:{what}");
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
    }
}

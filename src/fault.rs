//! Deterministic fault injection for the crash tests: named points in the
//! code that writes tables, manifests and compressed files.
//!
//! The library only reports reaching a point, to the hook a front end
//! installs ([`set_hook`]); without one a point costs one load of a cached
//! value. The `awari` command line installs a hook when one of two
//! environment variables is set, and it behaves as follows (the library
//! itself never prints, aborts or reads its input).
//!
//! When the environment variable `AWARI_FAULT` names a point the process
//! reaches, it prints `awari: fault injected at POINT:WHAT` to stderr and
//! aborts there, as a crash would (no destructors run, nothing is cleaned
//! up). `AWARI_FAULT=POINT` fires at the first time the point is reached;
//! `AWARI_FAULT=POINT:WHAT` only where it is reached for `WHAT` (a file
//! name, or a layer number). The points:
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

/// The environment variable that names the point to fail at (read by the
/// command line's hook).
pub const VAR: &str = "AWARI_FAULT";

/// The environment variable that names the point to pause at (read by the
/// command line's hook).
pub const PAUSE: &str = "AWARI_PAUSE";

/// What happens when the process reaches a point: called with the point's
/// name and what it is reached for (a file name or a layer number).
pub type Hook = fn(point: &str, what: &str);

static HOOK: OnceLock<Hook> = OnceLock::new();

/// Installs the hook every point reports to, once a process; whether this
/// call installed it (a hook already installed stays).
pub fn set_hook(hook: Hook) -> bool {
    HOOK.set(hook).is_ok()
}

/// Reports reaching `point` (for `what`) to the installed hook, if any.
#[inline]
pub fn point(point: &str, what: &dyn std::fmt::Display) {
    if let Some(hook) = HOOK.get() {
        hook(point, &what.to_string());
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    static SEEN: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

    fn record(point: &str, what: &str) {
        SEEN.lock().unwrap().push((point.into(), what.into()));
    }

    /// A point reports to the installed hook, with what it is reached for;
    /// a second hook does not replace the first.
    #[test]
    fn a_point_reports_to_the_hook() {
        assert!(super::set_hook(record));
        assert!(!super::set_hook(|_, _| panic!("the second hook ran")));
        super::point("test-point", &17);
        let seen = SEEN.lock().unwrap();
        assert!(
            seen.contains(&("test-point".into(), "17".into())),
            "{seen:?}"
        );
    }
}

//! The command line's fault-point hook: `AWARI_FAULT` and `AWARI_PAUSE`
//! as [`awari_egdb::fault`] describes them.

use awari_egdb::fault::{set_hook, PAUSE, VAR};
use std::sync::OnceLock;

/// A point and, optionally, what it must be reached for.
type Target = Option<(String, Option<String>)>;

fn parse(var: &str) -> Target {
    let v = std::env::var(var).ok().filter(|v| !v.is_empty())?;
    Some(match v.split_once(':') {
        Some((p, w)) => (p.to_string(), Some(w.to_string())),
        None => (v, None),
    })
}

static TARGETS: OnceLock<(Target, Target)> = OnceLock::new();

fn names(t: &Target, point: &str, what: &str) -> bool {
    t.as_ref()
        .is_some_and(|(p, w)| p == point && w.as_ref().map_or(true, |w| w == what))
}

/// Aborts the process if `AWARI_FAULT` names `point` (for `what`); waits
/// until standard input is closed if `AWARI_PAUSE` does.
fn hook(point: &str, what: &str) {
    let Some((fault, pause)) = TARGETS.get() else {
        return;
    };
    if names(fault, point, what) {
        eprintln!("awari: fault injected at {point}:{what}");
        std::process::abort();
    }
    if names(pause, point, what) {
        eprintln!("awari: paused at {point}:{what}");
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
    }
}

/// Installs the hook when either variable is set (without them the
/// library's points cost one load).
pub fn install() {
    let targets = (parse(VAR), parse(PAUSE));
    if targets.0.is_none() && targets.1.is_none() {
        return;
    }
    if TARGETS.set(targets).is_ok() {
        set_hook(hook);
    }
}

//! Tests of the `awari index`, `awari position` and `awari bench` subcommands, run as the
//! built binary.

mod common;

use common::{awari, ok, text, usage_error};

/// Runs a command that must succeed with `--json` and parses its stdout.
fn ok_json(args: &[&str]) -> serde_json::Value {
    let stdout = ok(args);
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("awari {args:?}: stdout is not one JSON value ({e}): {stdout}"))
}

/// The value following the word `key` in plain-text output, e.g. "seeds 16".
fn field(stdout: &str, key: &str) -> Option<u64> {
    let words: Vec<&str> = stdout
        .split(|c: char| c.is_whitespace() || c == ':' || c == ',' || c == '=')
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .find(|w| w[0].eq_ignore_ascii_case(key))
        .and_then(|w| w[1].parse().ok())
}

fn pits_of(v: &serde_json::Value) -> Vec<u64> {
    v["pits"]
        .as_array()
        .unwrap_or_else(|| panic!("no pits array in {v}"))
        .iter()
        .map(|x| x.as_u64().expect("pit count"))
        .collect()
}

const EXAMPLE: [&str; 12] = ["1", "1", "1", "1", "1", "2", "4", "2", "3", "0", "0", "0"];

fn with(prefix: &[&str], rest: &[&str]) -> Vec<String> {
    prefix.iter().chain(rest).map(|s| s.to_string()).collect()
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn index_text() {
    let args = with(&["index"], &EXAMPLE);
    let out = ok(&refs(&args));
    assert_eq!(field(&out, "seeds"), Some(16), "{out}");
    assert_eq!(field(&out, "index"), Some(588_953), "{out}");
}

#[test]
fn index_json() {
    for args in [
        with(&["index"], &EXAMPLE)
            .into_iter()
            .chain(["--json".to_string()])
            .collect(),
        with(&["index", "--json"], &EXAMPLE),
    ] {
        let v = ok_json(&refs(&args));
        assert_eq!(v["seeds"], 16, "{v}");
        assert_eq!(v["index"], 588_953u64, "{v}");
        assert_eq!(pits_of(&v), vec![1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]);
    }
}

#[test]
fn index_checkpoints_and_ends() {
    let cases: [(&str, u64, u64); 5] = [
        ("0 1 2 0 0 0 0 1 2 0 0 0", 6, 2726),
        ("0 2 3 4 5 6 0 2 3 4 5 6", 40, 31_114_014_134),
        ("0 0 0 0 0 0 0 0 0 0 0 0", 0, 0),
        ("48 0 0 0 0 0 0 0 0 0 0 0", 48, 0),
        ("0 0 0 0 0 0 0 0 0 0 0 48", 48, 203_648_015_934),
    ];
    for (board, seeds, g) in cases {
        let mut args = vec!["index", "--json"];
        args.extend(board.split(' '));
        let v = ok_json(&args);
        assert_eq!(v["seeds"], seeds, "{board}: {v}");
        assert_eq!(v["index"], g, "{board}: {v}");
    }
}

#[test]
fn position_text() {
    let out = ok(&["position", "16", "588953"]);
    assert_eq!(field(&out, "seeds"), Some(16), "{out}");
    assert_eq!(field(&out, "index"), Some(588_953), "{out}");
}

#[test]
fn position_json() {
    let v = ok_json(&["position", "40", "31114014134", "--json"]);
    assert_eq!(pits_of(&v), vec![0, 2, 3, 4, 5, 6, 0, 2, 3, 4, 5, 6]);
    assert_eq!(v["seeds"], 40);
    assert_eq!(v["index"], 31_114_014_134u64);

    let v = ok_json(&["position", "--json", "16", "588953"]);
    assert_eq!(pits_of(&v), vec![1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]);

    let v = ok_json(&["position", "6", "2726", "--json"]);
    assert_eq!(pits_of(&v), vec![0, 1, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0]);

    // last index of a layer
    let v = ok_json(&["position", "16", "12685178", "--json"]);
    assert_eq!(pits_of(&v), vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16]);
    let v = ok_json(&["position", "0", "0", "--json"]);
    assert_eq!(pits_of(&v), vec![0; 12]);
}

#[test]
fn position_and_index_round_trip() {
    for (n, g) in [
        (1u64, 7u64),
        (20, 80_214_914),
        (33, 123_456_789),
        (48, 203_648_015_934),
        (48, 99_999_999_999),
    ] {
        let v = ok_json(&["position", &n.to_string(), &g.to_string(), "--json"]);
        let pits: Vec<String> = pits_of(&v).iter().map(|x| x.to_string()).collect();
        let args = with(&["index", "--json"], &refs(&pits));
        let w = ok_json(&refs(&args));
        assert_eq!(w["seeds"], n, "{v} -> {w}");
        assert_eq!(w["index"], g, "{v} -> {w}");
    }
}

#[test]
fn index_rejects_wrong_number_of_pits() {
    usage_error(&[
        "index", "1", "1", "1", "1", "1", "2", "4", "2", "3", "0", "0",
    ]);
    usage_error(&[
        "index", "1", "1", "1", "1", "1", "2", "4", "2", "3", "0", "0", "0", "0",
    ]);
    usage_error(&[
        "index", "1", "1", "1", "1", "1", "2", "4", "2", "3", "0", "0", "--json",
    ]);
    usage_error(&["index"]);
}

#[test]
fn index_rejects_non_numbers() {
    for bad in ["x", "-1", "1.5", "", "1e3", "0x3"] {
        let mut args: Vec<&str> = vec!["index"];
        args.extend(EXAMPLE);
        args[3] = bad;
        usage_error(&args);
        args.push("--json");
        usage_error(&args);
    }
}

#[test]
fn index_rejects_too_many_seeds() {
    // 49 seeds in total, every pit small
    usage_error(&[
        "index", "5", "5", "5", "5", "5", "5", "5", "5", "5", "4", "0", "0",
    ]);
    // 49 seeds in one pit
    usage_error(&[
        "index", "49", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0",
    ]);
    // a pit of 300 (would wrap in a u8)
    usage_error(&[
        "index", "300", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0",
    ]);
    usage_error(&[
        "index", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "300",
    ]);
    // a pit too big for any integer type
    usage_error(&[
        "index",
        "99999999999999999999999999",
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
    ]);
}

#[test]
fn index_rejects_full_opponent_side() {
    let line = usage_error(&[
        "index", "4", "4", "4", "4", "4", "4", "4", "4", "4", "4", "4", "4",
    ]);
    assert!(line.to_lowercase().contains("opponent"), "{line}");
    let line = usage_error(&[
        "index", "0", "0", "0", "0", "0", "0", "1", "1", "1", "1", "1", "1", "--json",
    ]);
    assert!(line.to_lowercase().contains("opponent"), "{line}");
}

#[test]
fn position_rejects_index_outside_layer() {
    usage_error(&["position", "16", "12685179"]);
    usage_error(&["position", "16", "12685179", "--json"]);
    usage_error(&["position", "0", "1"]);
    usage_error(&["position", "48", "203648015935"]);
    usage_error(&["position", "48", "18446744073709551615"]);
    usage_error(&["position", "48", "18446744073709551616"]);
}

#[test]
fn position_rejects_bad_layers_and_indices() {
    usage_error(&["position", "49", "0"]);
    usage_error(&["position", "abc", "0"]);
    usage_error(&["position", "-1", "0"]);
    usage_error(&["position", "4294967296", "0"]);
    usage_error(&["position", "16", "abc"]);
    usage_error(&["position", "16", "-1"]);
    usage_error(&["position", "16", "1.5"]);
}

#[test]
fn bench_prints_per_layer_figures_and_the_memory_rate() {
    let dir = std::env::temp_dir().join(format!("awari-cli-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let out = ok(&[
        "bench",
        "--max-seeds",
        "8",
        "--from",
        "6",
        "--threads",
        "1",
        "--dir",
        d,
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() >= 6 && w[0].parse::<u32>().is_ok() && w[1].parse::<u64>().is_ok())
        .collect();
    let layers: Vec<&str> = rows.iter().map(|w| w[0]).collect();
    assert_eq!(layers, ["6", "7", "8"], "{out}");
    // Layer 8 has 75,504 positions (data/layer-sizes.csv).
    assert_eq!(rows[2][1], "75504", "{out}");
    assert!(out.contains("random read-modify-write"), "{out}");
    assert!(out.contains("1 thread(s):"), "{out}");

    let out = ok(&["bench", "--rmw-only", "--max-seeds", "12", "--threads", "2"]);
    assert!(out.contains("the state of layer 12"), "{out}");
    assert!(out.contains("2 thread(s):"), "{out}");
    let line = usage_error(&["bench", "--max-seeds", "8", "--dir", "/"]);
    assert!(line.contains("exists"), "{line}");
}

/// Layer 40 refused for its memory by `--memory-limit`, the same on any
/// machine (the limit is not the machine's memory). The folder's manifest
/// lists layers 0..=39 (13..=39 only on paper: the limit is checked before
/// anything is read or written), so layer 40 is the first to build.
#[test]
fn layer_40_is_refused_by_the_memory_limit_on_any_machine() {
    use awari_egdb::error::human;
    use awari_egdb::store::Manifest;
    let dir = common::full_copy("awari-cli-layer40-");
    let mut m = Manifest::load(&dir).unwrap().unwrap();
    let top = m.layer(common::MAX).expect("the top layer").clone();
    for n in common::MAX + 1..=39 {
        let size = awari_egdb::index::layer_size(n);
        let mut e = top.clone();
        e.seeds = n;
        e.positions = size;
        e.score_histogram = vec![0; 2 * n as usize + 1];
        for (stem, f) in [
            ("scores", Some(&mut e.scores)),
            ("lower", e.lower.as_mut()),
            ("upper", e.upper.as_mut()),
        ] {
            let f = f.expect("an envelope folder");
            f.name = format!("{stem}.{n}");
            f.bytes = size;
        }
        e.dist = None;
        m.put(e);
    }
    m.store(&dir).unwrap();
    let before = std::fs::read(dir.join("manifest.json")).unwrap();
    let names = |d: &std::path::Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "build.lock")
            .collect();
        v.sort();
        v
    };
    let files = names(&dir);
    // The least a build needs: the compact solver's byte per position,
    // then the distance pass's two.
    let needed = awari_egdb::solve::compact::cost(40, 1, false)
        .estimate
        .max(awari_egdb::solve::distance::cost(40).estimate);
    // A limit of all the machine's memory (a larger one is refused as such).
    let mib = awari_egdb::mem::total_memory().expect("/proc/meminfo") >> 20;
    let limit: u64 = mib << 20;
    assert!(needed > limit, "layer 40 needs {needed} bytes?");
    let flag = format!("{mib}MiB");
    let line = usage_error(&[
        "build",
        "--max-seeds",
        "40",
        "--db",
        common::s(&dir),
        "--memory-limit",
        &flag,
        "--quiet",
    ]);
    for part in [
        "layer 40 needs",
        &human(needed),
        &human(limit),
        "the memory limit",
        "--max-seeds 39",
    ] {
        assert!(line.contains(part), "{part:?} missing from {line:?}");
    }
    assert_eq!(std::fs::read(dir.join("manifest.json")).unwrap(), before);
    assert_eq!(names(&dir), files, "the refused build wrote files");
}

// ---------------------------------------------------------------------------
// `awari build`: progress without a terminal, and refusals that leave
// nothing behind.

/// An observer that adds up the units of work of each layer: (layer, units
/// announced, units reported, solver was compact).
#[derive(Default)]
struct Units(std::sync::Mutex<Vec<(u32, u64, u64, bool)>>);
impl awari_egdb::solve::Observer for Units {
    fn advance(&self, k: u64) {
        self.0
            .lock()
            .unwrap()
            .last_mut()
            .expect("a layer started")
            .2 += k;
    }
}
impl awari_egdb::build::BuildObserver for Units {
    fn start(&self, n: u32, _positions: u64, work: u64, compact: bool) {
        self.0.lock().unwrap().push((n, work, 0, compact));
    }
}

#[test]
fn progress_units_add_up_to_the_layers_work_exactly() {
    use awari_egdb::build::Solver;
    for solver in [Solver::Memory, Solver::Compact] {
        for envelope in [true, false] {
            let tmp = tempfile::tempdir().unwrap();
            let obs = Units::default();
            let mut opts = common::options(&tmp.path().join("db"), 11, envelope);
            opts.solver = solver;
            opts.distance = true;
            awari_egdb::build::build(&opts, &obs).unwrap();
            let units = obs.0.into_inner().unwrap();
            assert_eq!(units.len(), 12);
            let compact = solver == Solver::Compact;
            for (n, work, done, was_compact) in units {
                // The distance pass: one unit a position for its first
                // pass, one for its breadth-first steps.
                let want = 2 * awari_egdb::index::layer_size(n)
                    + if compact {
                        awari_egdb::solve::compact::work_units(n, envelope)
                    } else {
                        awari_egdb::solve::memory::work_units(n, envelope)
                    };
                assert_eq!(was_compact, compact);
                assert_eq!(work, want, "layer {n}, envelope {envelope}, {solver:?}");
                assert_eq!(done, want, "layer {n}, envelope {envelope}, {solver:?}");
            }
        }
    }
}

#[test]
fn build_without_a_terminal_prints_real_progress() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("db");
    let o = awari(
        &["build", "--max-seeds", "16", "--db", out.to_str().unwrap()],
        None,
    );
    assert!(o.status.success());
    let stderr = text(&o.stderr);
    // Small layers take no time: one line each, when done.
    for n in 0..=12 {
        let mine: Vec<&str> = stderr
            .lines()
            .filter(|l| {
                l.starts_with(&format!("layer {n} ")) || l.starts_with(&format!("layer {n}:"))
            })
            .collect();
        assert_eq!(mine.len(), 1, "layer {n}: {mine:#?}");
        assert!(
            mine[0].starts_with(&format!("layer {n} done: ")),
            "{mine:?}"
        );
    }
    // A layer of seconds: a line per phase, each phase named once.
    let phases: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("layer 16: "))
        .filter_map(|l| l.split_once(" (at ").map(|(phase, _)| phase))
        .collect();
    assert_eq!(
        phases,
        [
            "envelope exits",
            "envelope",
            "write",
            "score exits",
            "score",
            "distance",
            "write"
        ],
        "{stderr}"
    );
    let line = stderr
        .lines()
        .find(|l| l.starts_with("layer 16: score ("))
        .unwrap_or_else(|| panic!("no score phase line: {stderr}"));
    // Both exit passes and the envelope sweep (four of the seven units a
    // position, the distance's two included) are done by then.
    assert!(line.contains("57.1% of the layer's work done"), "{line}");
    assert!(!stderr.contains(" 0 settled"), "{stderr}");
}

#[test]
fn build_refuses_bad_arguments_and_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = dir.to_str().unwrap();
    for bad in ["-1", "49", "x"] {
        let line = usage_error(&["build", "--max-seeds", bad, "--out", d]);
        assert!(line.contains("0 to 48"), "{line}");
    }
    let line = usage_error(&[
        "build",
        "--max-seeds",
        "5",
        "--out",
        d,
        "--memory-limit",
        "1MiB",
    ]);
    assert!(
        line.contains("layer 0 needs") && line.contains("--memory-limit must be at least"),
        "{line}"
    );
    assert!(!dir.exists(), "a refused build wrote {}", dir.display());
    let file = tmp.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let line = usage_error(&["build", "--out", file.to_str().unwrap()]);
    assert!(line.contains("not a folder"), "{line}");
    // A limit that a later layer of the range exceeds is refused before the
    // first layer is built, naming that layer and how to go on.
    let line = usage_error(&[
        "build",
        "--max-seeds",
        "20",
        "--db",
        d,
        "--memory-limit",
        "40MiB",
        "--quiet",
    ]);
    assert!(
        line.contains("raise --memory-limit to at least") && line.contains("--max-seeds"),
        "{line}"
    );
    assert!(!dir.exists(), "a refused build wrote {}", dir.display());
    // Nor absurd settings.
    let line = usage_error(&["build", "--db", d, "--memory-limit", "1PiB"]);
    assert!(line.contains("more than this machine has"), "{line}");
    let line = usage_error(&["build", "--db", d, "--threads", "10000"]);
    assert!(line.contains("core(s)"), "{line}");
    let missing = tmp.path().join("no-scratch");
    let line = usage_error(&[
        "build",
        "--max-seeds",
        "3",
        "--db",
        d,
        "--scratch",
        missing.to_str().unwrap(),
    ]);
    assert!(line.contains("no such folder"), "{line}");
    assert!(!dir.exists(), "a refused build wrote {}", dir.display());
}

#[test]
fn every_help_text_lists_the_exit_codes() {
    for cmd in [
        "build",
        "query",
        "verify",
        "check",
        "bench",
        "compress",
        "decompress",
        "recover",
        "index",
        "position",
    ] {
        let help = ok(&[cmd, "--help"]);
        assert!(
            help.contains("Exit status: 0 success; 1 a check failed"),
            "{cmd}: {help}"
        );
    }
    assert!(ok(&["--help"]).contains("Exit status"));
}

/// `--mpi` in a binary built without the `mpi` feature is a usage error
/// that says how to get one, and writes nothing.
#[cfg(not(feature = "mpi"))]
#[test]
fn build_mpi_without_the_feature_says_how_to_get_it() {
    use common::{awari_status, s};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let (_, err) = awari_status(&["build", "--mpi", "--max-seeds", "2", "--out", s(&dir)], 2);
    assert!(
        err.contains("built without MPI") && err.contains("--features mpi"),
        "{err}"
    );
    assert!(!dir.exists());
}

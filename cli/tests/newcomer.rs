//! What a newcomer tripped on in a fresh clone, one test each: damaged
//! values never shown as scores, a table truncated under a reader, plain
//! one-line errors for bad arguments, one folder flag, and the refusals
//! that name what to do.

mod common;

use awari_egdb::index;
use awari_egdb::probe::Database;
use awari_egdb::rules::AWARI;
use awari_egdb::store::StoreError;
use awari_egdb::ErrorKind;
use common::{awari, awari_status, full_copy, ok, s, scratch, usage_error, vu_copy};
use std::fs;

/// The board of the README's example, at index 100 of layer 12.
fn position_12() -> [String; 12] {
    let p = index::unrank(12, 100).unwrap();
    p.0.map(|v| v.to_string())
}

fn args<'a>(head: &[&'a str], pits: &'a [String; 12]) -> Vec<&'a str> {
    head.iter()
        .copied()
        .chain(pits.iter().map(|p| p.as_str()))
        .collect()
}

/// A byte outside `-n..=n` is damage (exit 1, naming the file and the
/// entry), in our folders and in VU folders, in `query` and in the moves'
/// worth that `play` shows.
#[test]
fn damaged_values_are_never_shown_as_scores() {
    for vu in [false, true] {
        let dir = if vu {
            vu_copy("awari-newcomer-bad-vu-")
        } else {
            full_copy("awari-newcomer-bad-")
        };
        let path = dir.join("scores.12");
        let mut bytes = fs::read(&path).unwrap();
        bytes[100] = 100;
        fs::write(&path, &bytes).unwrap();
        let pits = position_12();
        let (out, err) = awari_status(&args(&["query", "--db", s(&dir)], &pits), 1);
        assert!(!out.contains("+100"), "{out}");
        assert!(
            err.contains("scores.12") && err.contains("entry 100 holds 100"),
            "{err}"
        );
        // A position one capture above reads the damaged entry as a worth.
        let db = Database::open(&dir).unwrap();
        let above = (0..index::layer_size(14))
            .map(|g| index::unrank(14, g).unwrap())
            .find(|p| {
                p.moves(&AWARI).legal().any(|m| {
                    m.captured == 2 && m.child.mover_seeds() > 0 && index::rank(&m.child) == 100
                })
            })
            .expect("a capture into entry 100 of layer 12");
        match db.moves(&above) {
            Err(e) if matches!(e.cause(), Some(StoreError::BadValue { .. })) => {
                assert_eq!(e.kind(), ErrorKind::Damaged)
            }
            other => panic!("vu {vu}: want BadValue, got {other:?}"),
        }
    }
}

/// A table shortened under an open database (a `Database::open`, which
/// reads with `pread`) is an error on the next probe, never a crash.
#[test]
fn a_table_truncated_under_a_reader_is_an_error() {
    let dir = full_copy("awari-newcomer-trunc-");
    let db = Database::open(&dir).unwrap();
    let p = index::unrank(12, index::layer_size(12) - 1).unwrap();
    db.score(&p).unwrap();
    fs::OpenOptions::new()
        .write(true)
        .open(dir.join("scores.12"))
        .unwrap()
        .set_len(10)
        .unwrap();
    let e = db.score(&p).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Damaged, "{e}");
    assert!(e.to_string().contains("scores.12"), "{e}");
}

/// Argument errors are one `awari:` line, exit 2, like every other error.
#[test]
fn argument_errors_are_one_line() {
    for bad in [
        &["query", "--pv", "-1", "1", "1"][..],
        &["check", "--layers", "3-5"],
        &["stats", "--bogus"],
        &["qurey"],
        &["build", "--max-seeds"],
    ] {
        let out = awari(bad, None);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{bad:?}: {err}");
        assert!(err.starts_with("awari: "), "{bad:?}: {err}");
    }
    // A reversed range names the range to write instead.
    let line = usage_error(&["check", "--layers", "5..3"]);
    assert!(line.contains("3..=5"), "{line}");
    let line = usage_error(&["check", "--layers", "5..=3"]);
    assert!(
        line.contains("empty range") && line.contains("3..=5"),
        "{line}"
    );
}

/// `--db` is the folder flag of every command, defaulting to `$AWARI_PATH`.
#[test]
fn every_command_takes_the_folder_from_awari_path() {
    let dir = full_copy("awari-newcomer-env-");
    for cmd in [
        &["check", "--layers", "3"][..],
        &["stats", "--layers", "3"],
        &["verify", "--checksums", common::KNOWN_GOOD, "--layers", "3"],
    ] {
        let out = common::awari_in(cmd, None, &[("AWARI_PATH", dir.as_os_str())], None);
        assert!(
            out.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let missing = scratch("awari-newcomer-nofolder-").join("absent");
    let (_, err) = awari_status(&["stats", "--db", s(&missing)], 2);
    assert!(err.contains("no such folder"), "{err}");
}

/// A board of 47 seeds has no table: refused by every command that takes
/// a board or a layer.
#[test]
fn forty_seven_seeds_are_refused_everywhere() {
    let mut pits = vec!["0".to_string(); 12];
    pits[0] = "47".into();
    let refs: Vec<&str> = pits.iter().map(|p| p.as_str()).collect();
    for cmd in [vec!["index"], vec!["query", "--db", s(common::db_dir())]] {
        let mut a = cmd.clone();
        a.extend(&refs);
        let line = usage_error(&a);
        assert!(line.contains("47 seeds cannot occur"), "{cmd:?}: {line}");
    }
    let line = usage_error(&["position", "47", "0"]);
    assert!(line.contains("47 seeds cannot occur"), "{line}");
}

/// A folder of ours that lost its manifest: `build` points to `recover`,
/// as `query` does, and `recover` keeps every damaged manifest it set
/// aside.
#[test]
fn a_lost_manifest_points_to_recover_which_keeps_old_copies() {
    let dir = full_copy("awari-newcomer-lost-");
    fs::remove_file(dir.join("manifest.json")).unwrap();
    let line = usage_error(&["build", "--max-seeds", "12", "--db", s(&dir), "--quiet"]);
    assert!(line.contains("awari recover"), "{line}");
    fs::write(dir.join("manifest.json"), b"damaged once").unwrap();
    fs::write(dir.join("manifest.json.damaged"), b"damaged before").unwrap();
    awari_status(&["recover", "--db", s(&dir)], 0);
    assert_eq!(
        fs::read(dir.join("manifest.json.damaged")).unwrap(),
        b"damaged before"
    );
    assert_eq!(
        fs::read(dir.join("manifest.json.damaged.1")).unwrap(),
        b"damaged once"
    );
}

/// `stats --plot` into a folder that does not exist: the plain reason.
#[test]
fn a_plot_that_cannot_be_written_says_why() {
    let dir = full_copy("awari-newcomer-plot-");
    let (_, err) = awari_status(
        &[
            "stats",
            "--db",
            s(&dir),
            "--plot",
            "/nonexistent/folder/s.png",
        ],
        2,
    );
    assert!(err.contains("No such file or directory"), "{err}");
    assert!(
        !err.contains("ImageError") && !err.contains("Os {"),
        "{err}"
    );
}

/// The names of the files of `dir`, sorted.
fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `recover` on a VU folder (`scores.n` only, no envelope, no manifest) is
/// refused with one line, exit 2, and writes nothing there.
#[test]
fn recover_refuses_a_vu_folder_and_writes_nothing() {
    let dir = vu_copy("awari-newcomer-recover-vu-");
    let before = listing(&dir);
    let scores = fs::read(dir.join("scores.12")).unwrap();
    let line = usage_error(&["recover", "--db", s(&dir)]);
    assert!(
        line.contains("no manifest.json") && line.contains("VU dataset"),
        "{line}"
    );
    assert_eq!(listing(&dir), before);
    assert!(!dir.join("manifest.json").exists());
    assert_eq!(fs::read(dir.join("scores.12")).unwrap(), scores);
}

/// A closed stdout (`awari check | head -1`) ends the command quietly: no
/// panic, no "Broken pipe" message, not the panic's exit status 101. The
/// reading end is closed before the command writes, so every print after
/// the first meets a closed pipe.
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    use std::process::Stdio;
    let db = s(common::db_dir()).to_string();
    let pits = position_12();
    let query = args(&["query", "--db", &db, "--pv", "200"], &pits);
    for cmd in [
        &["check", "--db", &db][..],
        &query,
        &["rules"],
        &["bench", "--rmw-only", "--max-seeds", "8"],
    ] {
        let mut child = common::awari_command()
            .args(cmd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = common::text(&out.stderr);
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{cmd:?}: {err}"
        );
        assert_ne!(out.status.code(), Some(101), "{cmd:?}: {err}");
    }
}

/// A transposition table larger than the machine is refused like a
/// `--memory-limit` larger than the machine: one line, exit 2 (not an
/// allocation failure and abort).
#[test]
fn a_hash_larger_than_the_machine_is_refused() {
    let empty = scratch("awari-newcomer-hash-");
    let huge = "100000000"; // MiB: 95 TiB
    let line = usage_error(&[
        "play",
        "--db",
        s(&empty),
        "--computer",
        "none",
        "--hash",
        huge,
    ]);
    assert!(
        line.contains("--hash") && line.contains("more than this machine has"),
        "{line}"
    );
    let line = usage_error(&[
        "match",
        "--db",
        s(&empty),
        "--a",
        &format!("depth=1,clock=none,hash={huge}"),
        "--b",
        "depth=1,clock=none",
        "--games",
        "1",
    ]);
    assert!(
        line.contains("hash") && line.contains("more than this machine has"),
        "{line}"
    );
}

/// `compress` and `decompress` count tables and files apart and sum each
/// compressed file's size once (a full-form file holds a layer's three
/// tables).
#[test]
fn compress_and_decompress_count_tables_and_files_honestly() {
    let dir = full_copy("awari-newcomer-counts-");
    let d = s(&dir);
    let on_disk = || -> u64 {
        (5..=7)
            .map(|n| {
                fs::metadata(dir.join(format!("tables.{n}.zst")))
                    .unwrap()
                    .len()
            })
            .sum()
    };
    let (out, _) = awari_status(&["compress", "--db", d, "--layers", "5..=7"], 0);
    assert!(out.contains("9 table(s) in 3 compressed file(s)"), "{out}");
    fs::remove_file(dir.join("scores.6")).unwrap();
    for json in [false, true] {
        let mut a = vec!["decompress", "--db", d, "--layers", "5..=7"];
        if json {
            a.push("--json");
        }
        let (out, _) = awari_status(&a, 0);
        if json {
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["tables"], 9, "{out}");
            assert_eq!(v["compressed_files"], 3, "{out}");
            assert_eq!(v["bytes"], on_disk(), "{out}");
            let raw: u64 = (5..=7).map(|n| 3 * awari_egdb::index::layer_size(n)).sum();
            assert_eq!(v["raw_bytes"], raw, "{out}");
        } else {
            assert!(out.contains("9 table(s) in 3 compressed file(s)"), "{out}");
            // One row per compressed file.
            assert_eq!(out.matches("tables.6.zst").count(), 1, "{out}");
        }
    }
    assert!(dir.join("scores.6").exists());
}

/// `play --record FILE` does not replace an existing file, unless the game
/// was loaded from it or `--force` is given.
#[test]
fn play_refuses_to_replace_an_existing_record() {
    let dir = scratch("awari-newcomer-record-");
    let empty = dir.join("no-tables");
    let record = dir.join("game.txt");
    fs::write(&record, "precious\n").unwrap();
    let base = [
        "play",
        "--db",
        s(&empty),
        "--computer",
        "none",
        "--record",
        s(&record),
    ];
    let line = usage_error(&base);
    assert!(
        line.contains("exists") && line.contains("--force"),
        "{line}"
    );
    assert_eq!(fs::read_to_string(&record).unwrap(), "precious\n");
    // --force replaces it.
    let mut forced = base.to_vec();
    forced.push("--force");
    let out = awari(&forced, Some("A\nquit\n"));
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let rec = fs::read_to_string(&record).unwrap();
    assert!(
        rec.starts_with("# awari game record") && rec.contains("\nA\n"),
        "{rec}"
    );
    // A game loaded from the file goes on in it.
    let mut resumed = base.to_vec();
    resumed.extend(["--game", s(&record)]);
    let out = awari(&resumed, Some("a\nquit\n"));
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let rec = fs::read_to_string(&record).unwrap();
    assert!(rec.contains("\nA\na\n"), "{rec}");
}

/// A missing required argument is named.
#[test]
fn missing_arguments_are_named() {
    let line = usage_error(&["position"]);
    assert!(
        line.contains("<SEEDS>") && line.contains("<INDEX>"),
        "{line}"
    );
    let line = usage_error(&["position", "12"]);
    assert!(
        line.contains("<INDEX>") && !line.contains("<SEEDS>"),
        "{line}"
    );
    let line = usage_error(&["match", "--b", "depth=1,clock=none"]);
    assert!(line.contains("--a <SETTINGS>"), "{line}");
}

/// `check --json` on a damaged table prints its report, naming the damage,
/// and exits 1.
#[test]
fn check_json_reports_damage() {
    let dir = full_copy("awari-newcomer-check-json-");
    let path = dir.join("scores.9");
    let mut bytes = fs::read(&path).unwrap();
    bytes[0] ^= 1;
    fs::write(&path, &bytes).unwrap();
    let (out, err) = awari_status(&["check", "--db", s(&dir), "--json"], 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["ok"], false, "{out}");
    assert_eq!(v["damaged"], true, "{out}");
    assert!(v["error"].as_str().unwrap().contains("scores.9"), "{out}");
    assert!(err.contains("scores.9"), "{err}");
}

/// `compress --layers` (and `decompress --layers`) on layers that are not
/// built is refused, naming what is built.
#[test]
fn compressing_layers_that_are_not_built_is_refused() {
    let dir = full_copy("awari-newcomer-compress-none-");
    for cmd in ["compress", "decompress"] {
        let line = usage_error(&[cmd, "--db", s(&dir), "--layers", "30..=31"]);
        assert!(
            line.contains("30..=31") && line.contains("0..=12"),
            "{cmd}: {line}"
        );
    }
}

/// `query --verify` on a folder without checksums says so.
#[test]
fn query_verify_on_a_vu_folder_says_there_is_nothing_to_verify() {
    let dir = vu_copy("awari-newcomer-query-verify-");
    let pits = position_12();
    let (out, err) = awari_status(&args(&["query", "--verify", "--db", s(&dir)], &pits), 0);
    assert!(out.contains("score"), "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no checksum to verify"), "{err}");
    // Ours: verified, nothing said.
    let (_, err) = awari_status(
        &args(&["query", "--verify", "--db", s(common::db_dir())], &pits),
        0,
    );
    assert!(err.is_empty(), "{err}");
}

/// The known-good lists are built into the binary (`--checksums known`),
/// so a binary run away from the repository has them, and the hints name
/// them that way.
#[test]
fn the_known_good_lists_are_built_in() {
    let dir = full_copy("awari-newcomer-known-");
    let elsewhere = scratch("awari-newcomer-cwd-");
    let out = common::awari_in(
        &["verify", "--db", s(&dir), "--checksums", "known"],
        None,
        &[],
        Some(&elsewhere),
    );
    let text = common::text(&out.stdout);
    assert!(out.status.success(), "{text}{}", common::text(&out.stderr));
    assert!(text.contains("equal the known-good checksums"), "{text}");
    fs::remove_file(dir.join("manifest.json")).unwrap();
    let pits = position_12();
    let (_, err) = awari_status(&args(&["query", "--db", s(&dir)], &pits), 2);
    assert!(
        err.contains("--checksums known") && !err.contains("data/known-good.csv"),
        "{err}"
    );
    let out = common::awari_in(
        &["recover", "--db", s(&dir), "--checksums", "known"],
        None,
        &[],
        Some(&elsewhere),
    );
    let text = common::text(&out.stdout);
    assert!(out.status.success(), "{text}{}", common::text(&out.stderr));
    assert!(text.contains("known-good checksums"), "{text}");
}

/// `play --from` takes the opening, as a record's `start` line does.
#[test]
fn play_starts_from_the_opening() {
    let empty = scratch("awari-newcomer-opening-").join("none");
    let mut a = vec!["play", "--db", s(&empty), "--computer", "none", "--from"];
    a.extend(["4"; 12]);
    let out = awari(&a, Some("A\nquit\n"));
    let text = common::text(&out.stdout);
    assert!(out.status.success(), "{text}{}", common::text(&out.stderr));
    assert!(text.contains("South plays A"), "{text}");
}

/// A damaged byte inside the score range is still damage when it puts the
/// score outside its own envelope: `query` and the library's `envelope`
/// say so (exit 1), never print it as a score.
#[test]
fn a_score_outside_its_envelope_is_damage() {
    let dir = full_copy("awari-newcomer-envelope-");
    let upper = fs::read(dir.join("upper.12")).unwrap();
    let g = (0..upper.len())
        .find(|&g| (upper[g] as i8) < 12)
        .expect("an entry with room above its upper end");
    let mut scores = fs::read(dir.join("scores.12")).unwrap();
    scores[g] = (upper[g] as i8 + 1) as u8;
    fs::write(dir.join("scores.12"), &scores).unwrap();
    let pits = index::unrank(12, g as u64)
        .unwrap()
        .0
        .map(|v| v.to_string());
    let (out, err) = awari_status(&args(&["query", "--db", s(&dir)], &pits), 1);
    assert!(!out.contains("envelope"), "{out}");
    assert!(
        err.contains("outside its envelope") && err.contains("scores.12"),
        "{err}"
    );
    let db = Database::open(&dir).unwrap();
    let e = db
        .envelope(&index::unrank(12, g as u64).unwrap())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Damaged, "{e}");
}

/// `verify --checksums` names a missing table missing, not "differ".
#[test]
fn verify_calls_a_missing_table_missing() {
    let dir = full_copy("awari-newcomer-verify-missing-");
    fs::remove_file(dir.join("lower.5")).unwrap();
    let (out, err) = awari_status(&["verify", "--db", s(&dir), "--checksums", "known"], 1);
    assert!(out.contains("lower.5: missing"), "{out}");
    assert!(
        err.contains("1 table(s) missing") && err.contains("lower.5") && !err.contains("differ"),
        "{err}"
    );
}

/// `compress --dont-care` without `--scores-only` names the missing flag
/// (it used to fail on a temporary file and call the folder damaged).
#[test]
fn dont_care_without_scores_only_names_the_flag() {
    let dir = full_copy("awari-newcomer-dont-care-");
    let line = usage_error(&["compress", "--db", s(&dir), "--format", "4", "--dont-care"]);
    assert!(line.contains("--scores-only"), "{line}");
    assert!(!line.contains("damaged"), "{line}");
    ok(&["verify", "--db", s(&dir), "--checksums", "known"]);
}

/// `stats --plot FILE` replaces FILE only once the new plot is whole: one
/// cut short (here by a file size limit, as a full disk would) leaves the
/// old file as it was.
#[test]
fn a_plot_cut_short_leaves_the_old_file_whole() {
    let dir = full_copy("awari-newcomer-plot-");
    let old = dir.join("old.png");
    let bytes: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
    fs::write(&old, &bytes).unwrap();
    let cmd = format!(
        "ulimit -f 16; exec '{}' stats --db '{}' --plot '{}'",
        env!("CARGO_BIN_EXE_awari"),
        dir.display(),
        old.display()
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &cmd])
        .output()
        .unwrap();
    assert!(!out.status.success(), "a 16-block limit stops the plot");
    assert!(fs::read(&old).unwrap() == bytes, "old.png changed");
    ok(&["stats", "--db", s(&dir), "--plot", s(&old)]);
    assert_eq!(&fs::read(&old).unwrap()[..4], b"\x89PNG");
}

/// The files the README's examples create in a checkout are ignored by git.
#[test]
fn what_the_examples_create_is_ignored() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let Ok(out) = std::process::Command::new("git")
        .args([
            "-C",
            root,
            "check-ignore",
            "db",
            "db12",
            ".venv",
            "probe",
            "olympiad",
            "abapa12",
        ])
        .output()
    else {
        eprintln!("no git: skipped");
        return;
    };
    if !std::path::Path::new(root).join(".git").exists() {
        eprintln!("not a git checkout: skipped");
        return;
    }
    let listed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(listed.lines().count(), 6, "{listed}");
}

/// The opening (and any board of a layer not built) says which layer it
/// needs and which the folder holds; a board with a full opponent row is
/// answered from its moves, as by the library and the API.
#[test]
fn the_opening_says_which_layer_it_needs() {
    let dir = full_copy("awari-newcomer-opening-needs-");
    let four = ["4"; 12];
    let mut a = vec!["query", "--db", s(&dir)];
    a.extend(four);
    let line = usage_error(&a);
    assert!(
        line.contains("needs layer 48") && line.contains("holds layers 0..=12"),
        "{line}"
    );
    let mut a = vec!["query", "--db", s(&dir), "--json"];
    a.extend(["1"; 12]);
    let v: serde_json::Value = serde_json::from_str(&ok(&a)).unwrap();
    let db = Database::open(&dir).unwrap();
    let want = db.score(&awari_egdb::rules::Position([1; 12])).unwrap();
    assert_eq!(v["score"], want);
    assert!(v["index"].is_null());
}

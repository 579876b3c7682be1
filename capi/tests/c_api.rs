//! The C API (`include/awari_egdb.h`, `src/lib.rs`): the example
//! `examples/c/probe.c` and `tests/c/threads.c`, compiled with the
//! machine's `cc` against `libawari_egdb.a`, give the library's scores,
//! moves and best moves, in one call per board, in a batch and from four
//! threads at once; failures are status codes with messages.

mod support;

use egdb::probe::{Database, Distance};
use egdb::rules::Position;
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use support::{db_dir, random_indexable, s, MAX};

/// Compiles a C file against the static library, once per name.
fn compile(source: &str, name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = support::dl::built("libawari_egdb.a");
    assert!(lib.exists(), "{} was not built", lib.display());
    let out = support::scratch("awari-capi-").join(name);
    let st = Command::new("cc")
        .args(["-O2", "-Wall", "-Werror", "-I"])
        .arg(root.join("include"))
        .arg(root.join(source))
        .arg(lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&out)
        .status()
        .expect("cc (the C compiler) runs");
    assert!(st.success(), "cc {source} failed");
    out
}

fn run(exe: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(exe)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the C program");
    // A program that fails before reading its input closes the pipe
    // first: a broken pipe here is its exit, which the caller checks.
    match child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {e}"),
        _ => {}
    }
    child.wait_with_output().unwrap()
}

fn boards(count: usize, max: u32, seed: u64) -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let n = rng.gen_range(0..=max);
            random_indexable(&mut rng, n)
        })
        .collect()
}

fn lines(ps: &[Position]) -> String {
    ps.iter()
        .map(|p| p.0.map(|c| c.to_string()).join(" ") + "\n")
        .collect()
}

/// What `probe.c` prints for a board, from the library.
fn expected(db: &Database, p: &Position) -> String {
    let moves = db.moves(p).unwrap();
    let best = db.best_moves(p).unwrap();
    let distance = match db.distance(p).unwrap() {
        Some(Distance::Plies(k)) => k as i32,
        Some(Distance::Endless) => -1,
        None => -2,
    };
    let mut s = format!(
        "score {} distance {distance} best {} moves",
        db.score(p).unwrap(),
        best.first().map_or(-1, |&b| b as i32)
    );
    for m in moves.iter().filter(|m| m.legal) {
        s += &format!(" {}:{}", m.pit, m.score.unwrap());
    }
    s
}

/// Runs the example on `count` random boards of 0..=`max` seeds from
/// standard input and on one from its arguments; every line must be the
/// library's answer from the same folder.
fn the_example_agrees(dir: &Path, max: u32, count: usize, seed: u64) {
    let db = Database::open(dir).unwrap();
    let exe = compile("examples/c/probe.c", "probe");
    let ps = boards(count, max, seed);
    let out = run(&exe, &[s(dir)], &lines(&ps));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut got = text.lines();
    assert_eq!(got.next(), Some("rules awari"));
    for p in &ps {
        assert_eq!(got.next(), Some(expected(&db, p).as_str()), "{p}");
    }
    let batch: Vec<String> = ps
        .iter()
        .map(|p| db.score(p).unwrap().to_string())
        .collect();
    assert_eq!(
        got.next(),
        Some(format!("batch {}", batch.join(" ")).as_str())
    );
    // One board from the arguments.
    let p = &ps[7];
    let mut args = vec![s(dir).to_string()];
    args.extend(p.0.iter().map(u8::to_string));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&exe, &args, "");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains(&expected(&db, p)));
}

#[test]
fn the_c_example_gives_the_library_s_answers() {
    the_example_agrees(db_dir(), MAX, 500, 1);
}

/// Layers 0..=16 (scores only, built here: a few seconds), and a copy
/// compressed as an engine ships it (format 4, scores only, the raw
/// tables removed): the example reads both, and both give the raw
/// folder's scores.
#[test]
fn the_c_example_reads_layers_0_to_16_raw_and_compressed() {
    use egdb::codec::Settings;
    use egdb::pack::{self, CompressOptions, Quiet};
    let raw = support::scratch("awari-capi-16-");
    egdb::build::build(&support::options(&raw, 16, false), &egdb::solve::Silent)
        .expect("build 0..=16");
    let packed = support::copy_folder(&raw, "awari-capi-16z-");
    let copts = CompressOptions {
        settings: Settings {
            scores_only: true,
            ..Settings::random_access()
        },
        layers: 0..=48,
        remove_raw: true,
    };
    pack::compress_folder(&packed, &copts, &Quiet).expect("compress");
    assert!(packed.join("scores.16.zst").exists() && !packed.join("scores.16").exists());
    the_example_agrees(&raw, 16, 400, 2);
    the_example_agrees(&packed, 16, 400, 2);
    let (a, b) = (
        Database::open(&raw).unwrap(),
        Database::open(&packed).unwrap(),
    );
    for p in boards(2_000, 16, 3) {
        assert_eq!(a.score(&p).unwrap(), b.score(&p).unwrap(), "{p}");
    }
}

#[test]
fn four_threads_on_one_handle_agree_with_the_library() {
    let dir = db_dir();
    let db = Database::open(dir).unwrap();
    let exe = compile("tests/c/threads.c", "threads");
    let ps = boards(20_000, MAX, 2);
    let out = run(&exe, &[s(dir)], &lines(&ps));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Vec<i8> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let want: Vec<i8> = ps.iter().map(|p| db.score(p).unwrap()).collect();
    assert_eq!(got, want);
}

#[test]
fn failures_are_status_codes_with_messages() {
    let dir = db_dir();
    let exe = compile("examples/c/probe.c", "probe-errors");
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["13", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0"],
            1,
            "layer 13",
        ),
        (
            &["25", "24", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0"],
            1,
            "49 seeds",
        ),
        // A pit over 48 is named by the library, in the words of every
        // front end (`awari query`, the server, Python).
        (
            &["0", "0", "0", "60", "0", "0", "0", "0", "0", "0", "0", "0"],
            1,
            "pit D: 60 seeds; the whole board holds at most 48",
        ),
        (
            &["0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "200"],
            1,
            "pit f: 200 seeds; the whole board holds at most 48",
        ),
        // The example checks what it reads (a byte), as users who copy it
        // should, in the same words.
        (
            &["257", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0"],
            2,
            "pit A: '257' is not a seed count (a whole number from 0 to 48)",
        ),
        (
            &["0", "0", "0", "0", "0", "0", "0", "a", "0", "0", "0", "0"],
            2,
            "pit b: 'a' is not a seed count",
        ),
        (
            &["47", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0"],
            1,
            "47",
        ),
    ];
    for &(pits, code, words) in cases {
        let mut args = vec![s(dir)];
        args.extend(pits);
        let out = run(&exe, &args, "");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{pits:?}: {err}");
        assert!(
            err.starts_with("probe: ") && err.contains(words),
            "{pits:?}: {err}"
        );
    }
    // A board without a Goedel number (a full opponent row) is answered
    // from its moves, as by every other front end.
    let full = [1u8; 12];
    let mut args = vec![s(dir)];
    args.extend(["1"; 12]);
    let out = run(&exe, &args, "1 1 1 1 1 1 1 1 1 1 1 1\n");
    let want = egdb::probe::Database::open(dir)
        .unwrap()
        .score(&egdb::rules::Position(full))
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains(&format!("score {want} ")), "{text}");
    let out = run(&exe, &[s(dir)], "1 1 1 1 1 1 1 1 1 1 1 1\n");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("batch {want}")), "{text}");
    let out = run(&exe, &["/nonexistent/awari-db"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/awari-db"));
    // A batch stops at its first bad board, with its message.
    let out = run(
        &exe,
        &[s(dir)],
        "0 0 0 0 0 1 0 0 0 0 0 0\n13 0 0 0 0 0 0 0 0 0 0 0\n",
    );
    assert_eq!(out.status.code(), Some(1));
    // A line it cannot read is an error naming it, not the end of input.
    for (input, words) in [
        (
            "0 0 0 0 0 1 0 0 0 0 0 0\n0 0 x 0 0 0 0 0 0 0 0 0\n",
            "line 2: pit C: 'x'",
        ),
        ("0 0 0 0 0 1 0 0 0 0 0\n", "line 1: 11 pit counts, not 12"),
        ("0 0 0 0 0 1 0 0 0 0 0 0 0\n", "line 1: more than 12"),
    ] {
        let out = run(&exe, &[s(dir)], input);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{input:?}: {err}");
        assert!(err.contains(words), "{input:?}: {err}");
    }
}

/// `awari_scores_where_built`: boards of layers not built are marked "not
/// available" instead of failing the batch; the others get the library's
/// scores; with `missing` null it is `awari_scores` (which fails).
#[test]
fn a_batch_can_mark_boards_not_available() {
    use support::dl::{api, AWARI_NOT_BUILT, AWARI_OK};
    let c = api();
    let db = Database::open(db_dir()).unwrap();
    let mut ps = boards(20, MAX, 5);
    ps[3] = Position([MAX as u8 + 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    ps[7] = Position([0, 0, 0, 0, 0, 2, 1, 1, 1, 1, 1, 1]); // answered from its moves
    let flat: Vec<u8> = ps.iter().flat_map(|p| p.0).collect();
    let path = std::ffi::CString::new(s(db_dir())).unwrap();
    let mut h = std::ptr::null_mut();
    let mut scores = vec![0i8; ps.len()];
    let mut missing = vec![9u8; ps.len()];
    // SAFETY: valid pointers and lengths; the handle is closed at the end.
    unsafe {
        assert_eq!((c.open)(path.as_ptr(), &mut h), AWARI_OK);
        let r = (c.scores_where_built)(
            h,
            flat.as_ptr(),
            ps.len(),
            scores.as_mut_ptr(),
            missing.as_mut_ptr(),
        );
        assert_eq!(r, AWARI_OK);
        let plain = (c.scores)(h, flat.as_ptr(), ps.len(), scores.clone().as_mut_ptr());
        assert_eq!(plain, AWARI_NOT_BUILT);
        (c.close)(h);
    }
    for (i, p) in ps.iter().enumerate() {
        if i == 3 {
            assert_eq!(missing[i], 1);
        } else {
            assert_eq!(missing[i], 0, "board {i}");
            assert_eq!(scores[i], db.score(p).unwrap(), "board {i}");
        }
    }
}

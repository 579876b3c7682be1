//! Shared by the integration tests and `xt`: one folder of layers 0..=12
//! (with the envelope) built once per test binary, scratch folders that are
//! removed when the test binary exits, and the runners of the `awari`
//! binary ([`awari`], [`awari_in`], [`awari_status`], [`ok`],
//! [`usage_error`]).

#![allow(dead_code)]

pub mod boards;
pub mod compress;
pub mod forge;
pub mod probe;
pub mod server;

use awari_egdb::build::{self, BuildOptions};
use awari_egdb::solve::Silent;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// Layers of the shared test folder.
pub const MAX: u32 = 12;

/// The options of a build of layers `0..=max` into `dir` (no memory limit;
/// the process's peak-RSS counter is left alone), without the distance:
/// these suites compare our folders' scores and envelopes with VU-shaped
/// folders and tables in memory, which have none (the distance has suites
/// of its own: the library's `tests/best_play.rs`, and where a suite
/// turns it on).
pub fn options(dir: &Path, max: u32, envelope: bool) -> BuildOptions {
    BuildOptions {
        rules: awari_egdb::rules::AWARI,
        max_seeds: max,
        db: dir.to_path_buf(),
        envelope,
        distance: false,
        memory_limit: None,
        reset_peak_rss: false,
        solver: Default::default(),
        scratch: None,
        compress_finished: None,
    }
}

/// Folders to remove at exit.
static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

extern "C" fn remove_scratch() {
    if let Ok(dirs) = SCRATCH.lock() {
        for d in dirs.iter() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// A fresh temporary folder that lives until the test binary exits (static
/// `OnceLock`s never drop, so a `TempDir` there would leak).
pub fn scratch(prefix: &str) -> PathBuf {
    static HOOK: OnceLock<()> = OnceLock::new();
    HOOK.get_or_init(|| {
        // SAFETY: registers a plain `extern "C"` function with no arguments.
        unsafe { libc::atexit(remove_scratch) };
    });
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .expect("temporary folder")
        .keep();
    SCRATCH.lock().unwrap().push(dir.clone());
    dir
}

/// Our folder with layers 0..=MAX and the envelope, built on first use.
pub fn db_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch("awari-probe-db-");
        let t0 = Instant::now();
        let opts = options(&dir, MAX, true);
        let r = build::build(&opts, &Silent).unwrap_or_else(|e| panic!("build {opts:?}: {e}"));
        assert_eq!(
            r.built,
            build::layers_up_to(MAX),
            "a fresh folder builds every layer"
        );
        eprintln!("layers 0..={MAX} built in {:.2?}", t0.elapsed());
        dir
    })
}

/// A copy of the shared folder holding only `scores.N` (a VU-style folder).
pub fn vu_copy(prefix: &str) -> PathBuf {
    let src = db_dir();
    let dst = scratch(prefix);
    for n in 0..=MAX {
        let name = format!("scores.{n}");
        std::fs::copy(src.join(&name), dst.join(&name)).expect("copy scores");
    }
    dst
}

/// A full copy of the shared folder (manifest and every table).
pub fn full_copy(prefix: &str) -> PathBuf {
    copy_folder(db_dir(), prefix)
}

/// A copy of the folder `src` (manifest and every table, not its build
/// lock) in a new scratch folder.
pub fn copy_folder(src: &Path, prefix: &str) -> PathBuf {
    let dst = scratch(prefix);
    for e in std::fs::read_dir(src).expect("read folder") {
        let e = e.expect("entry");
        let name = e.file_name();
        if name == "build.lock" {
            continue;
        }
        std::fs::copy(e.path(), dst.join(&name)).expect("copy table");
    }
    dst
}

/// The `awari` binary as a command, without `AWARI_PATH`: for a test that
/// needs the child itself (to kill it); the others use [`awari`].
pub fn awari_command() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_awari"));
    cmd.env_remove("AWARI_PATH");
    cmd
}

/// Runs the `awari` binary with `args` (and `stdin` as its standard input,
/// if any), without `AWARI_PATH`; fails the test if it panicked.
pub fn awari(args: &[&str], stdin: Option<&str>) -> std::process::Output {
    awari_in(args, stdin, &[], None)
}

/// [`awari`] with extra environment variables `env` (set after
/// `AWARI_PATH` is removed, so it can be given here) and, if given, `cwd`
/// as the working folder.
pub fn awari_in(
    args: &[&str],
    stdin: Option<&str>,
    env: &[(&str, &OsStr)],
    cwd: Option<&Path>,
) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut cmd = awari_command();
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let mut child = cmd
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the awari binary");
    if let Some(input) = stdin {
        // The command may stop before it reads everything (a bad argument,
        // a script's bad line): a closed pipe is not an error here.
        match child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
        {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {e}"),
            _ => {}
        }
    }
    let out = child.wait_with_output().expect("wait for awari");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "awari {args:?}: {stderr}");
    out
}

/// Runs `awari args` and checks its exit status; returns stdout and stderr.
pub fn awari_status(args: &[&str], code: i32) -> (String, String) {
    let out = awari(args, None);
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(
        out.status.code(),
        Some(code),
        "awari {args:?}: want status {code}\nstdout: {o}\nstderr: {e}"
    );
    (o, e)
}

/// The repository's list of known-good checksums.
pub const KNOWN_GOOD: &str = concat!(
    concat!(env!("CARGO_MANIFEST_DIR"), "/.."),
    "/data/known-good.csv"
);

/// Bytes (a command's output) as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// Runs `awari args`, which must succeed; returns its stdout.
pub fn ok(args: &[&str]) -> String {
    let out = awari(args, None);
    assert!(
        out.status.success(),
        "awari {args:?} failed with {:?}; stderr: {}",
        out.status,
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Runs `awari args`, which must be refused as bad input: status 2,
/// exactly one line on stderr starting with `awari:`, no panic. Returns
/// that line.
pub fn usage_error(args: &[&str]) -> String {
    let out = awari(args, None);
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "awari {args:?}: want exit status 2, got {:?}; stderr: {stderr}",
        out.status
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "awari {args:?}: want exactly one line on stderr, got {stderr:?}"
    );
    assert!(
        lines[0].starts_with("awari:"),
        "awari {args:?}: stderr line must start with 'awari:': {stderr:?}"
    );
    lines[0].to_owned()
}

/// Runs `build_ranks` on `opts[r]` as rank `r` of `opts.len()`, each rank a
/// thread with a pool of `threads`.
#[allow(dead_code)]
pub fn build_as_ranks(
    opts: &[BuildOptions],
    threads: usize,
) -> Vec<Result<awari_egdb::build::BuildReport, awari_egdb::Error>> {
    let comms = awari_egdb::comm::Threads::ranks(opts.len());
    std::thread::scope(|sc| {
        let handles: Vec<_> = comms
            .iter()
            .zip(opts)
            .map(|(comm, o)| {
                sc.spawn(move || {
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap()
                        .install(|| awari_egdb::build::build_ranks(o, comm, &Silent))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

//! `tools/awari_scores.py` (Python + numpy, its own Goedel index) agrees with
//! `awari query` on a few hundred random positions of layers 0..=12.
//!
//! Without numpy the test installs it with pip into the target folder (not
//! the system), so `cargo test --release` works on a fresh machine; if that
//! fails too the test fails: it never skips.

mod common;

use std::path::Path;
use std::process::Command;

/// Where numpy goes when the interpreter lacks it.
fn pydeps() -> std::path::PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("pydeps")
}

fn python() -> Command {
    let mut c = Command::new(std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into()));
    c.env("PYTHONPATH", pydeps());
    c
}

fn has(module: &str) -> Result<bool, String> {
    python()
        .args(["-c", &format!("import {module}")])
        .output()
        .map(|o| o.status.success())
        .map_err(|e| format!("python3 is needed for tools/awari_scores.py: {e}"))
}

/// Installs a Python package into the target folder when the interpreter
/// lacks it; fails the test when that is impossible (it never skips).
fn ensure(module: &str) {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _g = LOCK.lock().unwrap();
    if has(module).unwrap() {
        return;
    }
    let pip = python()
        .args(["-m", "pip", "install", "--quiet", "--target"])
        .arg(pydeps())
        .arg(module)
        .output()
        .expect("run pip");
    assert!(
        pip.status.success() && has(module).unwrap(),
        "{module} is needed for tools/awari_scores.py and pip could not install it: {}",
        String::from_utf8_lossy(&pip.stderr)
    );
}

fn reader(dir: &Path, args: &[&str]) -> std::process::Output {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    python()
        .arg(root.join("tools/awari_scores.py"))
        .arg("--db")
        .arg(dir)
        .args(args)
        .output()
        .expect("run tools/awari_scores.py")
}

/// A copy of the shared folder's layers 0..=5 and its manifest.
fn small_copy(prefix: &str) -> std::path::PathBuf {
    let dir = common::scratch(prefix);
    for n in 0..=5 {
        for t in ["scores", "lower", "upper"] {
            let f = format!("{t}.{n}");
            std::fs::copy(common::db_dir().join(&f), dir.join(&f)).unwrap();
        }
    }
    std::fs::copy(
        common::db_dir().join("manifest.json"),
        dir.join("manifest.json"),
    )
    .unwrap();
    dir
}

/// A 5-seed board and its Goedel index.
const P5: [&str; 12] = ["2", "0", "1", "0", "0", "0", "0", "0", "2", "0", "0", "0"];

#[test]
fn python_reader_refuses_out_of_range_values_and_checks_checksums() {
    ensure("numpy");
    ensure("xxhash");
    let dir = small_copy("awari-py-damaged-");
    let good = reader(&dir, &P5);
    assert!(good.status.success(), "{good:?}");
    let line = String::from_utf8_lossy(&good.stdout).into_owned();
    let g: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    // --verify on an intact table answers the same.
    let mut args = vec!["--verify"];
    args.extend(P5);
    let checked = reader(&dir, &args);
    assert!(checked.status.success(), "{checked:?}");
    assert_eq!(String::from_utf8_lossy(&checked.stdout), line);

    let path = dir.join("scores.5");
    let mut bytes = std::fs::read(&path).unwrap();
    // A value no table of 5 seeds can hold is a damaged table, not a score.
    bytes[g] = 125;
    std::fs::write(&path, &bytes).unwrap();
    let out = reader(&dir, &P5);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("125") && stderr.contains("damaged"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    // A change that stays in range is found by --verify only.
    bytes[g] = 0;
    let next = (g + 1) % bytes.len();
    bytes[next] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    assert!(reader(&dir, &P5).status.success());
    let out = reader(&dir, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("checksum"), "{stderr}");
}

#[test]
fn python_reader_agrees_with_the_binary() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    ensure("numpy");
    let dir = common::db_dir();
    let out = python()
        .arg(root.join("tools/test_awari_scores.py"))
        .arg(dir)
        .arg(env!("CARGO_BIN_EXE_awari"))
        .args(["--count", "400"])
        .current_dir(root)
        .output()
        .expect("run tools/test_awari_scores.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}");
    assert!(out.status.success(), "{:?}\n{stdout}\n{stderr}", out.status);
    let last = stdout.lines().last().unwrap_or("");
    assert!(last.contains(" passed, 0 failed"), "{stdout}");
    let passed: u32 = last.split_whitespace().next().unwrap().parse().unwrap();
    assert!(passed >= 400, "{stdout}");

    // A file under a compressed table's name that is not one: a damaged
    // table (status 1), named.
    ensure("xxhash");
    let zdir = common::scratch("awari-py-zst-");
    std::fs::write(zdir.join("scores.3.zst"), b"not a table").unwrap();
    let out = reader(
        &zdir,
        &["1", "0", "0", "0", "0", "1", "0", "0", "0", "0", "0", "1"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("scores.3.zst") && stderr.contains("damaged"),
        "{stderr}"
    );
}

#[test]
fn python_reader_reads_both_forms_of_format_4() {
    ensure("numpy");
    ensure("xxhash");
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let dir = common::full_copy("awari-py-compressed-");
    let bin = env!("CARGO_BIN_EXE_awari");
    let d = dir.to_str().unwrap();
    // Layers 0..=10 in the full form (`tables.n.zst`), 11..=12 as the
    // scores alone in small blocks; raw tables removed.
    for args in [
        vec![
            "compress",
            "--db",
            d,
            "--layers",
            "0..=10",
            "--format",
            "4",
            "--remove-raw",
            "--quiet",
        ],
        vec![
            "compress",
            "--db",
            d,
            "--layers",
            "11..=12",
            "--format",
            "4",
            "--scores-only",
            "--block-bytes",
            "32",
            "--block-size",
            "256",
            "--remove-raw",
            "--quiet",
        ],
    ] {
        let out = common::awari(&args, None);
        assert!(out.status.success(), "{args:?}: {out:?}");
    }
    assert!(!dir.join("scores.12").exists() && !dir.join("scores.10").exists());
    for (file, tables) in [("tables.10.zst", 0b111u8), ("scores.12.zst", 0b001)] {
        let head = std::fs::read(dir.join(file)).unwrap();
        assert_eq!(&head[8..13], &[4, 0, 0, 0, tables], "{file}");
    }
    let out = python()
        .arg(root.join("tools/test_awari_scores.py"))
        .arg(&dir)
        .arg(bin)
        .args(["--count", "400"])
        .output()
        .expect("run tools/test_awari_scores.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or("");
    assert!(last.contains(" passed, 0 failed"), "{stdout}");
    assert!(last.contains("layers 0..12"), "{stdout}");
    // --verify decodes the table whole and checks it against the manifest,
    // and a damaged block is reported, never returned as a score: in the
    // scores alone and in the full form.
    let p12 = ["2", "1", "1", "1", "1", "1", "2", "1", "1", "1", "0", "0"];
    let p8 = ["2", "1", "1", "1", "1", "0", "1", "0", "1", "0", "0", "0"];
    for (file, board) in [("scores.12.zst", p12), ("tables.8.zst", p8)] {
        let mut args = vec!["--verify"];
        args.extend(board);
        let ok = reader(&dir, &args);
        assert!(ok.status.success(), "{file}: {ok:?}");
        let path = dir.join(file);
        let good = std::fs::read(&path).unwrap();
        let mut z = good.clone();
        // A byte of the scores' first block.
        let t = awari_egdb::codec::CompressedTable::parse(&good[..]).unwrap();
        let at = t.header().data_start() as usize + 5;
        z[at] ^= 0x55;
        std::fs::write(&path, &z).unwrap();
        let out = reader(&dir, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{file}: {stderr}");
        assert!(
            stderr.contains("damaged") && stderr.contains(file),
            "{stderr}"
        );
        std::fs::write(&path, &good).unwrap();
    }
}

/// Without numpy the reader says so in one line on stderr and exits 2 (as
/// for any other missing piece), never with a traceback. A `numpy` package
/// that fails to import stands in for a missing one.
#[test]
fn python_reader_without_numpy_says_how_to_get_it() {
    let fake = common::scratch("awari-py-no-numpy-");
    std::fs::create_dir(fake.join("numpy")).unwrap();
    std::fs::write(
        fake.join("numpy/__init__.py"),
        "raise ImportError(\"No module named 'numpy'\")\n",
    )
    .unwrap();
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let out = python()
        .env("PYTHONPATH", &fake)
        .arg(root.join("tools/awari_scores.py"))
        .arg("--db")
        .arg(&fake)
        .args(P5)
        .output()
        .expect("run tools/awari_scores.py");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("pip install numpy"), "{stderr}");
    assert!(out.stdout.is_empty());
}

/// What the reader does not read is named as such, and it exits as the
/// binary: a file of a retired format (its header written by hand here)
/// as a table neither reads (1), one that leaves "don't care" entries as
/// bad input (2), a truncated table as damage (1).
#[test]
fn python_reader_names_what_it_cannot_read_and_exits_as_the_binary() {
    ensure("numpy");
    ensure("xxhash");
    let retired = |version: u32| {
        let mut b = vec![0u8; 96];
        b[..8].copy_from_slice(b"AWARIZST");
        b[8..12].copy_from_slice(&version.to_le_bytes());
        b
    };
    // A folder of scores alone (no manifest) with a `scores.5.zst` of
    // format 2, and one with a `tables.5.zst` of format 3.
    for (file, version) in [("scores.5.zst", 2u32), ("tables.5.zst", 3)] {
        let dir = common::scratch("awari-py-retired-");
        std::fs::write(dir.join(file), retired(version)).unwrap();
        let out = reader(&dir, &P5);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        for want in [file, &format!("format {version},"), "0.1.0 (git 44b1542)"] {
            assert!(stderr.contains(want), "{want:?}: {stderr}");
        }
        if version == 2 {
            let mut q = vec!["query", "--db", dir.to_str().unwrap()];
            q.extend(P5);
            let b = common::awari(&q, None);
            assert_eq!(b.status.code(), Some(1), "{}", common::text(&b.stderr));
            assert!(common::text(&b.stderr).contains(file));
        }
    }
    // Don't-care entries: only the library's probe resolves them.
    let dir = small_copy("awari-py-dont-care-");
    let d = dir.to_str().unwrap();
    common::ok(&[
        "compress",
        "--db",
        d,
        "--layers",
        "0..=5",
        "--format",
        "4",
        "--scores-only",
        "--dont-care",
        "--remove-raw",
        "--quiet",
    ]);
    let out = reader(&dir, &P5);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("scores.5.zst") && stderr.contains("don't care"),
        "{stderr}"
    );
    // A truncated table: damage, status 1 from both.
    let dir = small_copy("awari-py-truncated-");
    std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("scores.5"))
        .unwrap()
        .set_len(10)
        .unwrap();
    let out = reader(&dir, &P5);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("scores.5") && stderr.contains("damaged"),
        "{stderr}"
    );
    let mut q = vec!["query", "--db", dir.to_str().unwrap()];
    q.extend(P5);
    assert_eq!(common::awari(&q, None).status.code(), Some(1));
}

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

fn has_numpy() -> Result<bool, String> {
    python()
        .args(["-c", "import numpy"])
        .output()
        .map(|o| o.status.success())
        .map_err(|e| format!("python3 is needed for tools/awari_scores.py: {e}"))
}

#[test]
fn python_reader_agrees_with_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !has_numpy().unwrap() {
        let pip = python()
            .args(["-m", "pip", "install", "--quiet", "--target"])
            .arg(pydeps())
            .arg("numpy")
            .output()
            .expect("run pip");
        assert!(
            pip.status.success() && has_numpy().unwrap(),
            "numpy is needed for tools/awari_scores.py and pip could not install it: {}",
            String::from_utf8_lossy(&pip.stderr)
        );
    }
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

    // A layer kept only compressed: a clear refusal naming the way out.
    let zdir = common::scratch("awari-py-zst-");
    std::fs::write(zdir.join("scores.3.zst"), b"not read").unwrap();
    let out = python()
        .arg(root.join("tools/awari_scores.py"))
        .args(["--db"])
        .arg(&zdir)
        .args(["1", "0", "0", "0", "0", "1", "0", "0", "0", "0", "0", "1"])
        .output()
        .expect("run tools/awari_scores.py");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("awari decompress"), "{stderr}");
}

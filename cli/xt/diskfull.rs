//! A full disk mid-build: a clear error, no temporary file left, every
//! finished layer intact, and a resume once there is room ends with the same
//! bytes as a build that never ran out of space.
//!
//! Needs a small tmpfs, which root can mount (as on this project's machines
//! and CI). Where it cannot be mounted the test says so and skips.

use crate::common::{awari, awari_command};
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::process::Stdio;

struct Tmpfs(PathBuf);

impl Tmpfs {
    /// A tmpfs of `size` on `dir`, or why there cannot be one here.
    fn mount(dir: &Path, size: &str) -> Result<Tmpfs, String> {
        fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount a tmpfs of {size} on {}: {:?} {} (it needs root)",
                dir.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn full_disk_keeps_finished_layers_and_resumes() {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("xt-diskfull");
    let _fs = match Tmpfs::mount(&base, "64m") {
        Ok(t) => t,
        Err(why) => {
            eprintln!("diskfull: skipped: {why}");
            return;
        }
    };
    let out = base.join("db");
    let out_s = out.to_str().unwrap();
    // The build checks the disk before it starts, so the disk fills while
    // it runs: it pauses in the middle of layer 10 (`AWARI_PAUSE`), the
    // test takes every free byte, and the build goes on.
    let mut child = awari_command()
        .args(["build", "--max-seeds", "12", "--db", out_s, "--quiet"])
        .env(awari_egdb::fault::PAUSE, "mid-envelope:10")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the build");
    let hold = child.stdin.take();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert_eq!(line, "awari: paused at mid-envelope:10\n");
    let filler = base.join("filler");
    {
        let mut f = fs::File::create(&filler).unwrap();
        let chunk = vec![1u8; 1 << 16];
        while f.write_all(&chunk).is_ok() {}
        let _ = f.sync_all();
    }
    drop(hold);
    let mut err_text = String::new();
    err.read_to_string(&mut err_text).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2), "{err_text}");
    assert!(err_text.contains("No space left on device"), "{err_text}");
    assert_eq!(err_text.lines().count(), 1, "{err_text}");
    let names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.ends_with(".tmp")),
        "temporary files left: {names:?}"
    );
    let m = awari_egdb::store::Manifest::load(&out).unwrap().unwrap();
    let done: Vec<u32> = m.layers.iter().map(|l| l.seeds).collect();
    assert_eq!(
        done,
        (0..=9).collect::<Vec<_>>(),
        "layers finished before the disk filled"
    );
    // What was finished still verifies.
    let o = awari(&["check", "--db", out_s], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    fs::remove_file(&filler).unwrap();

    // With room, the build resumes and ends as an uninterrupted one.
    let o = awari(
        &["build", "--max-seeds", "12", "--out", out_s, "--quiet"],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let whole = base.join("whole");
    let o = awari(
        &[
            "build",
            "--max-seeds",
            "12",
            "--out",
            whole.to_str().unwrap(),
            "--quiet",
        ],
        None,
    );
    assert!(o.status.success());
    for n in 0..=12 {
        for t in ["scores", "lower", "upper"] {
            let f = format!("{t}.{n}");
            assert!(
                fs::read(out.join(&f)).unwrap() == fs::read(whole.join(&f)).unwrap(),
                "{f} differs after the resume"
            );
        }
    }
}

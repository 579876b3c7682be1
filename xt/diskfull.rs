//! A full disk mid-build: a clear error, no temporary file left, every
//! finished layer intact, and a resume once there is room ends with the same
//! bytes as a build that never ran out of space.
//!
//! Needs a small tmpfs, which root can mount (as on this project's machines
//! and CI). Where it cannot be mounted the test fails, saying so; it never
//! passes without running (leave it out with `--skip diskfull`).

use crate::common::awari;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let how = "this test mounts a tmpfs, which needs root \
                   (leave it out with `cargo test --release --test xt -- --skip diskfull`)";
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .unwrap_or_else(|e| panic!("cannot run mount: {e}; {how}"));
        assert!(
            out.status.success(),
            "mount a tmpfs of {size} on {}: {:?} {}; {how}",
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs(dir.to_path_buf())
    }
    fn resize(&self, size: &str) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.0)
            .status()
            .expect("remount")
            .success();
        assert!(ok, "remount tmpfs");
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
    let fs_ = Tmpfs::mount(&base, "2m");
    let out = base.join("db");
    let out_s = out.to_str().unwrap();
    let o = awari(
        &["build", "--max-seeds", "12", "--out", out_s, "--quiet"],
        None,
    );
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.ends_with(".tmp")),
        "temporary files left: {names:?}"
    );
    let m = awari_egdb::table::Manifest::load(&out).unwrap().unwrap();
    let done: Vec<u32> = m.layers.iter().map(|l| l.seeds).collect();
    assert!(!done.is_empty() && done.len() < 13, "{done:?}");
    // What was finished still verifies.
    let o = awari(&["check", "--db", out_s], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));

    // With room, the build resumes and ends as an uninterrupted one.
    fs_.resize("64m");
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

//! `awari build --mpi` under a real `mpirun` (built with `--features mpi`;
//! `.ci/run` installs Open MPI and runs these): any number of ranks makes
//! the known-good tables (of every rule set), a killed rank stops the job
//! and the rerun resumes, ranks started differently refuse.
#![cfg(feature = "mpi")]

mod common;

use common::{awari, s, KNOWN_GOOD};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `mpirun` for `np` ranks of the test binary (as root too, more ranks than
/// cores allowed).
/// The top layer of the builds by 1..=4 ranks (0..=16 took 5 minutes of
/// the CI's 20 with 3 and 4 ranks oversubscribed on 2 cores; cli/xt/ranks.rs
/// builds 0..=16 as ranks in threads).
const MAX: u32 = 14;

fn mpirun(np: usize) -> Command {
    let mut c = Command::new("mpirun");
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        // More ranks than cores: ranks waiting in a collective yield the
        // core instead of spinning.
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .env_remove("AWARI_PATH")
        .args(["--oversubscribe", "-np", &np.to_string()]);
    c
}

fn build_args(dir: &Path, max: u32) -> Vec<String> {
    [
        env!("CARGO_BIN_EXE_awari"),
        "build",
        "--mpi",
        "--max-seeds",
        &max.to_string(),
        "--out",
        s(dir),
        "--threads",
        "1",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect()
}

fn run(c: &mut Command) -> Output {
    c.stdin(Stdio::null()).output().expect("run mpirun")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn assert_known_good(dir: &Path, tables: usize) {
    let o = awari(&["verify", "--db", s(dir), "--checksums", KNOWN_GOOD], None);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(
        out.contains(&format!(
            "all {tables} table(s) equal the known-good checksums"
        )),
        "{out}"
    );
}

/// Layers 0..=14 by 1, 2, 3 and 4 ranks (4 oversubscribed on 2 cores)
/// equal the known-good checksums; the manifest records the ranks.
#[test]
fn one_to_four_ranks_build_the_known_good_tables() {
    for np in 1..=4 {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let t0 = Instant::now();
        let o = run(mpirun(np).args(build_args(&dir, MAX)).arg("-q"));
        assert!(
            o.status.success(),
            "{np} ranks: {}{}",
            text(&o.stdout),
            text(&o.stderr)
        );
        eprintln!("{np} rank(s): layers 0..={MAX} in {:.1?}", t0.elapsed());
        // Scores, the envelope and the distance (rank 0's pass).
        assert_known_good(&dir, 4 * (MAX as usize + 1));
        let m = awari_egdb::store::Manifest::load(&dir).unwrap().unwrap();
        let top = m.layer(MAX).unwrap();
        assert_eq!(top.ranks, (np > 1).then_some(np), "{np} ranks");
        if np == 2 {
            // Every exit and update for another rank's position is sent
            // once, whatever the transport: MPI sends the bytes that ranks
            // as threads of one process send, layer by layer.
            let tmp2 = tempfile::tempdir().unwrap();
            let dir2 = tmp2.path().join("db");
            for rep in common::build_as_ranks(&vec![common::options(&dir2, MAX, true); 2], 1) {
                rep.unwrap();
            }
            let m2 = awari_egdb::store::Manifest::load(&dir2).unwrap().unwrap();
            for n in awari_egdb::build::layers_up_to(MAX) {
                let sent = |m: &awari_egdb::store::Manifest| {
                    m.layer(n).unwrap().io.as_ref().map(|io| io.sent_bytes)
                };
                assert_eq!(sent(&m), sent(&m2), "layer {n}: bytes sent, MPI vs threads");
            }
        }
    }
}

/// Two ranks with every threshold in waves to its end (`AWARI_WAVES=all`,
/// exported to both with `-x`: each wave's updates for the other rank
/// exchanged by MPI) make the known-good tables.
#[test]
fn two_ranks_in_waves_build_the_known_good_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let o = run(mpirun(2)
        .env("AWARI_WAVES", "all")
        .args(["-x", "AWARI_WAVES"])
        .args(build_args(&dir, MAX))
        .arg("-q"));
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    assert_known_good(&dir, 4 * (MAX as usize + 1));
}

/// A rank killed in the middle of a layer stops the job (no hang); the
/// rerun names the layer that was cut short, resumes after the last
/// finished layer and ends with the known-good tables.
#[test]
fn a_killed_rank_stops_the_job_and_the_rerun_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    // The ranks pause in the middle of layer 15's envelope sweep
    // (`AWARI_PAUSE`) and say so: the kill is keyed to the work, not to
    // the clock.
    let mut job = mpirun(2)
        .env(awari_egdb::fault::PAUSE, "mid-envelope:15")
        .args(["-x", awari_egdb::fault::PAUSE])
        .args(build_args(&dir, 16))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mpirun");
    // Rank 0 reads the job's standard input and waits at the point while
    // it is open; the other rank waits for rank 0 in the layer's first
    // exchange after the point.
    let _hold = job.stdin.take();
    let stderr = job.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr).lines() {
            let line = line.unwrap_or_default();
            if line.contains("awari: paused at mid-envelope:15") {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    rx.recv_timeout(Duration::from_secs(300))
        .expect("no rank paused in layer 15");
    // Kill one rank (a child of mpirun running our binary).
    let ranks = Command::new("pgrep")
        .args(["-P", &job.id().to_string(), "-f", "build --mpi"])
        .output()
        .expect("pgrep");
    let pids = text(&ranks.stdout);
    let pid = pids.split_whitespace().last().expect("a rank's pid");
    let killed = Command::new("kill")
        .args(["-9", pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    // The job stops by itself, with an error.
    let t1 = Instant::now();
    let status = loop {
        if let Some(st) = job.try_wait().unwrap() {
            break st;
        }
        assert!(
            t1.elapsed() < Duration::from_secs(60),
            "the job hangs after a rank was killed"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let err = reader.join().expect("stderr reader");
    assert!(!status.success(), "{err}");
    let m = awari_egdb::store::Manifest::load(&dir).unwrap().unwrap();
    assert!(m.layer(14).is_some() && m.layer(15).is_none());
    // The rerun names the layer and resumes.
    let o = run(mpirun(2).args(build_args(&dir, 16)));
    let err = text(&o.stderr);
    assert!(o.status.success(), "{}{err}", text(&o.stdout));
    assert!(
        err.contains("the last build stopped in the middle of layer 15"),
        "{err}"
    );
    assert!(err.contains("reused 15 verified layer(s)"), "{err}");
    assert_known_good(&dir, 68);
}

/// Ranks started with different arguments refuse to start, and say why.
#[test]
fn ranks_started_with_different_arguments_refuse() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut c = mpirun(1);
    c.args(build_args(&dir, 8))
        .args([":", "-np", "1"])
        .args(build_args(&dir, 9));
    let o = run(&mut c);
    let err = text(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("the ranks disagree on the build options"),
        "{err}"
    );
}

/// Every rule set but awari (whose tables the test above checks) by two
/// ranks: layers 0..=12 equal the rule set's known-good list, built in.
#[test]
fn two_ranks_build_every_rule_set_s_known_good_tables() {
    for rules in ["abapa", "olympiad", "awale"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let o = run(mpirun(2)
            .args(build_args(&dir, 12))
            .args(["--rules", rules, "-q"]));
        assert!(
            o.status.success(),
            "{rules}: {}{}",
            text(&o.stdout),
            text(&o.stderr)
        );
        let o = awari(&["verify", "--db", s(&dir), "--checksums", "known"], None);
        let out = text(&o.stdout);
        assert!(o.status.success(), "{rules}: {out}{}", text(&o.stderr));
        assert!(
            // Thirteen layers of four tables: the distance is listed too.
            out.contains("all 52 table(s) equal the known-good checksums"),
            "{rules}: {out}"
        );
    }
}

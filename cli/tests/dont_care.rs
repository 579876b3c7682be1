//! Format 4 files with "don't care" entries: every position of layers
//! 0..=14 probes to its raw score through a folder whose every layer is
//! such a file, whole tables resolve to the raw tables, and the file is
//! refused where a table is read whole without resolving it; `check` and
//! `stats` read it through its resolved scores.

mod common;

use awari_egdb::build;
use awari_egdb::codec::{CompressedTable, Settings};
use awari_egdb::format::Kind;
use awari_egdb::index::{layer_size, unrank};
use awari_egdb::pack::{self, CompressOptions, Quiet};
use awari_egdb::probe::Database;
use awari_egdb::solve::Silent;
use awari_egdb::store::StoreError;
use awari_egdb::store::{Access, StoredTable};
use awari_egdb::ErrorKind;
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::OnceLock;

const MAX: u32 = 14;

/// Layers 0..=MAX (scores only) built into a scratch folder, and a copy
/// compressed to don't-care format 4 files, raw tables removed.
fn folders() -> (PathBuf, PathBuf) {
    static DIRS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    DIRS.get_or_init(make).clone()
}

fn make() -> (PathBuf, PathBuf) {
    let raw = common::scratch("awari-dont-care-raw-");
    let opts = common::options(&raw, MAX, false);
    build::build(&opts, &Silent).unwrap_or_else(|e| panic!("build: {e}"));
    let dc = common::scratch("awari-dont-care-");
    for e in std::fs::read_dir(&raw).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "build.lock" {
            std::fs::copy(e.path(), dc.join(e.file_name())).unwrap();
        }
    }
    let mut settings = Settings::random_access();
    settings.dont_care = true;
    let r = pack::compress_folder(
        &dc,
        &CompressOptions {
            settings,
            layers: 0..=48,
            remove_raw: true,
        },
        &Quiet,
    )
    .unwrap_or_else(|e| panic!("compress: {e}"));
    assert_eq!(r.files.len(), MAX as usize + 1);
    (raw, dc)
}

#[test]
fn every_position_of_layers_0_to_14_probes_to_its_raw_score() {
    let (raw, dc) = folders();
    let db = Database::open(&dc).unwrap();
    let mut left_free = 0u64;
    for n in 0..=MAX {
        let scores = std::fs::read(raw.join(format!("scores.{n}"))).unwrap();
        let file = std::fs::read(dc.join(format!("scores.{n}.zst"))).unwrap();
        let t = CompressedTable::parse(&file[..]).unwrap();
        assert!(t.header().is_dont_care(), "layer {n}");
        assert_eq!(
            t.header().raw_checksum(),
            awari_egdb::format::Checksum::of(&scores),
            "layer {n}: the header holds the raw scores' checksum"
        );
        let stored = t.decompress_all().unwrap();
        left_free += stored.iter().zip(&scores).filter(|(a, b)| a != b).count() as u64;
        // Every entry, probed one at a time (in parallel chunks).
        let size = layer_size(n);
        let bad: u64 = (0..size.div_ceil(4096))
            .into_par_iter()
            .map(|c| {
                let mut bad = 0;
                for g in c * 4096..((c + 1) * 4096).min(size) {
                    let want = scores[g as usize] as i8;
                    if db.score_at(n, g).unwrap() != want {
                        bad += 1;
                    }
                    if g % 7 == 0 {
                        let p = unrank(n, g).unwrap();
                        assert_eq!(db.score(&p).unwrap(), want, "layer {n} entry {g}");
                    }
                }
                bad
            })
            .sum();
        assert_eq!(bad, 0, "layer {n}: probes that differ from the raw score");
        // The whole table, resolved and checked against the header.
        assert_eq!(db.table(n, Kind::Score).unwrap().unwrap(), &scores[..]);
    }
    // The files do leave entries free (else the test proves nothing).
    assert!(
        left_free > 100_000,
        "{left_free} entries stored other values"
    );
}

#[test]
fn a_dont_care_file_is_refused_where_a_table_is_read_whole() {
    let (_, dc) = folders();
    let stored = awari_egdb::store::Stored::Compressed {
        path: dc.join("scores.12.zst"),
        listed: None,
    };
    let t = StoredTable::open(&stored, 12, Kind::Score, None, Access::READ).unwrap();
    assert!(t.is_dont_care());
    let e = t.read_all().unwrap_err();
    assert!(matches!(e.cause(), Some(StoreError::DontCare(_))), "{e}");
    assert_eq!(e.kind(), ErrorKind::Input);
    assert!(t
        .get(0)
        .is_err_and(|e| matches!(e.cause(), Some(StoreError::DontCare(_)))));
    // The stored values are still checked whole (their own checksum).
    t.read_stored().unwrap();
}

#[test]
fn check_and_stats_read_a_dont_care_folder_through_its_resolved_scores() {
    let (_, dc) = folders();
    let dir = dc.to_str().unwrap();
    let (out, _) = common::awari_status(&["check", "--db", dir, "--layers", "10..=12"], 0);
    assert!(out.contains("12"), "{out}");
    common::awari_status(&["stats", "--db", dir, "--layers", "12"], 0);
}

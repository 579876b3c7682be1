//! The rule set travels with the compressed files through the C API: a
//! folder of `scores.n.zst` without manifest (the form an engine ships:
//! format 4, scores alone) of the awale, olympiad or abapa rules opens
//! under the rule set its headers name (`awari_rules`), and
//! `awari_score` gives the built tables' scores. Layers 0..=10.

mod support;

use egdb::codec::Settings;
use egdb::pack::{self, CompressOptions, Quiet};
use egdb::probe::Database;
use egdb::rules::{Position, Rules, ABAPA, AWALE, OLYMPIAD};
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::ffi::{CStr, CString};
use std::path::PathBuf;
use support::dl::{api, AWARI_OK};
use support::{copy_folder, options, random_indexable, s, scratch};

/// The layers of every folder here.
const TOP: u32 = 10;

/// Layers 0..=TOP of `rules` (with the manifest), and what an engine
/// ships of them: their `scores.n.zst` (format 4, scores alone) in a
/// folder of their own.
fn built_and_shipped(rules: &Rules) -> (PathBuf, PathBuf) {
    let built = scratch(&format!("awari-capi-{}-", rules.name));
    let mut o = options(&built, TOP, false);
    o.rules = *rules;
    egdb::build::build(&o, &egdb::solve::Silent).expect("build");
    let packed = copy_folder(&built, "awari-capi-packed-");
    let copts = CompressOptions {
        settings: Settings {
            scores_only: true,
            ..Settings::random_access()
        },
        layers: 0..=48,
        remove_raw: true,
    };
    pack::compress_folder(&packed, &copts, &Quiet).expect("compress");
    let shipped = scratch(&format!("awari-capi-shipped-{}-", rules.name));
    for n in 0..=TOP {
        let f = format!("scores.{n}.zst");
        std::fs::copy(packed.join(&f), shipped.join(&f)).expect("copy");
    }
    (built, shipped)
}

#[test]
fn the_c_api_reads_them_under_their_rules() {
    let c = api();
    for rules in [AWALE, OLYMPIAD, ABAPA] {
        let (built, shipped) = built_and_shipped(&rules);
        let reference = Database::open(&built).unwrap();
        let path = CString::new(s(&shipped)).unwrap();
        let mut db = std::ptr::null_mut();
        let mut rng = StdRng::seed_from_u64(11);
        // SAFETY: a NUL-terminated path and a place for the handle, which
        // is closed below and not used after.
        unsafe {
            assert_eq!((c.open)(path.as_ptr(), &mut db), AWARI_OK, "{}", rules.name);
            let name = CStr::from_ptr((c.rules)(db)).to_str().unwrap();
            assert_eq!(name, rules.name);
            for _ in 0..100 {
                let n = rng.gen_range(0..=TOP);
                let p: Position = random_indexable(&mut rng, n);
                let mut score = 0i8;
                assert_eq!((c.score)(db, p.0.as_ptr(), &mut score), AWARI_OK);
                assert_eq!(score, reference.score(&p).unwrap(), "{}: {p}", rules.name);
            }
            (c.close)(db);
        }
    }
}

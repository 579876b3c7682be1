//! The partitioned build: several ranks (threads of this process, standing
//! in for MPI processes, [`awari_egdb::comm::Threads`]) build the same
//! folder, each its part of every layer, and make the same tables as one
//! process; the ranks must be started alike.

use crate::builder::*;
use crate::common::build_as_ranks;
use awari_egdb::build;
use awari_egdb::build::BuildError;

/// Layers 0..=16 by 2, 3 and 4 ranks equal the known-good checksums; the
/// manifest says how many ranks built each layer of more than one window.
#[test]
fn two_to_four_ranks_build_the_known_good_tables() {
    for ranks in [2, 3, 4] {
        let tmp = tempdir();
        let dir = tmp.path().join("db");
        let o = opts(&dir, 16, true);
        let reports = build_as_ranks(&vec![o.clone(); ranks], 1);
        for (r, rep) in reports.into_iter().enumerate() {
            let rep = rep.unwrap_or_else(|e| panic!("rank {r} of {ranks}: {e}"));
            assert_eq!(rep.built, build::layers_up_to(16), "rank {r}");
        }
        assert_known_good(&dir, 51);
        let m = awari_egdb::store::Manifest::load(&dir).unwrap().unwrap();
        let l16 = m.layer(16).unwrap();
        assert_eq!(l16.ranks, Some(ranks));
        assert_eq!(l16.solver.as_deref(), Some("compact"));
        if ranks == 2 {
            // Every exit and update for another rank's position is sent
            // once, whatever the timing: the same bytes on 2 threads per
            // rank as on 1, layer by layer (to layer 14: 13 and 14 are
            // already of several windows, and 15 and 16 were most of the
            // time of this build).
            let tmp2 = tempdir();
            let dir2 = tmp2.path().join("db");
            for rep in build_as_ranks(&vec![opts(&dir2, 14, true); 2], 2) {
                rep.unwrap();
            }
            let m2 = awari_egdb::store::Manifest::load(&dir2).unwrap().unwrap();
            for n in build::layers_up_to(14) {
                let sent = |m: &awari_egdb::store::Manifest| {
                    m.layer(n).unwrap().io.as_ref().map(|io| io.sent_bytes)
                };
                assert_eq!(sent(&m), sent(&m2), "layer {n}: bytes sent, 1 vs 2 threads");
            }
        }
        // A rerun with the same ranks reuses every layer.
        let again = build_as_ranks(&vec![o.clone(); ranks], 1);
        for rep in again {
            assert!(rep.unwrap().built.is_empty());
        }
    }
}

/// Ranks started with different options or folders refuse to start, and
/// nothing is written.
#[test]
fn ranks_started_differently_refuse() {
    let tmp = tempdir();
    let a = opts(&tmp.path().join("a"), 8, true);
    let mut b = a.clone();
    b.max_seeds = 9;
    for r in build_as_ranks(&[a.clone(), b], 1) {
        match r {
            Err(e) if matches!(e.cause(), Some(BuildError::RanksDisagree(_))) => {
                assert!(e.to_string().contains("build options"), "{e}")
            }
            other => panic!("{other:?}"),
        }
    }
    let c = opts(&tmp.path().join("c"), 8, true);
    for r in build_as_ranks(&[a, c], 1) {
        match r {
            Err(e) if matches!(e.cause(), Some(BuildError::RanksDisagree(_))) => {
                assert!(e.to_string().contains("output folder"), "{e}")
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(!tmp.path().join("a").exists() && !tmp.path().join("c").exists());
}

//! Properties of the index and the rules on random boards (proptest, which
//! shrinks a failure to a small board): `rank` and `unrank` are inverse on
//! every layer 0..=48, sowing conserves seeds plus captures, and the
//! un-moves (`for_each_predecessor`) are exactly the moves taken back.
//!
//! If proptest ever finds a failure it records the seed in
//! `proptest-regressions/`; commit that file with the fix.

use awari_egdb::index::IndexError;
use awari_egdb::index::{goedel, layer_size, rank, unrank};
use awari_egdb::rules::RulesError;
use awari_egdb::rules::{Position, Rules, ABAPA, AWALE, AWARI, MAX_SEEDS, OLYMPIAD, PITS, PRESETS};
use proptest::prelude::*;

/// A board of 0..=48 seeds whose opponent side is not full (some opponent
/// pit is empty), that is a position of the database: each seed dropped
/// into one of the 11 pits other than the empty one.
fn spread_board() -> impl Strategy<Value = Position> {
    (0..=MAX_SEEDS, 6..PITS).prop_flat_map(|(n, empty)| {
        prop::collection::vec(0..PITS - 1, n as usize).prop_map(move |seeds| {
            let mut b = [0u8; PITS];
            for i in seeds {
                b[if i >= empty { i + 1 } else { i }] += 1;
            }
            Position(b)
        })
    })
}

/// A board with a few large pits (which sow round the board), at most
/// `cap` seeds, and an empty opponent pit.
fn lumpy_board() -> impl Strategy<Value = Position> {
    (
        prop::array::uniform12(prop_oneof![Just(0u8), 0u8..=4, 0u8..=48]),
        6..PITS,
        0..=MAX_SEEDS,
    )
        .prop_map(|(mut b, empty, cap)| {
            b[empty] = 0;
            let mut total: u32 = b.iter().map(|&x| x as u32).sum();
            while total > cap {
                let i = (0..PITS).max_by_key(|&i| b[i]).unwrap();
                let cut = (total - cap).min(b[i] as u32);
                b[i] -= cut as u8;
                total -= cut;
            }
            Position(b)
        })
}

/// A position of the database, of any seed count 0..=48.
fn position() -> impl Strategy<Value = Position> {
    prop_oneof![spread_board(), lumpy_board()]
}

/// A board of at most 48 seeds whose opponent pits all hold seeds: no
/// position of the database.
fn full_opponent_board() -> impl Strategy<Value = Position> {
    prop::array::uniform6(1u8..=8).prop_flat_map(|opp| {
        let room = MAX_SEEDS - opp.iter().map(|&x| x as u32).sum::<u32>();
        prop::collection::vec(0..6usize, 0..=room as usize).prop_map(move |seeds| {
            let mut b = [0u8; PITS];
            b[6..].copy_from_slice(&opp);
            for i in seeds {
                b[i] += 1;
            }
            Position(b)
        })
    })
}

/// Any board of at most 48 seeds, the opponent's side full or not.
fn any_board() -> impl Strategy<Value = Position> {
    prop_oneof![position(), full_opponent_board()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// `unrank(rank(p)) == p`, inside the layer, and `goedel` agrees.
    #[test]
    fn rank_then_unrank_gives_the_board_back(p in position()) {
        prop_assert!(p.is_indexable());
        let n = p.seeds();
        let g = rank(&p);
        prop_assert!(g < layer_size(n), "[{}]: index {} of {}", p, g, layer_size(n));
        prop_assert_eq!(unrank(n, g).ok(), Some(p));
        prop_assert_eq!(goedel(&p).ok(), Some(g));
    }

    /// `rank(unrank(n, g)) == g` for every index of every layer, and the
    /// first index past the layer is refused.
    #[test]
    fn unrank_then_rank_gives_the_index_back(
        (n, g) in (0..=MAX_SEEDS).prop_flat_map(|n| (Just(n), 0..layer_size(n)))
    ) {
        let p = unrank(n, g).unwrap();
        prop_assert_eq!(p.seeds(), n);
        prop_assert!(p.is_indexable(), "[{}]", p);
        prop_assert_eq!(rank(&p), g);
        let past = unrank(n, layer_size(n));
        prop_assert!(
            past.as_ref().is_err_and(|e| matches!(e.cause(), Some(IndexError::IndexOutOfRange { .. }))),
            "{:?}",
            past
        );
    }

    /// A board whose opponent side is full has no Goedel number.
    #[test]
    fn a_full_opponent_side_has_no_index(p in full_opponent_board()) {
        prop_assert!(p.seeds() <= MAX_SEEDS);
        prop_assert!(!p.is_indexable(), "[{}]", p);
        prop_assert!(goedel(&p).is_err_and(|e| matches!(e.cause(), Some(RulesError::OpponentFull))));
        prop_assert!(Position::indexable(p.0).is_err_and(|e| matches!(e.cause(), Some(RulesError::OpponentFull))));
    }

    /// Sowing keeps every seed: on the board or captured (0, or at least
    /// 2); the origin pit is empty after it; a move's child is the sown
    /// board mirrored; a mover with seeds has a legal move.
    #[test]
    fn sowing_conserves_seeds_and_captures(p in any_board()) {
        let n = p.seeds();
        let moves = p.moves(&AWARI);
        prop_assert_eq!(moves.as_slice().len(), p.0[..6].iter().filter(|&&x| x > 0).count());
        for m in moves.as_slice() {
            let pit = m.pit as usize;
            let (b, captured) = p.sow(pit);
            prop_assert_eq!(captured, m.captured);
            prop_assert!(captured == 0 || captured >= 2, "[{}] pit {}: {}", p, pit, captured);
            prop_assert_eq!(b.iter().map(|&x| x as u32).sum::<u32>() + captured as u32, n);
            prop_assert_eq!(b[pit], 0, "[{}] pit {}", p, pit);
            prop_assert_eq!(m.child, Position(b).mirror());
            prop_assert_eq!(m.child.seeds() + captured as u32, n);
            // The origin pit is on the child's opponent side, empty.
            prop_assert!(m.child.is_indexable(), "[{}] pit {}", p, pit);
        }
        prop_assert_eq!(moves.legal().next().is_some(), p.mover_seeds() > 0);
        // Abapa: the same sowings; a grand slam captures nothing; a move
        // exists unless the mover has no seeds or cannot feed.
        let abapa = p.moves(&ABAPA);
        let feeds = abapa.as_slice().iter().any(|m| m.child.mover_seeds() > 0);
        for (a, m) in abapa.as_slice().iter().zip(moves.as_slice()) {
            let slam = m.captured > 0 && m.child.mover_seeds() == 0;
            prop_assert_eq!(a.captured, if slam { 0 } else { m.captured });
            prop_assert_eq!(a.child.seeds(), n - a.captured as u32);
            prop_assert_eq!(a.legal, a.child.mover_seeds() > 0, "[{}] pit {}", p, a.pit);
        }
        prop_assert_eq!(abapa.legal().next().is_some(), feeds);
        // Olympiad: awari's sowings and captures; every move legal while
        // the opponent has seeds, else only those that feed. Awale: the
        // same sowings; every move legal but grand slams.
        let opponent = p.opponent_seeds() > 0;
        let olympiad = p.moves(&OLYMPIAD);
        let awale = p.moves(&AWALE);
        for ((o, w), m) in olympiad.as_slice().iter().zip(awale.as_slice()).zip(moves.as_slice()) {
            prop_assert_eq!((o.captured, o.child), (m.captured, m.child));
            prop_assert_eq!((w.captured, w.child), (m.captured, m.child));
            let feeds = m.child.mover_seeds() > 0;
            prop_assert_eq!(o.legal, opponent || feeds, "[{}] pit {}", p, m.pit);
            let slam = m.captured > 0 && !feeds;
            prop_assert_eq!(w.legal, !slam, "[{}] pit {}", p, m.pit);
        }
    }

    /// Every un-move of `q` is a position with a legal, non-capturing move
    /// to `q`; and every legal non-capturing move into a position whose
    /// mover has seeds is found among that position's un-moves.
    #[test]
    fn un_moves_invert_moves(q in position()) {
        for rules in PRESETS {
            un_moves_invert_moves_under(&q, &rules)?;
        }
    }
}

/// [`un_moves_invert_moves`] under one rule set.
fn un_moves_invert_moves_under(q: &Position, rules: &Rules) -> Result<(), TestCaseError> {
    let q = *q;
    let preds = q.predecessors(rules);
    if q.mover_seeds() == 0 {
        prop_assert!(preds.is_empty(), "[{}]: {:?}", q, preds);
    }
    for p in &preds {
        prop_assert!(p.is_indexable(), "[{}] <- [{}]", q, p);
        prop_assert_eq!(p.seeds(), q.seeds());
        prop_assert!(
            p.moves(rules)
                .legal()
                .any(|m| m.captured == 0 && m.child == q),
            "[{}] is not a move of its un-move [{}]",
            q,
            p
        );
    }
    let mut sorted = preds.clone();
    sorted.sort();
    sorted.dedup();
    prop_assert_eq!(sorted.len(), preds.len(), "[{}]: an un-move twice", q);
    // Forward: the moves of q taken back.
    for m in q.moves(rules).legal() {
        if m.captured == 0 && m.child.mover_seeds() > 0 {
            prop_assert!(
                m.child.predecessors(rules).contains(&q),
                "[{}] pit {} -> [{}]: not among its un-moves",
                q,
                m.pit,
                m.child
            );
        }
    }
    Ok(())
}

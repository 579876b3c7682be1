//! The rules' unit tests: sowing, capture and legality under every rule
//! set, and the un-moves.

use super::*;

#[test]
fn worked_example_captures_three() {
    let p = Position([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]);
    let (b, c) = p.sow(5);
    assert_eq!(c, 3);
    assert_eq!(b, [1, 1, 1, 1, 1, 0, 5, 0, 3, 0, 0, 0]);
    let m = p.moves(&AWARI);
    let mv = m.from_pit(5).unwrap();
    assert!(mv.legal);
    assert_eq!(mv.child.seeds(), 13);
    assert_eq!(mv.child, Position([5, 0, 3, 0, 0, 0, 1, 1, 1, 1, 1, 0]));
}

#[test]
fn lap_of_twelve_skips_origin() {
    let mut pits = [0u8; 12];
    pits[2] = 12;
    pits[8] = 1;
    let (b, c) = Position(pits).sow(2);
    // pits 3..11, 0, 1 once each, then pit 3 again (origin 2 skipped).
    assert_eq!(b, [1, 1, 0, 2, 1, 1, 1, 1, 2, 1, 1, 1]);
    assert_eq!(c, 0);
}

#[test]
fn laps_of_23_and_24() {
    let mut pits = [0u8; 12];
    pits[0] = 23;
    let (b, c) = Position(pits).sow(0);
    // 23 = 2*11 + 1: every other pit twice, pit 1 a third time.
    assert_eq!(b, [0, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
    assert_eq!(c, 0);
    pits[0] = 24;
    let (b, c) = Position(pits).sow(0);
    // last seed in pit 2 (own side): no capture.
    assert_eq!(b, [0, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
    assert_eq!(c, 0);
    // 24 seeds from pit 5: last seed in pit 7, which holds 3 -> captures
    // pit 7 and pit 6 (3 each).
    let mut pits = [0u8; 12];
    pits[5] = 24;
    let (b, c) = Position(pits).sow(5);
    assert_eq!(c, 6);
    assert_eq!(b, [2, 2, 2, 2, 2, 0, 0, 0, 2, 2, 2, 2]);
}

#[test]
fn capture_chain_stops_at_mover_side() {
    // last seed in pit 7; pits 7 and 6 capture, chain must not enter pit 5.
    let p = Position([0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0]);
    let (b, c) = p.sow(5);
    assert_eq!(c, 4);
    assert_eq!(b, [0; 12]);
}

#[test]
fn grand_slam_is_illegal_unless_forced() {
    // pit 5 (1 seed) captures the opponent's only seeds; pit 0 does not.
    let p = Position([1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
    let m = p.moves(&AWARI);
    assert!(m.from_pit(0).unwrap().legal);
    assert!(!m.from_pit(5).unwrap().legal);
    // forced: the only move captures everything.
    let p = Position([0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
    let m = p.moves(&AWARI);
    let mv = m.from_pit(5).unwrap();
    assert!(mv.legal);
    assert_eq!(mv.captured, 2);
    assert_eq!(mv.child.mover_seeds(), 0);
}

#[test]
fn not_feeding_an_empty_opponent_is_illegal_unless_forced() {
    // opponent empty; pit 5 feeds it, pit 0 does not.
    let p = Position([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    let m = p.moves(&AWARI);
    assert!(!m.from_pit(0).unwrap().legal);
    assert!(m.from_pit(5).unwrap().legal);
    // nothing can reach: every move is legal.
    let p = Position([1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert!(p.moves(&AWARI).as_slice().iter().all(|m| m.legal));
}

#[test]
fn predecessors_of_a_simple_position() {
    // P = [1,0,...,0 | 0, ...,0, 1 at 11]? Build from a known move.
    let p = Position([0, 2, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]);
    let m = p.moves(&AWARI);
    let mv = m.from_pit(1).unwrap();
    assert!(mv.legal && mv.captured == 0);
    assert!(mv.child.predecessors(&AWARI).contains(&p));
}

#[test]
fn abapa_grand_slam_stands_and_captures_nothing() {
    // Pit 5 (1 seed) would capture the opponent's only seeds.
    let p = Position([1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
    let m = p.moves(&ABAPA);
    let slam = m.from_pit(5).unwrap();
    assert!(slam.legal);
    assert_eq!(slam.captured, 0);
    assert_eq!(slam.child, Position([2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]));
    assert!(m.from_pit(0).unwrap().legal);
    // Under awari the same move is illegal (another move feeds).
    assert!(!p.moves(&AWARI).from_pit(5).unwrap().legal);
    // The slam's child has p among its un-moves under abapa only.
    assert!(slam.child.predecessors(&ABAPA).contains(&p));
    assert!(!slam.child.predecessors(&AWARI).contains(&p));
}

#[test]
fn abapa_feeding_is_mandatory_and_a_mover_that_cannot_feed_keeps_its_row() {
    // Opponent empty; pit 5 feeds, pit 0 does not.
    let p = Position([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    let m = p.moves(&ABAPA);
    assert!(!m.from_pit(0).unwrap().legal);
    assert!(m.from_pit(5).unwrap().legal);
    // Nothing reaches: no legal move; the mover takes its own 2 seeds,
    // which is what awari's forced moves are worth too.
    let p = Position([1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert!(p.moves(&ABAPA).legal().next().is_none());
    assert!(p.moves(&AWARI).legal().all(|m| m.child.mover_seeds() == 0));
    assert_eq!(p.final_score(&ABAPA), 2);
    assert_eq!(
        Position([0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0]).final_score(&ABAPA),
        -3
    );
}

/// Exhaustively on layers 0..=9, under every rule set: every reported
/// un-move is a position with a legal non-capturing move to the child,
/// and every legal non-capturing move into a position whose mover has
/// seeds is among the child's un-moves.
#[test]
fn un_moves_are_exactly_the_internal_moves_under_every_rule_set() {
    for rules in PRESETS {
        for n in 0..=9 {
            let mut forward = 0u64;
            let mut backward = 0u64;
            for (_, q) in crate::index::LayerIter::new(n) {
                for m in q.moves(&rules).legal() {
                    if m.captured == 0 && m.child.mover_seeds() > 0 {
                        forward += 1;
                    }
                }
                q.for_each_predecessor(&rules, |p| {
                    backward += 1;
                    assert!(
                        p.moves(&rules)
                            .legal()
                            .any(|m| m.captured == 0 && m.child == q),
                        "{rules}: {p} is no predecessor of {q}"
                    );
                });
            }
            assert_eq!(forward, backward, "{rules} layer {n}");
        }
    }
}

/// Grand slams made by laps (17 seeds into an empty opponent, 22 seeds
/// round twice): under abapa legal, nothing captured, found again from the
/// child by the un-move; under awari the only move, so forced, capturing
/// everything.
#[test]
fn abapa_grand_slams_by_laps() {
    for (pit, seeds) in [(5usize, 17u8), (0, 22)] {
        let mut pits = [0u8; PITS];
        pits[pit] = seeds;
        let p = Position(pits);
        let m = *p.moves(&ABAPA).from_pit(pit).unwrap();
        assert!(m.legal, "{p}");
        assert_eq!(m.captured, 0, "{p}");
        assert_eq!(m.child.seeds(), seeds as u32);
        assert!(
            m.child.mover_seeds() >= 12,
            "{p}: the opponent's row holds the slam"
        );
        assert!(m.child.predecessors(&ABAPA).contains(&p), "{p}");
        let a = *p.moves(&AWARI).from_pit(pit).unwrap();
        assert!(
            a.legal && a.captured == 12 && a.child.mover_seeds() == 0,
            "{p}: {a:?}"
        );
        assert!(!m.child.predecessors(&AWARI).contains(&p));
    }
}

#[test]
fn olympiad_grand_slam_captures_and_feeding_is_mandatory() {
    // Pit 5 (1 seed) captures the opponent's only seeds: legal, captures,
    // the opponent is left without seeds.
    let p = Position([1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
    let m = p.moves(&OLYMPIAD);
    let slam = m.from_pit(5).unwrap();
    assert!(slam.legal && slam.captured == 2 && slam.child.mover_seeds() == 0);
    assert!(m.from_pit(0).unwrap().legal);
    // Worth every seed left: the exit is +n.
    assert_eq!(p.exits(&OLYMPIAD).known, Some(3));
    assert_eq!(p.exits(&AWARI).known, None);
    // Feeding is mandatory as under abapa; a mover that cannot feed takes
    // the rest.
    let p = Position([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    let m = p.moves(&OLYMPIAD);
    assert!(!m.from_pit(0).unwrap().legal && m.from_pit(5).unwrap().legal);
    let p = Position([1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert!(p.moves(&OLYMPIAD).legal().next().is_none());
    assert_eq!(p.final_score(&OLYMPIAD), 2);
    assert_eq!(p.exits(&OLYMPIAD).known, Some(2));
}

#[test]
fn awale_grand_slam_is_never_legal_and_feeding_is_free() {
    // The grand slam is illegal; the other move stays legal.
    let p = Position([1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
    let m = p.moves(&AWALE);
    assert!(!m.from_pit(5).unwrap().legal);
    assert!(m.from_pit(0).unwrap().legal);
    // Every move a grand slam: none is legal, the opponent takes the rest.
    let p = Position([0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
    assert!(p.moves(&AWALE).legal().next().is_none());
    assert_eq!(p.final_score(&AWALE), -2);
    assert_eq!(p.exits(&AWALE).known, Some(-2));
    // Under awari the same forced slam is legal and worth +n.
    assert_eq!(p.exits(&AWARI).known, Some(2));
    // No duty to feed: a move that leaves the empty opponent empty is
    // legal and worth every seed left; the move that feeds is legal too.
    let p = Position([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    let m = p.moves(&AWALE);
    assert!(m.from_pit(0).unwrap().legal && m.from_pit(5).unwrap().legal);
    assert_eq!(p.exits(&AWALE).known, Some(2));
    // A grand slam by laps into an empty opponent (28 seeds from pit 5:
    // every opponent pit ends with 3) is a grand slam too.
    let mut pits = [0u8; PITS];
    pits[5] = 28;
    pits[0] = 1;
    let p = Position(pits);
    let (b, c) = p.sow(5);
    assert_eq!((c, b[6..].iter().sum::<u8>()), (18, 0));
    assert!(!p.moves(&AWALE).from_pit(5).unwrap().legal);
    assert!(!p.moves(&OLYMPIAD).from_pit(5).unwrap().legal);
    assert!(p.moves(&AWALE).from_pit(0).unwrap().legal);
}

#[test]
fn a_position_without_a_legal_move_scores_by_who_takes_the_rest() {
    for rules in PRESETS {
        // The mover has no seeds: the opponent takes the rest.
        let p = Position([0, 0, 0, 0, 0, 0, 0, 3, 0, 1, 0, 0]);
        assert!(p.moves(&rules).legal().next().is_none());
        assert_eq!(p.final_score(&rules), -4, "{rules}");
        assert_eq!(p.exits(&rules).known, Some(-4), "{rules}");
    }
}

/// Fields combined otherwise than in the presets keep each field's
/// meaning: a grand slam illegal unless forced under mandatory feeding, a
/// grand slam that captures under awari's subsumed feeding, one never
/// legal under mandatory feeding.
#[test]
fn fields_combined_outside_the_presets_keep_their_meaning() {
    let slam = Position([1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
    let only_slam = Position([0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
    let r = Rules {
        grand_slam: GrandSlam::IllegalUnlessForced,
        ..OLYMPIAD
    };
    assert!(!slam.moves(&r).from_pit(5).unwrap().legal);
    assert!(slam.moves(&r).from_pit(0).unwrap().legal);
    assert!(only_slam.moves(&r).from_pit(5).unwrap().legal);
    let r = Rules {
        grand_slam: GrandSlam::Captures,
        ..AWARI
    };
    // Subsumed feeding still forbids a move that leaves the opponent
    // empty while another feeds.
    assert!(!slam.moves(&r).from_pit(5).unwrap().legal);
    let r = Rules {
        grand_slam: GrandSlam::Never,
        ..ABAPA
    };
    assert!(!slam.moves(&r).from_pit(5).unwrap().legal);
    assert!(only_slam.moves(&r).legal().next().is_none());
    assert_eq!(only_slam.final_score(&r), -2);
    // An empty opponent that cannot be fed: the mover takes the rest.
    let p = Position([1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(p.final_score(&r), 2);
}

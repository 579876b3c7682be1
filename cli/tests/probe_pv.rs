//! The probing library's principal variations
//! (`Database::principal_variation`): each ends in game over, a repetition
//! or the limit, and plays the tables' best moves. The rest of the good
//! path is in `probe.rs`.

mod common;

use awari_egdb::index::{self, layer_size};
use awari_egdb::probe::{Database, MoveInfo, Pv, PvEnd};
use awari_egdb::rules::Position;
use common::probe::db;
use common::MAX;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;

// ---------------------------------------------------------------------------
// Principal variations

/// Checks one principal variation from `p` against the tables.
fn check_pv(db: &Database, p: &Position, limit: usize, pv: &Pv) {
    assert!(
        pv.steps.len() <= limit,
        "{p}: {} steps over limit {limit}",
        pv.steps.len()
    );
    let mut pos = *p;
    let mut seen = HashSet::new();
    for (i, s) in pv.steps.iter().enumerate() {
        assert_eq!(s.position, pos, "{p}: step {i} starts elsewhere");
        assert!(
            seen.insert(pos),
            "{p}: step {i} repeats a position inside the line"
        );
        assert_eq!(s.score, db.score(&pos).unwrap(), "{p}: step {i} score");
        let best = db.best_moves(&pos).unwrap();
        assert!(
            best.contains(&s.pit),
            "{p}: step {i} plays {} not in best {best:?}",
            s.pit
        );
        assert_eq!(
            s.pit, best[0],
            "{p}: step {i}: the lowest best pit is played"
        );
        let moves: [MoveInfo; 6] = db.moves(&pos).unwrap();
        let m = moves[s.pit as usize];
        assert_eq!(s.captures, m.captures);
        let next = m.child.unwrap();
        // Best play: the score is the capture minus the opponent's score.
        assert_eq!(
            s.score as i32,
            s.captures as i32 - db.score(&next).unwrap() as i32,
            "{p}: step {i}"
        );
        pos = next;
    }
    assert_eq!(pv.last, pos, "{p}: last position");
    match pv.end {
        PvEnd::GameOver => assert_eq!(pos.mover_seeds(), 0, "{p}: game over with seeds"),
        PvEnd::Repetition => {
            assert!(pos.mover_seeds() > 0);
            let first = pv
                .steps
                .iter()
                .position(|s| s.position == pos)
                .unwrap_or_else(|| panic!("{p}: repetition of a position not in the line"));
            let cycle: u32 = pv.steps[first..].iter().map(|s| s.captures as u32).sum();
            assert_eq!(cycle, 0, "{p}: a cycle cannot capture");
        }
        PvEnd::Limit => {
            assert_eq!(pv.steps.len(), limit, "{p}: limit end before the limit");
            assert!(
                pos.mover_seeds() > 0 && !seen.contains(&pos),
                "{p}: should end otherwise"
            );
        }
    }
}

#[test]
fn principal_variations_end_in_game_over_repetition_or_limit() {
    let db = db();
    let mut found: [Option<(Position, Pv)>; 2] = [None, None];
    let mut checked = 0;
    let mut rng = StdRng::seed_from_u64(48);
    for _ in 0..20_000 {
        let n = rng.gen_range(2..=MAX);
        let p = index::unrank(n, rng.gen_range(0..layer_size(n))).unwrap();
        let pv = db.principal_variation(&p, 500).unwrap();
        check_pv(db, &p, 500, &pv);
        checked += 1;
        let slot = match pv.end {
            PvEnd::GameOver => 0,
            PvEnd::Repetition => 1,
            PvEnd::Limit => panic!("{p}: 500 moves without repetition or end"),
        };
        if pv.steps.len() >= 3 && found[slot].is_none() {
            found[slot] = Some((p, pv));
        }
    }
    eprintln!("{checked} principal variations checked");
    let (over_p, over) = found[0].clone().expect("a line ending in game over");
    let (rep_p, rep) = found[1].clone().expect("a line ending in repetition");
    eprintln!("game over:  {over_p} in {} moves", over.steps.len());
    eprintln!("repetition: {rep_p} in {} moves", rep.steps.len());

    // Cutting either line short ends at the limit with the same first moves.
    for (p, full) in [(over_p, &over), (rep_p, &rep)] {
        for limit in [0, 1, 2] {
            let cut = db.principal_variation(&p, limit).unwrap();
            check_pv(db, &p, limit, &cut);
            assert_eq!(cut.end, PvEnd::Limit, "{p} limit {limit}");
            assert_eq!(cut.steps[..], full.steps[..limit]);
        }
    }
    // A position whose mover has no seeds is over at once, whatever the limit.
    let done = Position::indexable([0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1]).unwrap();
    for limit in [0, 10] {
        let pv = db.principal_variation(&done, limit).unwrap();
        assert_eq!(
            (pv.steps.len(), pv.end, pv.last),
            (0, PvEnd::GameOver, done)
        );
    }
    // The empty board too.
    let empty = Position([0; 12]);
    assert_eq!(
        db.principal_variation(&empty, 5).unwrap().end,
        PvEnd::GameOver
    );
}

/// A board without a Goedel number (every opponent pit holds seeds) is
/// played from and enveloped as every probe answers it: its line starts
/// with it and plays best moves, and its envelope is the best of its
/// moves' envelopes (each its captures less the child's, ends swapped),
/// computed here from the children's.
#[test]
fn boards_without_a_goedel_number_have_a_line_and_an_envelope() {
    let db = db();
    let mut rng = StdRng::seed_from_u64(63);
    let mut checked = 0;
    while checked < 2_000 {
        let n = rng.gen_range(6..=MAX);
        let mut pits = [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1];
        for _ in 6..n {
            pits[rng.gen_range(0..12)] += 1;
        }
        let p = Position(pits);
        assert!(!p.is_indexable());
        let pv = db.principal_variation(&p, 200).unwrap();
        check_pv(db, &p, 200, &pv);
        let over = p.moves(db.rules()).legal().next().is_none();
        assert_eq!(pv.steps.is_empty(), over, "{p}: {pv:?}");
        let mut want: Option<(i8, i8)> = None;
        for m in db.moves(&p).unwrap().iter().filter(|m| m.legal) {
            let c = m.child.unwrap();
            let (lo, hi) = if c.mover_seeds() == 0 {
                (m.score.unwrap(), m.score.unwrap())
            } else {
                let e = db.envelope(&c).unwrap().expect("built with the envelope");
                (m.captures as i8 - e.upper, m.captures as i8 - e.lower)
            };
            want = Some(want.map_or((lo, hi), |(l, h)| (l.max(lo), h.max(hi))));
        }
        // No legal move: the game is over, its envelope its score.
        let score = db.score(&p).unwrap();
        let want = want.unwrap_or((score, score));
        let e = db.envelope(&p).unwrap().expect("an envelope");
        assert_eq!((e.lower, e.upper), want, "{p}");
        assert!(e.lower <= score && score <= e.upper, "{p}");
        checked += 1;
    }
}

//! Foundation tests of the rules (`awari_egdb::rules`) under the four rule
//! sets, against code written in this file from the rules' texts (module
//! docs of `awari_egdb::rules`, README's "Rule sets"): its own seed-by-seed
//! sowing and capture, its own legality for each preset (by the preset's
//! name, not the library's fields), its own score of a position without a
//! legal move and its own exits that need no table. Exhaustively on layers
//! 0..=8 and on random boards of every layer; the un-moves against the
//! moves.

mod common;

use awari_egdb::index::{self, LayerIter};
use awari_egdb::rules::{Position, Rules, AWARI, PRESETS};
use common::boards::{random_board, random_distribution, random_indexable};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const PITS: usize = 12;
const MAX: u32 = 48;

/// Seed-by-seed sowing straight from the `rules` module docs, before
/// mirroring: the board and the pit of the last seed.
fn ref_sow_only(mut b: [u8; PITS], pit: usize) -> ([u8; PITS], usize) {
    let mut s = b[pit];
    b[pit] = 0;
    let mut k = pit;
    while s > 0 {
        k = (k + 1) % PITS;
        if k == pit {
            continue; // the origin is skipped on every lap
        }
        b[k] += 1;
        s -= 1;
    }
    (b, k)
}

/// Sowing and capture, before mirroring.
fn ref_sow(b: [u8; PITS], pit: usize) -> ([u8; PITS], u8) {
    let (mut b, mut k) = ref_sow_only(b, pit);
    let mut captured = 0;
    while k >= 6 && (b[k] == 2 || b[k] == 3) {
        captured += b[k];
        b[k] = 0;
        k -= 1;
    }
    (b, captured)
}

fn mirror(b: &[u8; PITS]) -> [u8; PITS] {
    let mut m = [0u8; PITS];
    for i in 0..PITS {
        m[i] = b[(i + 6) % PITS];
    }
    m
}

/// (pit, captured, child, legal) for every non-empty mover pit, by the
/// texts of the rule set named `rules.name`:
/// * awari: a move that leaves the opponent no seeds is illegal unless
///   every move does;
/// * abapa: a grand slam's sowing stands, capturing nothing; an opponent
///   without seeds must be fed where a move can;
/// * olympiad: a grand slam captures; an opponent without seeds must be
///   fed where a move can;
/// * awale: a grand slam is never legal; no duty to feed.
fn ref_moves(p: &Position, rules: &Rules) -> Vec<(u8, u8, [u8; PITS], bool)> {
    let opponent_empty = p.0[6..].iter().all(|&x| x == 0);
    let mut v = Vec::new();
    for pit in 0..6 {
        if p.0[pit] == 0 {
            continue;
        }
        let (mut b, mut c) = ref_sow(p.0, pit);
        let slam = c > 0 && b[6..].iter().all(|&x| x == 0);
        if slam && rules.name == "abapa" {
            b = ref_sow_only(p.0, pit).0;
            c = 0;
        }
        let feeds = b[6..].iter().any(|&x| x > 0);
        let legal = match rules.name {
            "awari" => feeds,
            "abapa" | "olympiad" => feeds || !opponent_empty,
            "awale" => !slam,
            other => panic!("no reference for {other}"),
        };
        v.push((pit as u8, c, mirror(&b), legal));
    }
    if rules.name == "awari" && v.iter().all(|m| !m.3) {
        for m in &mut v {
            m.3 = true;
        }
    }
    v
}

/// The score of a position without a legal move, by the texts: the mover
/// takes the rest when it cannot feed an empty opponent (abapa, olympiad);
/// otherwise it has no seeds, or (awale) only grand slams, and the
/// opponent takes the rest.
fn ref_final(p: &Position, rules: &Rules) -> i32 {
    let n = p.seeds() as i32;
    let mover = p.0[..6].iter().any(|&x| x > 0);
    match rules.name {
        "abapa" | "olympiad" if mover => n,
        _ => -n,
    }
}

/// The best exit that needs no table: `-n` without a legal move and no
/// seeds, the final score without a legal move, `+n` for a legal move that
/// leaves the opponent no seeds; `None` otherwise.
fn ref_known_exit(p: &Position, rules: &Rules) -> Option<i32> {
    let n = p.seeds() as i32;
    let moves = ref_moves(p, rules);
    if !moves.iter().any(|m| m.3) {
        return Some(ref_final(p, rules));
    }
    moves
        .iter()
        .any(|m| m.3 && m.2[..6].iter().all(|&x| x == 0))
        .then_some(n)
}

/// The internal moves of P: legal, no capture, and the child's mover has seeds.
fn internal_children(p: &Position, rules: &Rules) -> Vec<Position> {
    p.moves(rules)
        .legal()
        .filter(|m| m.captured == 0 && m.child.mover_seeds() > 0)
        .map(|m| m.child)
        .collect()
}

/// Checks the move generator against the reference and the invariants.
fn check_moves(p: &Position, rules: &Rules) {
    let list = p.moves(rules);
    let moves = list.as_slice();
    let want = ref_moves(p, rules);
    assert_eq!(moves.len(), want.len(), "{rules}: number of moves of {p}");
    for (m, w) in moves.iter().zip(&want) {
        assert_eq!(
            (m.pit, m.captured, m.child.0, m.legal),
            *w,
            "{rules}: move from pit {} of {p}",
            w.0
        );
        assert_eq!(m.child.seeds() + m.captured as u32, p.seeds());
        assert!(m.child.is_indexable(), "child {} of {p}", m.child);
        assert!(Position::indexable(m.child.0).is_ok());
        assert_eq!(
            list.from_pit(m.pit as usize).map(|x| x.child),
            Some(m.child)
        );
        if rules.name != "abapa" {
            let (b, c) = p.sow(m.pit as usize);
            assert_eq!((Position(b).mirror(), c), (m.child, m.captured), "{p}");
        }
    }
    assert_eq!(
        p.exits(rules).known,
        ref_known_exit(p, rules),
        "{rules}: exits of {p}"
    );
    if list.legal().next().is_none() {
        assert_eq!(p.final_score(rules), ref_final(p, rules), "{rules}: {p}");
    }
    if p.mover_seeds() == 0 {
        assert!(moves.is_empty(), "{p} has no mover seeds but moves");
        assert!(p.predecessors(rules).is_empty(), "{rules}: {p}");
    }
}

/// The predecessor/successor duality around an indexable P.
fn check_duality(p: &Position, rules: &Rules) {
    let children = internal_children(p, rules);
    let mut appearances = 0usize;
    for q in &children {
        let preds = q.predecessors(rules);
        let here = preds.iter().filter(|&&r| r == *p).count();
        assert!(here > 0, "{rules}: {p} -> {q} is internal, no un-move");
        appearances += here;
        check_predecessors_of(q, &preds, rules);
    }
    assert_eq!(appearances, children.len(), "{rules}: appearances of {p}");
}

/// Every predecessor R of Q is indexable, has Q's seeds, moves internally
/// to Q, and is reported once.
fn check_predecessors_of(q: &Position, preds: &[Position], rules: &Rules) {
    let mut via_callback = Vec::with_capacity(preds.len());
    q.for_each_predecessor(rules, |r| via_callback.push(r));
    assert_eq!(via_callback, preds, "for_each_predecessor vs predecessors");
    let mut sorted = preds.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), preds.len(), "{rules}: an un-move twice, {q}");
    for r in preds {
        assert!(r.is_indexable(), "predecessor {r} of {q} not indexable");
        assert_eq!(r.seeds(), q.seeds(), "predecessor {r} of {q}: seeds");
        assert!(
            internal_children(r, rules).contains(q),
            "{rules}: predecessor {r} of {q} has no internal move to it"
        );
    }
}

/// Every check on one position under one rule set.
fn check_all(p: &Position, rules: &Rules) {
    check_moves(p, rules);
    check_duality(p, rules);
    if p.mover_seeds() > 0 {
        check_predecessors_of(p, &p.predecessors(rules), rules);
    }
}

#[test]
fn worked_example() {
    let p = Position::indexable([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]).unwrap();
    let (b, c) = p.sow(5);
    assert_eq!(c, 3);
    assert_eq!(b, [1, 1, 1, 1, 1, 0, 5, 0, 3, 0, 0, 0]);
    let list = p.moves(&AWARI);
    let m = list.from_pit(5).unwrap();
    assert!(m.legal);
    assert_eq!(m.captured, 3);
    assert_eq!(m.child.seeds(), 13);
    for rules in PRESETS {
        check_all(&p, &rules);
    }
}

#[test]
fn rules_exhaustive_up_to_8_seeds() {
    let mut positions = 0u64;
    for n in 0..=8 {
        for (_, p) in LayerIter::new(n) {
            for rules in PRESETS {
                check_all(&p, &rules);
            }
            positions += 1;
        }
    }
    assert_eq!(positions, (0..=8).map(index::layer_size).sum::<u64>());
}

#[test]
fn rules_exhaustive_predecessor_completeness_up_to_8_seeds() {
    // Every internal move inside layers 0..=8 is found from both ends: count
    // all (P, Q) internal pairs forwards and all (Q, R) pairs backwards.
    for rules in PRESETS {
        for n in 0..=8 {
            let mut forward = 0u64;
            let mut backward = 0u64;
            for (_, p) in LayerIter::new(n) {
                forward += internal_children(&p, &rules).len() as u64;
                p.for_each_predecessor(&rules, |_| backward += 1);
            }
            assert_eq!(forward, backward, "{rules}: internal edges of layer {n}");
        }
    }
}

#[test]
fn rules_random_positions() {
    let mut rng = StdRng::seed_from_u64(0x000a_0a71);
    for i in 0..150_000u32 {
        let n = rng.gen_range(0..=MAX);
        let p = random_indexable(&mut rng, n, i % 3 == 0);
        for rules in PRESETS {
            check_moves(&p, &rules);
            check_duality(&p, &rules);
            if p.mover_seeds() > 0 && i % 4 == 0 {
                check_predecessors_of(&p, &p.predecessors(&rules), &rules);
            }
        }
    }
    // Boards that are not indexable still move by the rules.
    for rules in PRESETS {
        check_moves(&Position::initial(), &rules);
    }
    for _ in 0..20_000 {
        let n = rng.gen_range(6..=MAX);
        let p = Position(random_board(&mut rng, n));
        for rules in PRESETS {
            check_moves(&p, &rules);
        }
    }
}

#[test]
fn no_mover_seeds_means_no_moves() {
    let mut rng = StdRng::seed_from_u64(7);
    for _ in 0..10_000 {
        let n = rng.gen_range(0..=MAX);
        let mut b = random_distribution(&mut rng, n);
        let moved: u8 = b[..6].iter().sum();
        b[..6].fill(0);
        b[6 + rng.gen_range(0..6)] += moved;
        let p = Position(b);
        for rules in PRESETS {
            assert!(p.moves(&rules).as_slice().is_empty(), "{p}");
            assert!(p.predecessors(&rules).is_empty(), "{p}");
            assert_eq!(p.final_score(&rules), -(n as i32), "{rules}: {p}");
        }
    }
}

#[test]
fn sowing_twelve_or_more_leaves_the_origin_empty() {
    let mut rng = StdRng::seed_from_u64(12);
    for pit in 0..6 {
        for s in 12..=MAX {
            for rep in 0..40 {
                let rest = if rep == 0 {
                    0
                } else {
                    rng.gen_range(0..=MAX - s)
                };
                // `rest` seeds elsewhere (none in the origin)
                let mut b = random_distribution(&mut rng, rest);
                let stray = b[pit];
                b[pit] = 0;
                b[(pit + 1 + rng.gen_range(0..11)) % PITS] += stray;
                b[pit] = s as u8;
                let p = Position(b);
                let (after, c) = p.sow(pit);
                assert_eq!(after[pit], 0, "origin {pit} of {p} after {s}");
                assert_eq!((after, c), ref_sow(b, pit), "sow({pit}) of {p}");
                let total: u32 = after.iter().map(|&x| x as u32).sum();
                assert_eq!(total + c as u32, p.seeds());
                for rules in PRESETS {
                    check_moves(&p, &rules);
                }
            }
        }
    }
    // the spec's example: 12 seeds sow i+1..i+11 once and i+1 again
    let mut b = [0u8; PITS];
    b[2] = 12;
    let (after, c) = Position(b).sow(2);
    assert_eq!(after, [1, 1, 0, 2, 1, 1, 1, 1, 1, 1, 1, 1]);
    assert_eq!(c, 0);
}

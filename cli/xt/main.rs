//! Cross-checks independent of the builder: a naive fixpoint solver for small
//! layers, a forward Bellman check, and the VU oracle's move facts.

mod build_crash;
mod build_refusals;
mod build_resume;
mod build_tables;
mod builder;
#[path = "../tests/common/mod.rs"]
mod common;
mod diskfull;
mod facts;
mod naive;
mod oracle;
mod out_of_core;
mod presets;
mod ranks;

use awari_egdb::index::{layer_size, rank, LayerIter};
use awari_egdb::rules::{Position, AWARI};

use naive::NaiveTables;

/// Largest layer solved naively here.
const MAX: u32 = 9;

/// The naive awari tables, solved once (shared with `presets`).
fn tables() -> &'static NaiveTables {
    presets::naive_tables(&AWARI)
}

fn lookup(t: &'static [Vec<i8>]) -> impl Fn(u32, u64) -> i8 {
    move |n, g| t[n as usize][g as usize]
}

#[test]
fn naive_tables_pass_bellman_check() {
    let t = tables();
    let (s, l, u) = (lookup(&t.score), lookup(&t.lower), lookup(&t.upper));
    for n in 0..=MAX {
        let bad = naive::bellman_check(n, &AWARI, &s, &l, &u);
        assert!(
            bad.is_empty(),
            "layer {n}: {} mismatches, first: {:#?}",
            bad.len(),
            &bad[..bad.len().min(10)]
        );
    }
}

#[test]
fn naive_tables_sanity() {
    let t = tables();
    assert_eq!(t.score.len(), MAX as usize + 1);
    // Layer 0: the empty board, worth 0.
    assert_eq!(t.score[0], vec![0]);
    assert_eq!(t.lower[0], vec![0]);
    assert_eq!(t.upper[0], vec![0]);
    for n in 0..=MAX {
        let (s, lo, hi) = (
            &t.score[n as usize],
            &t.lower[n as usize],
            &t.upper[n as usize],
        );
        assert_eq!(s.len() as u64, layer_size(n));
        assert_eq!(lo.len() as u64, layer_size(n));
        assert_eq!(hi.len() as u64, layer_size(n));
        let ni = n as i8;
        let mut pinned = 0u64;
        let mut no_move = 0u64;
        let mut hist = std::collections::BTreeMap::<i8, u64>::new();
        for (g, p) in LayerIter::new(n) {
            let g = g as usize;
            assert_eq!(rank(&p) as usize, g);
            assert!(
                -ni <= lo[g] && lo[g] <= s[g] && s[g] <= hi[g] && hi[g] <= ni,
                "layer {n} [{p}]: lower {} score {} upper {}",
                lo[g],
                s[g],
                hi[g]
            );
            if p.mover_seeds() == 0 {
                no_move += 1;
                assert_eq!((s[g], lo[g], hi[g]), (-ni, -ni, -ni), "layer {n} [{p}]");
            } else {
                assert!(
                    p.moves(&AWARI).legal().next().is_some(),
                    "[{p}] has seeds but no move"
                );
            }
            if lo[g] == hi[g] {
                pinned += 1;
            }
            *hist.entry(s[g]).or_default() += 1;
        }
        eprintln!(
            "layer {n}: {} positions, {pinned} pinned ({:.1}%), {no_move} without a move; scores {hist:?}",
            s.len(),
            100.0 * pinned as f64 / s.len() as f64
        );
    }
}

#[test]
fn naive_hand_checked_values() {
    let t = tables();
    let at = |b: [u8; 12]| {
        let p = Position(b);
        let (n, g) = (p.seeds() as usize, rank(&p) as usize);
        (t.score[n][g], t.lower[n][g], t.upper[n][g])
    };
    // One seed. In pits 0..4 it is sown within the mover's side, leaving the
    // opponent empty; that is the only move, so it is legal and the opponent
    // then has no move: +1. In pit 5 it crosses to the opponent, who then
    // holds the only seed in pit 0 and wins it: -1. On the opponent's side:
    // no move, -1.
    for i in 0..12 {
        let mut b = [0u8; 12];
        b[i] = 1;
        let want = if i < 5 { 1 } else { -1 };
        assert_eq!(at(b), (want, want, want), "one seed in pit {i}");
    }
    // Two seeds: pit 5 sows onto a lone opponent seed in pit 6, capturing 2
    // (a forced grand slam, the only move): worth 2.
    assert_eq!(at([0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]), (2, 2, 2));
    // The same capture when pit 0 offers a non-slamming alternative: the slam
    // is illegal, so the mover must play pit 0.
    let p = Position([1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
    let legal: Vec<u8> = p.moves(&AWARI).legal().map(|m| m.pit).collect();
    assert_eq!(legal, vec![0]);
    let child = p.moves(&AWARI).from_pit(0).unwrap().child;
    let (s, _, _) = at(p.0);
    assert_eq!(s, -at(child.0).0);
}

#[test]
fn bellman_check_detects_corruption() {
    let t = tables();
    let n = 5u32;
    // A copy of layer n with one position's score raised by one.
    let p = Position([1, 1, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0]);
    let g = rank(&p) as usize;
    let mut layer = t.score[n as usize].clone();
    layer[g] += 1;
    let s = |m: u32, i: u64| {
        if m == n {
            layer[i as usize]
        } else {
            t.score[m as usize][i as usize]
        }
    };
    let (l, u) = (lookup(&t.lower), lookup(&t.upper));
    let bad = naive::bellman_check(n, &AWARI, &s, &l, &u);
    assert!(
        bad.iter().any(|b| b.contains(&format!("index {g}: score"))),
        "corruption at {g} not reported: {bad:?}"
    );
}

#[test]
fn vu_facts_small_layers_pass() {
    let all = facts::load();
    assert!(!all.is_empty(), "no facts in {}", facts::path());
    let t = tables();
    let s = lookup(&t.score);
    let small: Vec<_> = all.iter().filter(|f| f.seeds <= MAX).collect();
    let mut checked = 0;
    let mut fails = Vec::new();
    for f in &small {
        match facts::check(f, &s) {
            Ok(()) => checked += 1,
            Err(e) => fails.push(e),
        }
    }
    eprintln!(
        "VU facts: {} rows, {} with <= {MAX} seeds, {checked} passed against the naive tables",
        all.len(),
        small.len()
    );
    // Whatever the layer, the Goedel numbers must agree with the index.
    for f in &all {
        assert_eq!(
            rank(&Position(f.pits)),
            f.goedel_index,
            "fact {}: Goedel index",
            f.id
        );
    }
    assert!(fails.is_empty(), "{fails:#?}");
    // data/vu-move-facts.csv has 5 facts of 5 or 9 seeds.
    assert!(
        checked >= 5,
        "only {checked} VU facts with <= {MAX} seeds checked"
    );
}

#[test]
fn fact_checker_rejects_altered_facts() {
    let t = tables();
    let s = lookup(&t.score);
    let f = facts::load()
        .into_iter()
        .find(|f| f.seeds <= MAX)
        .expect("a fact with few seeds");
    assert_eq!(facts::check(&f, &s), Ok(()));

    let mut g = f.clone();
    g.loss_vs_best += 1;
    g.optimal = g.loss_vs_best == 0;
    assert!(facts::check(&g, &s).is_err(), "wrong loss accepted");

    let mut g = f.clone();
    g.optimal = !g.optimal;
    assert!(facts::check(&g, &s).is_err(), "wrong optimal flag accepted");

    let mut g = f.clone();
    g.goedel_index += 1;
    assert!(facts::check(&g, &s).is_err(), "wrong Goedel index accepted");

    let mut g = f.clone();
    g.seeds += 1;
    assert!(facts::check(&g, &s).is_err(), "wrong seed count accepted");

    // Altered scores must be noticed as well: give the played move's child an
    // impossible score of 60, which makes the played move lose at least 40
    // against any other legal move. That needs a fact whose played move
    // leads to a position with a move (its score is read from the table)
    // and that has another legal move: every such fact with few seeds is
    // tried, and there must be some.
    let mut bent_facts = 0;
    for f in facts::load().into_iter().filter(|f| f.seeds <= MAX) {
        let p = Position(f.pits);
        let played = p.moves(&AWARI).from_pit(f.mv as usize).unwrap().child;
        if played.mover_seeds() == 0 || p.moves(&AWARI).legal().count() < 2 {
            continue;
        }
        let pg = rank(&played);
        let pn = played.seeds();
        let bent = |n: u32, i: u64| {
            let v = t.score[n as usize][i as usize];
            if n == pn && i == pg {
                60
            } else {
                v
            }
        };
        assert_eq!(facts::check(&f, &s), Ok(()), "fact {}", f.id);
        assert!(
            facts::check(&f, &bent).is_err(),
            "fact {}: bent table accepted",
            f.id
        );
        bent_facts += 1;
    }
    assert!(bent_facts > 0, "no fact with <= {MAX} seeds can be bent");
}

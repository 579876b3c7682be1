//! A deliberately naive, independent solver for small layers, and a forward
//! Bellman check.
//!
//! Shares nothing with the builder beyond `awari_egdb::rules` (sowing, capture,
//! legality) and `awari_egdb::index` (rank / layer sizes / layer iteration).
//! It is written to be obviously correct, not fast: every quantity is computed
//! by *plain fixpoint iteration*: full sweeps over every position of the
//! layer, repeated until a sweep changes nothing, once per threshold.
//!
//! # The game inside one layer
//!
//! Fix layer `n` and a rule set (any of the presets). For a position `P` list
//! its legal moves under the rule set (`Position::moves`, `legal` flag). A move capturing `c > 0` seeds leaves the layer: its child
//! lives in layer `n - c`, already solved, so its value to `P`'s mover is a
//! *known number*. A move capturing nothing stays in layer `n` (its child may
//! be a position whose mover has no seeds; such a child has no move and is
//! handled by the same rule as every other position, see below). A position
//! with no legal move ends the game at its final score: `-n` when its mover
//! has no seeds or (awale) only grand slams, `+n` when (abapa, olympiad) it
//! cannot feed an empty opponent; the solver treats that end as one
//! capture-like move of that value.
//! Play that stays in the layer forever (never captures again) is "endless".
//!
//! # Score (endless play worth 0)
//!
//! For each threshold `t` in `1..=n` we compute two sets:
//! * `W_t`: positions whose mover can force a final result `>= t`,
//! * `L_t`: positions whose *opponent* can force the mover's result `<= -t`.
//!
//! Endless play is worth 0, which is `< t` and `> -t`: it is a *failure* for
//! whichever side is trying to reach the threshold. So both sets are
//! reachability (attractor) sets and are the LEAST sets closed under
//! * `P ∈ W_t` if some legal move has value `>= t`: a capture with
//!   `c - score(child) >= t`, or a non-capture whose child is in `L_t`
//!   (value `-score(child) >= t` iff `score(child) <= -t`);
//! * `P ∈ L_t` if every legal move has value `<= -t`: captures with
//!   `c - score(child) <= -t`, non-captures whose child is in `W_t`.
//!   A position with no legal move has the one pseudo-move of its final
//!   value (`-n` is `<= -t` for every `t <= n`; `+n` is `>= t`).
//!
//! Taking the *least* fixpoint is exactly what stops a cycle from being
//! counted as a win for either side: membership must be justified by a finite
//! derivation (a finite strategy tree ending in captures / no-move positions),
//! and a cycle never provides one. Positional determinacy of finite
//! reachability games gives the converse: outside `W_t` the opponent can keep
//! the result `< t` forever (endless play is 0 `< t`). Hence
//! `score(P) >= t  <=>  P ∈ W_t` and `score(P) <= -t  <=>  P ∈ L_t`, and
//! `score(P) = max{t : P ∈ W_t}`, else `-max{t : P ∈ L_t}`, else 0.
//!
//! The least fixpoint is computed by starting from empty sets and sweeping all
//! positions, adding any position whose rule is satisfied, until a full sweep
//! adds nothing. The rules are monotone (adding members only makes more rules
//! true), so in-place (Gauss-Seidel) sweeps converge to the least fixpoint:
//! every addition is justified by members already derived, and at the end the
//! sets are closed under the rules.
//!
//! # Envelope (endless play worth everything to one side)
//!
//! `upper(P)`: every endless play, in this layer or any below, is worth all
//! remaining seeds to the side to move at `P`; `lower(P)`: worth them to its
//! opponent. Across a move the roles swap, so
//! `upper(P) = max(c - lower(child))`, `lower(P) = max(c - upper(child))`.
//! For thresholds `t` in `-n+1..=n` we compute
//! * `A_t = {P : lower(P) >= t}`: `P`'s mover loses endless play (`-n < t`),
//!   so it must force a finite line: least set with `P ∈ A_t` if some legal
//!   move has `c - upper(child) >= t` (captures: number from the lower layer;
//!   non-captures: child in `B_t`);
//! * `B_t = {P : upper(P) <= -t}`: `P`'s mover *wins* endless play
//!   (`+n > -t`), so its opponent must force a finite line: least set with
//!   `P ∈ B_t` if every legal move has `c - lower(child) <= -t` (captures:
//!   number; non-captures: child in `A_t`). No-move positions (`-n <= -t`) are
//!   in every `B_t`.
//!
//! `lower(P) = max{t : P ∈ A_t}`, else `-n`; `upper(P) = -max{t : P ∈ B_t}`,
//! else `+n`: a position caught in endless play gets the extremes.

use awari_egdb::index::{layer_size, rank, LayerIter};
use awari_egdb::rules::{Position, Rules};

/// Score, lower and upper tables, indexed `[layer][goedel index]`.
pub struct NaiveTables {
    pub score: Vec<Vec<i8>>,
    pub lower: Vec<Vec<i8>>,
    pub upper: Vec<Vec<i8>>,
}

/// The legal moves of every position of one layer, flattened:
/// position `g` owns `cap[start[g]..start[g+1]]` and `child[..]` alike.
/// `cap == 0` means the child is in this layer, else in layer `n - cap`;
/// `cap == FINAL` stands for the end of the game at a position without a
/// legal move, worth `child - 64` (each side takes its own row).
struct Edges {
    start: Vec<usize>,
    cap: Vec<u8>,
    child: Vec<usize>,
}

impl Edges {
    fn build(n: u32, rules: &Rules) -> Edges {
        let size = layer_size(n) as usize;
        let mut e = Edges {
            start: Vec::with_capacity(size + 1),
            cap: Vec::new(),
            child: Vec::new(),
        };
        for (g, p) in LayerIter::new(n) {
            assert_eq!(e.start.len() as u64, g);
            e.start.push(e.cap.len());
            let mut any = false;
            for m in p.moves(rules).legal() {
                any = true;
                let c = m.child;
                assert!(c.is_indexable(), "child {c} of {p} has no index");
                assert_eq!(c.seeds() + m.captured as u32, n);
                e.cap.push(m.captured);
                e.child.push(rank(&c) as usize);
            }
            if !any {
                e.cap.push(FINAL);
                e.child.push((p.final_score(rules) + 64) as usize);
            }
        }
        e.start.push(e.cap.len());
        assert_eq!(e.start.len(), size + 1);
        e
    }

    fn of(&self, g: usize) -> impl Iterator<Item = (u8, usize)> + '_ {
        let r = self.start[g]..self.start[g + 1];
        self.cap[r.clone()]
            .iter()
            .copied()
            .zip(self.child[r].iter().copied())
    }
}

/// Least fixpoint of the pair of threshold rules by full sweeps.
///
/// `exit_some(c, child)`: does a capture satisfy the "some move" rule;
/// `exit_all(c, child)`: does a capture satisfy the "every move" rule.
/// Returns (`some`, `all`): `some[g]` iff some legal move of `g` is a
/// satisfying capture or a non-capture into `all`; `all[g]` iff every legal
/// move is a satisfying capture or a non-capture into `some`.
fn least_fixpoint(
    e: &Edges,
    exit_some: impl Fn(u8, usize) -> bool,
    exit_all: impl Fn(u8, usize) -> bool,
) -> (Vec<bool>, Vec<bool>) {
    let size = e.start.len() - 1;
    let mut some = vec![false; size];
    let mut all = vec![false; size];
    loop {
        let mut changed = false;
        for g in 0..size {
            if !some[g]
                && e.of(g)
                    .any(|(c, ch)| if c > 0 { exit_some(c, ch) } else { all[ch] })
            {
                some[g] = true;
                changed = true;
            }
            if !all[g]
                && e.of(g)
                    .all(|(c, ch)| if c > 0 { exit_all(c, ch) } else { some[ch] })
            {
                all[g] = true;
                changed = true;
            }
        }
        if !changed {
            return (some, all);
        }
    }
}

/// Checks that `next ⊆ prev` (threshold sets shrink as the threshold rises).
fn assert_shrinks(prev: &[bool], next: &[bool], what: &str, n: u32, t: i32) {
    for (g, (&a, &b)) in prev.iter().zip(next).enumerate() {
        assert!(
            a || !b,
            "layer {n}: {what} at threshold {t} is not monotone at index {g}"
        );
    }
}

/// The pseudo-capture of [`Edges`] that ends the game.
const FINAL: u8 = u8::MAX;

/// Solves layers `0..=max_seeds` of `rules` in order.
pub fn solve(max_seeds: u32, rules: &Rules) -> NaiveTables {
    assert!(max_seeds < 47, "the naive solver is for small layers");
    let mut tab = NaiveTables {
        score: Vec::new(),
        lower: Vec::new(),
        upper: Vec::new(),
    };
    for n in 0..=max_seeds {
        let e = Edges::build(n, rules);
        let size = layer_size(n) as usize;
        let ni = n as i32;

        // Score.
        let mut score = vec![0i8; size];
        let (mut pw, mut pl) = (vec![true; size], vec![true; size]);
        for t in 1..=ni {
            let lo = &tab.score;
            let exit_val = |c: u8, ch: usize| match c {
                FINAL => ch as i32 - 64,
                c => c as i32 - lo[(n - c as u32) as usize][ch] as i32,
            };
            let (w, l) = least_fixpoint(
                &e,
                |c, ch| exit_val(c, ch) >= t,
                |c, ch| exit_val(c, ch) <= -t,
            );
            assert_shrinks(&pw, &w, "W", n, t);
            assert_shrinks(&pl, &l, "L", n, t);
            for g in 0..size {
                assert!(!(w[g] && l[g]), "layer {n} index {g}: in W_{t} and L_{t}");
                if w[g] {
                    score[g] = t as i8;
                }
                if l[g] {
                    score[g] = -t as i8;
                }
            }
            (pw, pl) = (w, l);
        }

        // Envelope.
        let mut lower = vec![-ni as i8; size];
        let mut upper = vec![ni as i8; size];
        let (mut pa, mut pb) = (vec![true; size], vec![true; size]);
        for t in (-ni + 1)..=ni {
            let (tl, tu) = (&tab.lower, &tab.upper);
            let lo_val = |c: u8, ch: usize| match c {
                FINAL => ch as i32 - 64,
                c => c as i32 - tu[(n - c as u32) as usize][ch] as i32,
            };
            let hi_val = |c: u8, ch: usize| match c {
                FINAL => ch as i32 - 64,
                c => c as i32 - tl[(n - c as u32) as usize][ch] as i32,
            };
            let (a, b) =
                least_fixpoint(&e, |c, ch| lo_val(c, ch) >= t, |c, ch| hi_val(c, ch) <= -t);
            assert_shrinks(&pa, &a, "A", n, t);
            assert_shrinks(&pb, &b, "B", n, t);
            for g in 0..size {
                if a[g] {
                    lower[g] = t as i8;
                }
                if b[g] {
                    upper[g] = -t as i8;
                }
            }
            (pa, pb) = (a, b);
        }

        tab.score.push(score);
        tab.lower.push(lower);
        tab.upper.push(upper);
    }
    tab
}

/// Forward Bellman check of layer `n`: recomputes, for every position, the
/// score as `max over legal moves of (c - score(child))`, `upper` as
/// `max(c - lower(child))` and `lower` as `max(c - upper(child))` (a position
/// without legal move: its final score, the mover's seeds less the
/// opponent's, for all three; a child whose mover has no seeds:
/// `-(its seeds)` for all three, not looked up), and lists every mismatch with
/// what is stored. Children are looked up as `f(layer, rank(child))`.
pub fn bellman_check(
    n: u32,
    rules: &Rules,
    score: &dyn Fn(u32, u64) -> i8,
    lower: &dyn Fn(u32, u64) -> i8,
    upper: &dyn Fn(u32, u64) -> i8,
) -> Vec<String> {
    let mut bad = Vec::new();
    for (g, p) in LayerIter::new(n) {
        let (s, l, u) = forward(n, rules, &p, score, lower, upper);
        let stored = (score(n, g) as i32, lower(n, g) as i32, upper(n, g) as i32);
        for (what, st, re) in [
            ("score", stored.0, s),
            ("lower", stored.1, l),
            ("upper", stored.2, u),
        ] {
            if st != re {
                bad.push(format!(
                    "layer {n} [{p}] index {g}: {what} stored {st}, recomputed {re}"
                ));
            }
        }
    }
    bad
}

/// (score, lower, upper) of `p` recomputed from its children.
fn forward(
    n: u32,
    rules: &Rules,
    p: &Position,
    score: &dyn Fn(u32, u64) -> i8,
    lower: &dyn Fn(u32, u64) -> i8,
    upper: &dyn Fn(u32, u64) -> i8,
) -> (i32, i32, i32) {
    let mut best: Option<(i32, i32, i32)> = None;
    for m in p.moves(rules).legal() {
        let c = m.captured as u32;
        let cn = n - c;
        let ch = m.child;
        let (cs, cl, cu) = if ch.mover_seeds() == 0 {
            let v = -(ch.seeds() as i32);
            (v, v, v)
        } else {
            let g = rank(&ch);
            (
                score(cn, g) as i32,
                lower(cn, g) as i32,
                upper(cn, g) as i32,
            )
        };
        let c = c as i32;
        let v = (c - cs, c - cu, c - cl);
        best = Some(match best {
            None => v,
            Some(b) => (b.0.max(v.0), b.1.max(v.1), b.2.max(v.2)),
        });
    }
    let end = p.final_score(rules);
    best.unwrap_or((end, end, end))
}

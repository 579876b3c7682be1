//! Best play reaches the score it promises (issue 63): tables built with
//! the distance by the library's own build, games played out under each
//! rule set's own rules of the end ([`Game`]), the result compared with
//! what the captured seeds and the score predict.
//!
//! * both sides playing [`Database::best_move`] end with the predicted
//!   result: its exact margin in half seeds, or, where a side reaches a
//!   majority first, its winner; a game ends by repetition only where the
//!   score is endless play's ([`Distance::Endless`]);
//! * the side not behind playing best against a random opponent never
//!   ends with a worse result or margin;
//! * by the tables alone: along best play the distance falls by one a ply
//!   down to a capture that keeps the score, from every position.
//!
//! Every position of layers 0..=10 and 4,000 random positions of each of
//! 11..=14, for awari and abapa; with `AWARI_LONG=1`, every position of
//! 0..=12 and 20,000 random positions of 13..=20.

use awari_egdb::build::{build, BuildOptions, Silent};
use awari_egdb::game::{Board, End, Game, Side};
use awari_egdb::index::{layer_size, unrank};
use awari_egdb::probe::{Database, Distance};
use awari_egdb::rules::{Position, Rules, ABAPA, AWARI};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

fn long() -> bool {
    std::env::var_os("AWARI_LONG").is_some_and(|v| v == "1")
}

/// The layers played from every position, and the random ones.
fn plan() -> (u32, std::ops::RangeInclusive<u32>, usize) {
    if long() {
        (12, 13..=20, 20_000)
    } else {
        (10, 11..=14, 4_000)
    }
}

/// A folder of `rules` built to `max` with the distance, and its database.
fn tables(rules: &Rules, max: u32) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let opts = BuildOptions {
        rules: *rules,
        max_seeds: max,
        ..BuildOptions::new(dir.path())
    };
    build(&opts, &Silent).unwrap();
    // SAFETY: nothing writes to the folder while the tests read it.
    let db = unsafe { Database::open_mapped(dir.path()) }.unwrap();
    (dir, db)
}

/// The final score in half seeds (South, North) that the captured seeds
/// and the score of South, to move, predict.
fn predicted(b: &Board, score: i8) -> [i64; 2] {
    let n = b.seeds() as i64;
    let s = score as i64;
    [
        2 * b.captured[0] as i64 + n + s,
        2 * b.captured[1] as i64 + n - s,
    ]
}

fn class(h: [i64; 2], side: Side) -> i8 {
    let (me, them) = (h[side.index()], h[side.other().index()]);
    (me > them) as i8 - (me < them) as i8
}

/// Plays a game from `start` to its end: every move the best of the
/// tables, but `random`'s side's, which plays any legal move.
fn play(
    db: &Database,
    rules: &Rules,
    start: Board,
    mut random: Option<(Side, &mut StdRng)>,
) -> Game {
    let mut game = Game::new(start, *rules);
    while game.end().is_none() {
        let b = *game.board();
        let p = b.position();
        let pit = match &mut random {
            Some((side, rng)) if *side == b.to_move => {
                let legal: Vec<u8> = p.moves(rules).legal().map(|m| m.pit).collect();
                legal[rng.gen_range(0..legal.len())]
            }
            _ => db
                .best_move(&p)
                .unwrap()
                .expect("a game not over has a move"),
        };
        game.play(&b.to_move.label(pit as usize).to_string())
            .unwrap();
        assert!(game.moves().len() < 20_000, "{start:?}: no end in sight");
    }
    game
}

/// The game's result against the prediction: the exact margin unless a
/// side reached a majority first (then the winner); a repetition only
/// where the score is endless play's.
fn check_best(db: &Database, rules: &Rules, p: &Position) {
    let start = Board::new(p.0, None).unwrap();
    let score = db.score(p).unwrap();
    let want = predicted(&start, score);
    let game = play(db, rules, start, None);
    let got = game.final_half_seeds().unwrap().map(|h| h as i64);
    match game.end().unwrap() {
        End::Won(_) | End::Draw => assert_eq!(
            class(got, Side::South),
            class(want, Side::South),
            "{} {p}: {:?}, predicted {want:?}",
            rules.name,
            game.result()
        ),
        end => assert_eq!(got, want, "{} {p}: {end:?} {:?}", rules.name, game.moves()),
    }
    if let Some(End::Repetition | End::NoCaptureLimit(_)) = game.end() {
        let last = game.board().position();
        assert_eq!(
            db.distance(&last).unwrap(),
            Some(Distance::Endless),
            "{} {p}: a repetition at {last} where the score needs progress",
            rules.name
        );
    }
}

/// The side not behind plays best, the other at random: never a worse
/// result, nor (without a majority first) a smaller margin.
fn check_against_random(db: &Database, rules: &Rules, p: &Position, rng: &mut StdRng) {
    let start = Board::new(p.0, None).unwrap();
    let want = predicted(&start, db.score(p).unwrap());
    let best = if class(want, Side::South) >= 0 {
        Side::South
    } else {
        Side::North
    };
    let game = play(db, rules, start, Some((best.other(), rng)));
    let got = game.final_half_seeds().unwrap().map(|h| h as i64);
    let what = || {
        format!(
            "{} {p}: {} plays best, {:?}",
            rules.name,
            best.name(),
            game.result()
        )
    };
    assert!(class(got, best) >= class(want, best), "{}", what());
    if !matches!(game.end(), Some(End::Won(_) | End::Draw)) {
        let margin = |h: [i64; 2]| h[best.index()] - h[best.other().index()];
        assert!(margin(got) >= margin(want), "{}", what());
    }
}

/// The positions played: every one of layers `0..=all`, then `count`
/// random ones of each layer of `random`.
fn positions(all: u32, random: std::ops::RangeInclusive<u32>, count: usize) -> Vec<Position> {
    let mut out: Vec<Position> = (0..=all)
        .flat_map(|n| (0..layer_size(n)).map(move |g| unrank(n, g).unwrap()))
        .collect();
    let mut rng = StdRng::seed_from_u64(63);
    for n in random {
        for _ in 0..count {
            out.push(unrank(n, rng.gen_range(0..layer_size(n))).unwrap());
        }
    }
    out
}

fn best_play_reaches_the_predicted_result(rules: &Rules) {
    let (all, random, count) = plan();
    let (_dir, db) = tables(rules, *random.end());
    let ps = positions(all, random, count);
    ps.par_iter().for_each(|p| check_best(&db, rules, p));
    ps.par_iter().enumerate().for_each(|(i, p)| {
        let mut rng = StdRng::seed_from_u64(i as u64);
        check_against_random(&db, rules, p, &mut rng)
    });
}

#[test]
fn awari_best_play_reaches_the_predicted_result() {
    best_play_reaches_the_predicted_result(&AWARI);
}

#[test]
fn abapa_best_play_reaches_the_predicted_result() {
    best_play_reaches_the_predicted_result(&ABAPA);
}

/// Without the distance, the tables' best moves can repeat a position
/// before the capture the score needs: the newcomer's drawn position of
/// issue 63 (North won 25-23); with it, a draw.
#[test]
fn the_newcomer_s_drawn_position_is_drawn() {
    let (_dir, db) = tables(&AWARI, 10);
    let start = Board::from_notation("4,0,0,0,0,1/4,0,0,0,1,0/S/19,19").unwrap();
    assert_eq!(db.score(&start.position()).unwrap(), 0);
    let game = play(&db, &AWARI, start, None);
    assert_eq!(
        game.final_half_seeds(),
        Some([48, 48]),
        "{:?}",
        game.result()
    );
}

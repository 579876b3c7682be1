//! The player's search against the tables: in a built layer it plays a
//! best move of the tables; a value it calls exact equals the table's value
//! of a layer it was not allowed to read; a fixed-depth search is the same
//! on one thread and two; a clock is never overrun; `awari match` and the
//! line protocol of `awari play`.

mod common;

use awari_egdb::game::{self, Board, End, Game, Player, Side};
use awari_egdb::index::{layer_size, unrank};
use awari_egdb::probe::Database;
use awari_egdb::rules::{Position, AWARI};
use awari_egdb::search::{Engine, Limits, Outcome, Settings, TableReach};
use common::{awari, scratch, MAX};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn db() -> Database {
    Database::open(common::db_dir()).expect("open the shared folder")
}

/// A random position of layer `n` with a legal move.
fn random_position(rng: &mut Rng, n: u32) -> Position {
    loop {
        let p = unrank(n, rng.below(layer_size(n))).unwrap();
        if p.moves(&AWARI).legal().next().is_some() {
            return p;
        }
    }
}

/// 10,000 random positions of layers 1..=MAX (or of every layer of the
/// awari folder `$AWARI_SEARCH_DB`, e.g. 0..=24), each played by the
/// player (through `game::choose`, as `awari play` does): its move is
/// worth the most of every legal move by the tables (`game::move_worths`),
/// it says so at once (depth 0, exact), and its worth is that maximum.
#[test]
fn in_a_built_layer_the_player_plays_a_best_move_of_the_tables() {
    let db = match std::env::var_os("AWARI_SEARCH_DB") {
        Some(d) if !d.is_empty() => Database::open(d).expect("open $AWARI_SEARCH_DB"),
        _ => db(),
    };
    let top = *db.layers().last().expect("a layer");
    let engine = Engine::new(&db, AWARI, Settings::default()).unwrap();
    let mut rng = Rng(0x5eed_2026);
    let mut ties = 0;
    for k in 0..10_000 {
        let n = 1 + (k % top);
        if n == 47 {
            continue; // no such layer
        }
        let p = random_position(&mut rng, n);
        let board = Board::new(p.0, None).unwrap();
        let g = Game::new(board, AWARI);
        let c = game::choose(&engine, &g, Limits::depth(1), |_| {})
            .unwrap()
            .expect("a move");
        let worths = game::move_worths(&db, &g).unwrap();
        let best = worths.iter().filter_map(|w| w.worth).max().unwrap();
        let mine = worths.iter().find(|w| w.label == c.label).unwrap();
        assert_eq!(mine.worth, Some(best as i8), "{p:?}: {c:?} {worths:?}");
        assert_eq!(
            (c.worth(), c.exact(), c.search.depth),
            (best as i32, true, 0),
            "{p:?}"
        );
        // The lowest label among equals.
        assert_eq!(
            Some(c.label),
            game::best_labels(&worths).map(|b| b[0]),
            "{p:?}"
        );
        ties += usize::from(worths.iter().filter(|w| w.worth == Some(best)).count() > 1);
        // The line starts with the move and follows the tables.
        assert_eq!(c.line.first(), Some(&c.label));
    }
    assert!(ties > 100, "only {ties} positions with equal best moves");
}

/// Above the layers it may read, every value the search calls exact is
/// the table's value of that position (the search reads layers
/// 0..=MAX-1, the tables hold MAX too): 1,500 random positions of layer
/// MAX at 10 plies, on one thread and on two; a fair share of them must be
/// proven for the test to mean anything.
#[test]
fn a_value_called_exact_is_the_tables_value() {
    let db = db();
    for threads in [1, 2] {
        let settings = Settings {
            tables: TableReach::UpTo(MAX - 1),
            threads,
            hash_bytes: 8 << 20,
        };
        let engine = Engine::new(&db, AWARI, settings).unwrap();
        assert_eq!(engine.layers(), (0..MAX).collect::<Vec<_>>());
        let mut rng = Rng(0xabc0 + threads as u64);
        let (mut exact, mut total) = (0, 0);
        for _ in 0..1500 {
            let p = random_position(&mut rng, MAX);
            engine.clear();
            let o = engine.search(&p, &[], Limits::depth(10), |_| {}).unwrap();
            let table = db.score(&p).unwrap() as i32;
            total += 1;
            if o.exact {
                exact += 1;
                assert_eq!(o.value, table, "{p:?} ({threads} threads): {o:?}");
                // A best move: its worth by the tables is the value.
                let m = p.moves(&AWARI);
                let m = m.from_pit(o.pit as usize).unwrap();
                let after = if m.child.moves(&AWARI).legal().next().is_none() {
                    m.child.final_score(&AWARI)
                } else {
                    db.score(&m.child).unwrap() as i32
                };
                assert_eq!(m.captured as i32 - after, table, "{p:?}: {o:?}");
            }
        }
        assert!(
            exact * 20 > total,
            "{threads} threads: only {exact} of {total} proven"
        );
        eprintln!(
            "{threads} thread(s): {exact} of {total} values of layer {MAX} proven at 10 plies"
        );
    }
}

/// A fixed-depth search on one thread is reproducible; two threads give
/// a legal move.
#[test]
fn fixed_depth_values_do_not_depend_on_threads() {
    let db = db();
    let none = Database::from_tables_of::<Vec<u8>>(&AWARI, Vec::new()).unwrap();
    let mut rng = Rng(77);
    for k in 0..40 {
        // Openings of a few random moves, without tables and with them.
        let mut p = Position::initial();
        for _ in 0..(k % 7) {
            let moves = p.moves(&AWARI);
            let legal: Vec<_> = moves.legal().collect();
            p = legal[rng.below(legal.len() as u64) as usize].child;
        }
        for d in [&db, &none] {
            let search = |threads| {
                let s = Settings {
                    threads,
                    hash_bytes: 4 << 20,
                    ..Settings::default()
                };
                Engine::new(d, AWARI, s)
                    .unwrap()
                    .search(&p, &[], Limits::depth(7), |_| {})
                    .unwrap()
            };
            let (a, b, c) = (search(1), search(1), search(2));
            assert_eq!(
                a,
                Outcome {
                    elapsed: a.elapsed,
                    ..b.clone()
                },
                "{p:?}"
            );
            // Two threads share the transposition table, whose deeper
            // entries may change a value: only a legal move is asked.
            assert!(p.moves(&AWARI).legal().any(|m| m.pit == c.pit), "{p:?}");
            assert_eq!(c.pv.first(), Some(&c.pit));
        }
    }
}

/// Games at a short clock: the player never runs out of time, and the
/// game ends by the rule set.
#[test]
fn the_clock_is_never_overrun() {
    let db = db();
    for (k, tc) in ["2s", "1s+50ms", "500ms"].iter().enumerate() {
        let engine = |_: usize| Engine::new(&db, AWARI, Settings::default()).unwrap();
        let mut players = [
            Player::new(engine(0), Some(tc.parse().unwrap()), 100),
            Player::new(engine(1), None, 2),
        ];
        let mut g = Game::new(Board::opening(), AWARI);
        let ours = if k % 2 == 0 { Side::South } else { Side::North };
        while g.end().is_none() {
            let who = usize::from(g.board().to_move != ours);
            players[who].move_in(&mut g, |_| {}).unwrap();
        }
        let end = g.end().unwrap();
        assert!(!matches!(end, End::Time(_)), "{tc}: {end:?}");
        let clock = players[0].clock.unwrap();
        assert!(clock.left() > std::time::Duration::ZERO, "{tc}");
        assert!(g.result().is_some());
        // The record replays to the same end.
        let replay = Game::from_record(&g.record()).unwrap();
        assert_eq!(replay.end(), Some(end), "{tc}");
    }
}

/// `awari match` between two fixed-depth players: a line per game, the
/// result with an Elo difference, every record readable and replaying to
/// the end it reports.
#[test]
fn a_match_reports_and_records_every_game() {
    let dir = scratch("awari-match-");
    let records = dir.join("records");
    let openings = dir.join("openings.txt");
    std::fs::write(&openings, "# two openings\nstart\nC d\n").unwrap();
    let out = awari(
        &[
            "match",
            "--db",
            common::db_dir().to_str().unwrap(),
            "--a",
            "depth=4,clock=none",
            "--b",
            "depth=1,clock=none,tables=none",
            "--games",
            "4",
            "--openings",
            openings.to_str().unwrap(),
            "--records",
            records.to_str().unwrap(),
            "--jobs",
            "2",
        ],
        None,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with("game ")).count(),
        4,
        "{text}"
    );
    assert!(text.contains("result: A +"), "{text}");
    assert!(text.contains("Elo A - B"), "{text}");
    for k in 1..=4 {
        let rec = std::fs::read_to_string(records.join(format!("game-{k:03}.txt"))).unwrap();
        assert!(
            rec.starts_with(&format!("# awari match game {k}: South = ")),
            "{rec}"
        );
        let g = Game::from_record(&rec).unwrap();
        assert!(g.end().is_some(), "{rec}");
        let end_line = rec.lines().find(|l| l.starts_with("# end: ")).unwrap();
        assert_eq!(end_line, format!("# end: {}", g.result().unwrap()));
        if k > 2 {
            assert_eq!(&g.moves()[..2], &['C', 'd'], "{rec}");
        }
    }
    // Bad settings: one line, exit 2.
    for (a, says) in [
        ("depth=0,clock=none", "depth from 1"),
        ("clock=none", "without a clock give a depth"),
        ("speed=1", "unknown setting 'speed'"),
        ("clock=1q", "is not a time control"),
    ] {
        let out = awari(
            &[
                "match",
                "--db",
                common::db_dir().to_str().unwrap(),
                "--a",
                a,
                "--b",
                "depth=1,clock=none",
            ],
            None,
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a}: {err}");
        assert_eq!(err.lines().count(), 1, "{a}: {err}");
        assert!(err.contains(says), "{a}: {err}");
    }
    std::fs::write(&openings, "A\nA A\n").unwrap();
    let out = awari(
        &[
            "match",
            "--db",
            common::db_dir().to_str().unwrap(),
            "--a",
            "depth=1,clock=none",
            "--b",
            "depth=1,clock=none",
            "--openings",
            openings.to_str().unwrap(),
        ],
        None,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("line 2: A:"), "{err}");
}

/// The line protocol: moves in, `info` and `move` lines out, `end` at the
/// end; nothing else on standard output.
#[test]
fn the_line_protocol() {
    let db = common::db_dir().to_str().unwrap();
    // South moves and the computer (North) answers from the tables.
    let from = [
        "--from", "1", "1", "1", "1", "1", "2", "2", "1", "0", "0", "0", "0",
    ];
    let mut args = vec!["play", "--protocol", "--db", db, "--computer", "north"];
    args.extend(from);
    let out = awari(&args, Some("A\n"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for l in text.lines() {
        assert!(
            l.starts_with("info depth ") || l.starts_with("move ") || l.starts_with("end "),
            "{l:?} in {text}"
        );
    }
    assert!(text.starts_with("info depth 0 value "), "{text}");
    assert!(
        text.lines().next().unwrap().contains(" exact nodes 1 "),
        "{text}"
    );
    let reply = text.lines().last().unwrap();
    assert!(
        reply.len() == 6
            && reply.starts_with("move ")
            && ('a'..='f').contains(&reply.chars().nth(5).unwrap()),
        "{text}"
    );
    // An illegal move stops with exit 2.
    let out = awari(&args, Some("f\n"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1: 'f'"));
    // From the opening, with a clock: the search's iterations, then a move.
    let out = awari(
        &[
            "play",
            "--protocol",
            "--db",
            db,
            "--computer",
            "south",
            "--clock",
            "2s",
        ],
        Some("quit\n"),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.starts_with("info depth 1 value "), "{text}");
    assert!(text.lines().last().unwrap().starts_with("move "), "{text}");
}

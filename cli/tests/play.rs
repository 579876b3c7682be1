//! `awari play` run as a script (one command per line on standard input):
//! moves, `undo`, `save`, `load`, `hint`, computer replies from the
//! database, and the end of a game by each rule.

mod common;

use common::{awari, scratch, vu_copy};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Layers 0..=16 (scores only), for the VU README position's 16 seeds.
fn db16() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch("awari-play-db-");
        let opts = common::options(&dir, 16, false);
        awari_egdb::build::build(&opts, &awari_egdb::solve::Silent).expect("build 0..=16");
        dir
    })
}

/// Runs `awari play --db DB ARGS` with `script` on standard input; returns
/// stdout, after checking the exit status and that no escape codes appear.
fn play(db: &Path, args: &[&str], script: &str) -> String {
    let mut all = vec!["play", "--db", db.to_str().unwrap()];
    all.extend(args);
    let out = awari(&all, Some(script));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{all:?}: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains('\x1b'), "escape codes: {stdout:?}");
    stdout
}

const VU_README: [&str; 12] = ["1", "1", "1", "1", "1", "2", "4", "2", "3", "0", "0", "0"];

fn from(pits: &[&str]) -> Vec<String> {
    let mut v = vec!["--from".to_string()];
    v.extend(pits.iter().map(|s| s.to_string()));
    v
}

#[test]
fn a_scripted_game_with_undo_save_load_and_computer_replies() {
    let dir = scratch("awari-play-files-");
    let rec1 = dir.join("empty.txt");
    let rec2 = dir.join("two.txt");
    let script = format!(
        "F\nundo\nsave {}\nF\nsave {}\nload {}\nhint\nquit\n",
        rec1.display(),
        rec2.display(),
        rec2.display()
    );
    let args = from(&VU_README);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = play(db16(), &a, &script);
    // The start as players see it: North's row on top, right to left.
    assert!(
        out.starts_with(
            "rules: awari (`awari rules awari` shows them)\ncomputer: clock=30m,tables=all\n     f  e  d  c  b  a\n    0  0  0  3  2  4    North: captured 16\n    1  1  1  1  1  2    South: captured 16\n     A  B  C  D  E  F\nSouth to move\n"
        ),
        "{out}"
    );
    // The database's worth of every move, and the best one (as `awari query`
    // gives it for this position: score +0, best pit 5).
    assert!(
        out.contains("A -1  B -1  C -2  D -2  E -2  F +0\nbest: F\n"),
        "{out}"
    );
    assert!(out.contains("South plays F, captures 3\n"), "{out}");
    assert!(
        out.contains("    1  1  1  1  1  0    South: captured 19\n"),
        "{out}"
    );
    // The computer answers with its best move, exactly, at once.
    assert!(
        out.contains("North plays c (worth +3, exact: the tables, clock 29:"),
        "{out}"
    );
    // One undo goes back to the person's turn: the reply and the move.
    assert!(out.contains("took back c, F\n"), "{out}");
    assert_eq!(
        out.matches("North plays c (worth +3, exact").count(),
        2,
        "{out}"
    );
    let start = "start 1 1 1 1 1 2 4 2 3 0 0 0 captured 16 16\n";
    let r1 = std::fs::read_to_string(&rec1).unwrap();
    assert!(r1.ends_with(start) && r1.starts_with('#'), "{r1}");
    let r2 = std::fs::read_to_string(&rec2).unwrap();
    assert!(
        r2.contains(&format!("{start}F\nc  # +3 exact (tables)")),
        "{r2}"
    );
    assert!(out.contains("loaded 2 move(s)"), "{out}");
    // After the load South is to move; the hint is a best move.
    assert!(out.contains("hint: A (worth -3, exact)"), "{out}");

    // --game replays a record.
    let out = play(
        db16(),
        &["--game", rec2.to_str().unwrap(), "--computer", "none"],
        "quit\n",
    );
    assert!(
        out.contains("    1  1  1  0  0  5    North: captured 16\n"),
        "{out}"
    );
    assert!(out.contains("South to move\n"), "{out}");
}

/// From a script the first bad line ends the game with exit status 2,
/// naming the line; the record written so far is kept.
#[test]
fn a_script_stops_at_its_first_bad_line() {
    let dir = scratch("awari-play-bad-");
    let record = dir.join("game.txt");
    let args = from(&VU_README);
    let mut base: Vec<&str> = vec!["play", "--db", db16().to_str().unwrap()];
    base.extend(args.iter().map(String::as_str));
    base.extend(["--computer", "none", "--record", record.to_str().unwrap()]);
    // Each script writes the record again.
    base.push("--force");
    for (script, line, says) in [
        (
            "f\nB\n",
            "line 1: 'f'",
            "f is a pit of North, but South is to move",
        ),
        ("B\nZ\nc\n", "line 2: 'Z'", "'Z' is not a move"),
        ("undo\n", "line 1: 'undo'", "no move to take back"),
        (
            "B\n\n# a comment\nA B\n",
            "line 4: 'A B'",
            "one command per line",
        ),
        ("B\nf\n", "line 2: 'f'", "pit f is empty"),
        (
            "load /nonexistent/game.txt\n",
            "line 1",
            "/nonexistent/game.txt",
        ),
    ] {
        let out = awari(&base, Some(script));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{script:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{script:?}: {err}");
        assert!(
            err.contains(line) && err.contains(says),
            "{script:?}: {err}"
        );
        // Nothing after the bad line was played; everything before is in
        // the record.
        let rec = std::fs::read_to_string(&record).unwrap();
        let played = script.starts_with("B\n");
        assert_eq!(rec.contains("\nB\n"), played, "{script:?}: {rec}");
        assert!(!rec.contains("\nc\n") && !rec.contains("\nA\n"), "{rec}");
    }
    // A bad clock is one line and exit 2 before anything starts.
    for clock in ["5x", "30", "5m+", "0s"] {
        let mut all = base.clone();
        all.extend(["--clock", clock]);
        let out = awari(&all, Some("quit\n"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{clock}: {err}");
        assert_eq!(err.lines().count(), 1, "{clock}: {err}");
        assert!(err.contains("is not a time control"), "{clock}: {err}");
    }
    // A record of another rule set.
    let abapa = dir.join("abapa.txt");
    std::fs::write(&abapa, "rules abapa\nstart 4 4 4 4 4 4 4 4 4 4 4 4\nA\n").unwrap();
    let out = awari(
        &[
            "play",
            "--db",
            db16().to_str().unwrap(),
            "--game",
            abapa.to_str().unwrap(),
        ],
        Some("quit\n"),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("a game under the abapa rules; the tables follow awari"),
        "{err}"
    );
}

/// A game of two people from `pits` (with `extra` arguments) playing `moves`.
fn game(pits: &[&str], extra: &[&str], moves: &str) -> String {
    let args = from(pits);
    let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
    a.extend(["--computer", "none"]);
    a.extend(extra);
    play(db16(), &a, moves)
}

#[test]
fn a_game_ends_by_each_rule() {
    // A side reaching 25: South captures 2 with 23 already (the 45 seeds
    // off the board are split 23/22).
    let out = game(
        &["0", "0", "0", "0", "0", "1", "1", "0", "0", "0", "0", "1"],
        &[],
        "F\n",
    );
    assert!(
        out.contains("game over: South has captured more than half of the seeds"),
        "{out}"
    );
    assert!(out.contains("final score: South 25, North 22"), "{out}");
    // 24 each.
    let out = game(
        &["0", "0", "0", "0", "0", "1", "1", "0", "0", "0", "0", "0"],
        &["--captured", "22,24"],
        "F\n",
    );
    assert!(
        out.contains("game over: both sides have captured 24 seeds"),
        "{out}"
    );
    assert!(out.contains("final score: South 24, North 24"), "{out}");
    // A mover without seeds: South's only move leaves North empty, so it is
    // legal; then North cannot move and South takes the seed left.
    let out = game(
        &["1", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0"],
        &[],
        "A\n",
    );
    assert!(
        out.contains("game over: North has no seeds to move: South takes the seeds left"),
        "{out}"
    );
    assert!(out.contains("final score: South 25, North 23"), "{out}");
    // A repetition: each side walks its seed around the board.
    let out = game(
        &["1", "0", "0", "0", "0", "0", "1", "0", "0", "0", "0", "0"],
        &[],
        "A\na\nB\nb\nC\nc\nD\nd\nE\ne\nF\nf\n",
    );
    assert!(out.contains("game over: the position repeats"), "{out}");
    assert!(out.contains("final score: South 24, North 24"), "{out}");
    // After the end, moves are refused.
    let args = from(&["1", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0"]);
    let mut all = vec![
        "play",
        "--db",
        db16().to_str().unwrap(),
        "--computer",
        "none",
    ];
    all.extend(args.iter().map(String::as_str));
    let o = awari(&all, Some("A\nB\n"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("the game is over"));
}

#[test]
fn two_computers_finish_a_game_and_search_where_layers_are_missing() {
    // From the VU README position: every answer is exact.
    let args = from(&VU_README);
    let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
    a.extend(["--computer", "both"]);
    let out = play(db16(), &a, "");
    assert!(out.contains("game over:"), "{out}");
    assert!(!out.contains("not exact"), "{out}");
    // The same game twice: the tie rule makes it reproducible.
    let moves = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.contains(" plays "))
            .map(|l| l.split(" (").next().unwrap().to_string())
            .collect()
    };
    assert_eq!(moves(&out), moves(&play(db16(), &a, "")));
    // The end names the winner.
    assert!(
        out.contains(": South wins\n")
            || out.contains(": North wins\n")
            || out.contains(": a draw\n"),
        "{out}"
    );
    // From the opening (48 seeds, far above the layers built) the first
    // moves are searched and said to be inexact; a missing layer is named
    // once per turn.
    let out = play(db16(), &["--computer", "both", "--depth", "3"], "");
    assert!(
        out.contains("South plays") && out.contains("; searched 3 plies, "),
        "{out}"
    );
    assert!(out.contains("worth about"), "{out}");
    assert_eq!(
        out.lines().next().map(|l| l.matches("not built").count()),
        Some(0)
    );
    for l in out.lines().filter(|l| l.contains("not built")) {
        assert_eq!(l.matches("not built").count(), 1, "{l}");
    }
    assert!(out.contains("(? layer 48 not built)"), "{out}");
    assert!(out.contains("game over:"), "{out}");
    // At a fixed depth a search is reproducible.
    assert_eq!(
        moves(&out),
        moves(&play(db16(), &["--computer", "both", "--depth", "3"], ""))
    );
}

#[test]
fn play_works_on_a_vu_folder() {
    let vu = vu_copy("awari-play-vu-");
    let args = from(&["0", "0", "0", "0", "0", "1", "1", "0", "0", "0", "0", "1"]);
    let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
    a.extend(["--computer", "north"]);
    let out = play(&vu, &a, "hint\nF\n");
    assert!(out.contains("hint: F (worth +3, exact)"), "{out}");
    assert!(out.contains("final score: South 25, North 22"), "{out}");
}

/// The ends of a game follow the rule set's numbers: a cycle of 12 plies
/// (each side walks one seed around its row and hands it over) ends at
/// the first repetition under awari and at the third occurrence under
/// abapa; a limit of plies without a capture ends it as well; an abapa
/// side that cannot feed ends it keeping its row.
#[test]
fn the_ends_of_a_game_follow_the_rule_set() {
    use awari_egdb::game::{Board, End, Game, Side};
    use awari_egdb::rules::{Rules, ABAPA, AWARI};
    let mut pits = [0u8; 12];
    pits[5] = 1; // South's F
    pits[11] = 1; // North's f
    let start = Board::new(pits, None).unwrap();
    let cycle = ["F", "f", "A", "a", "B", "b", "C", "c", "D", "d", "E", "e"];
    let play_until_end = |rules: Rules| {
        let mut g = Game::new(start, rules);
        let mut plies = 0;
        while g.end().is_none() {
            g.play(cycle[plies % 12])
                .unwrap_or_else(|e| panic!("ply {plies}: {e}"));
            plies += 1;
        }
        (plies, g)
    };
    let (plies, g) = play_until_end(AWARI);
    assert_eq!((plies, g.end()), (12, Some(End::Repetition)));
    assert_eq!(g.final_half_seeds(), Some([2 * 23 + 2, 2 * 23 + 2]));
    let (plies, g) = play_until_end(ABAPA);
    assert_eq!((plies, g.end()), (24, Some(End::Repetition)));
    assert!(g.record().starts_with("# awari game record"));
    assert!(g.record().contains("\nrules abapa\n"));
    let replay = Game::from_record(&g.record()).unwrap();
    assert_eq!(replay.rules(), &ABAPA);
    assert_eq!(replay.end(), Some(End::Repetition));
    // A limit of plies without a capture, before any repetition counts.
    let patient = Rules {
        repetition: 100,
        no_capture_limit: Some(30),
        ..ABAPA
    };
    let (plies, g) = play_until_end(patient);
    assert_eq!((plies, g.end()), (30, Some(End::NoCaptureLimit(30))));
    // South cannot feed North (nothing reaches): abapa ends the game at
    // once, South keeping its 2 seeds; awari lets South move.
    let mut pits = [0u8; 12];
    pits[0] = 1;
    pits[1] = 1;
    let b = Board::new(pits, Some([23, 23])).unwrap();
    let g = Game::new(b, ABAPA);
    assert_eq!(g.end(), Some(End::CannotFeed(Side::South)));
    assert_eq!(g.final_half_seeds(), Some([2 * 25, 2 * 23]));
    assert!(Game::new(b, ABAPA)
        .play("A")
        .is_err_and(|e| matches!(e.cause(), Some(awari_egdb::search::SearchError::GameOver))));
    let mut g = Game::new(b, AWARI);
    assert_eq!(g.end(), None);
    g.play("B").unwrap();
    assert_eq!(g.end(), Some(End::NoSeeds(Side::North)));
    assert_eq!(g.final_half_seeds(), Some([2 * 25, 2 * 23]));
}

/// The olympiad's and awale's ends: the first repetition under both, the
/// seeds left split evenly (olympiad) or nobody's (awale); no 25-seed end
/// under awale; a grand slam that captures (olympiad) or a mover with only
/// grand slams that cannot play (awale); awale's free feeding.
#[test]
fn the_ends_of_olympiad_and_awale_games() {
    use awari_egdb::game::{Board, End, Game, Side};
    use awari_egdb::rules::{Rules, AWALE, OLYMPIAD};
    let mut pits = [0u8; 12];
    pits[5] = 1;
    pits[11] = 1;
    let start = Board::new(pits, None).unwrap();
    let cycle = ["F", "f", "A", "a", "B", "b", "C", "c", "D", "d", "E", "e"];
    let play_until_end = |rules: Rules| {
        let mut g = Game::new(start, rules);
        let mut plies = 0;
        while g.end().is_none() {
            g.play(cycle[plies % 12])
                .unwrap_or_else(|e| panic!("{rules} ply {plies}: {e}"));
            plies += 1;
        }
        (plies, g)
    };
    let (plies, g) = play_until_end(OLYMPIAD);
    assert_eq!((plies, g.end()), (12, Some(End::Repetition)));
    assert_eq!(g.final_half_seeds(), Some([2 * 23 + 2, 2 * 23 + 2]));
    let (plies, g) = play_until_end(AWALE);
    assert_eq!((plies, g.end()), (12, Some(End::Repetition)));
    assert_eq!(g.final_half_seeds(), Some([2 * 23, 2 * 23]));
    assert_eq!(g.winner(), Some(None));
    assert!(g.record().contains("\nrules awale\n"));

    // 25 captured ends an olympiad game, not an awale one.
    let b = Board::new(pits, Some([25, 21])).unwrap();
    assert_eq!(Game::new(b, OLYMPIAD).end(), Some(End::Won(Side::South)));
    assert_eq!(Game::new(b, AWALE).end(), None);

    // South's only move takes North's only seeds.
    let mut pits = [0u8; 12];
    pits[5] = 1;
    pits[6] = 1;
    let b = Board::new(pits, Some([23, 23])).unwrap();
    let mut g = Game::new(b, OLYMPIAD);
    g.play("F").unwrap();
    assert_eq!(g.end(), Some(End::Won(Side::South)));
    assert_eq!(g.final_half_seeds(), Some([2 * 25, 2 * 23]));
    let g = Game::new(b, AWALE);
    assert_eq!(g.end(), Some(End::OnlyGrandSlams(Side::South)));
    assert_eq!(g.final_half_seeds(), Some([2 * 23, 2 * 25]));
    assert_eq!(g.winner(), Some(Some(Side::North)));
    assert!(g.result().unwrap().contains("North takes the seeds left"));

    // North has no seeds: awale lets South keep them from it, and South
    // then takes the rest; olympiad makes South feed.
    let mut pits = [0u8; 12];
    pits[0] = 1;
    pits[5] = 1;
    let b = Board::new(pits, Some([23, 23])).unwrap();
    let mut g = Game::new(b, AWALE);
    g.play("A").unwrap();
    assert_eq!(g.end(), Some(End::NoSeeds(Side::North)));
    assert_eq!(g.final_half_seeds(), Some([2 * 25, 2 * 23]));
    assert!(Game::new(b, OLYMPIAD).play("A").is_err());
    let mut g = Game::new(b, OLYMPIAD);
    g.play("F").unwrap();
    assert_eq!(g.end(), None);
}

/// `save` does not overwrite a file a player saved before: refused (from a
/// script: exit 2, naming `save!`), the file unchanged; `save!` replaces it.
#[test]
fn save_does_not_overwrite_without_being_told() {
    let dir = scratch("awari-play-save-");
    let rec = dir.join("game.txt");
    std::fs::write(&rec, "# an earlier game\n").unwrap();
    let args = from(&VU_README);
    let mut all = vec!["play", "--db", db16().to_str().unwrap()];
    all.extend(args.iter().map(String::as_str));
    let out = awari(&all, Some(&format!("F\nsave {}\nquit\n", rec.display())));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("exists") && err.contains("save!"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&rec).unwrap(),
        "# an earlier game\n"
    );
    let out = play(
        db16(),
        &all[3..],
        &format!("F\nsave! {}\nquit\n", rec.display()),
    );
    assert!(out.contains("saved 2 move(s)"), "{out}");
    assert!(std::fs::read_to_string(&rec).unwrap().contains("\nF"));
}

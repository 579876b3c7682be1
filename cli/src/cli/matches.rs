//! `awari match`: games between two computer players, sides alternating,
//! from the start or from a list of openings; wins, draws, losses, the
//! score and an Elo difference with its error margin; every game record.

use super::player::{clock_time, Spec};
use super::Failure;
use awari_egdb::game::{Board, End, Game, Player, Side};
use awari_egdb::probe::Database;
use awari_egdb::rules::Rules;
use awari_egdb::search::{Engine, Settings};
use awari_egdb::Error;
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

#[derive(Args)]
#[command(after_help = concat!(
    "A player is comma-separated settings: clock=TIME (30m, 90s, 5m+2s, or none), depth=N (plies, ",
    "1..=100), tables=all|none|N (layers 0..=N), threads=T, hash=MIB; e.g. --a clock=1m --b ",
    "depth=6,clock=none. Game k (from 0) plays opening k/2 (cycling through the list), A taking ",
    "South in even games and North in odd ones. An openings file holds one opening per line: move ",
    "labels from the start (A..F South, a..f North, South first), or `start`; # starts a comment.\n\n",
    "Prints a line per game and at the end A's wins, draws and losses, its score and the Elo ",
    "difference A - B with a 95% margin; --records DIR gets every game's record.\n\n",
    "Exit status: 0 success; 1 a check failed (a damaged table); 2 bad input or an I/O error ",
    "(one line on stderr starting with 'awari:')."
))]
pub struct MatchArgs {
    #[command(flatten)]
    db: super::DbArg,
    /// Player A's settings.
    #[arg(long, value_name = "SETTINGS")]
    a: String,
    /// Player B's settings.
    #[arg(long, value_name = "SETTINGS")]
    b: String,
    /// Games to play.
    #[arg(long, value_name = "N", default_value_t = 2)]
    games: usize,
    /// A file of openings (default: every game from the start).
    #[arg(long, value_name = "FILE")]
    openings: Option<PathBuf>,
    /// Write each game's record to DIR/game-NNN.txt.
    #[arg(long, value_name = "DIR")]
    records: Option<PathBuf>,
    /// Games played at the same time (each player's threads per game).
    #[arg(long, value_name = "J", default_value_t = 1)]
    jobs: usize,
}

/// An opening: its line in the file (0: the start) and its moves.
#[derive(Clone, Debug)]
struct Opening {
    line: usize,
    moves: Vec<String>,
}

fn read_openings(path: &Path, rules: &Rules) -> Result<Vec<Opening>, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("{}: {e}", path.display())))?;
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let moves: Vec<String> = if line == "start" {
            Vec::new()
        } else {
            line.split_whitespace().map(str::to_string).collect()
        };
        let mut g = Game::new(Board::opening(), *rules);
        for m in &moves {
            g.play(m).map_err(|e| {
                Failure::usage(format!("{}: line {}: {m}: {e}", path.display(), i + 1))
            })?;
        }
        if g.end().is_some() {
            return Err(Failure::usage(format!(
                "{}: line {}: the game is over after this opening",
                path.display(),
                i + 1
            )));
        }
        out.push(Opening { line: i + 1, moves });
    }
    if out.is_empty() {
        return Err(Failure::usage(format!("{}: no openings", path.display())));
    }
    Ok(out)
}

/// One finished game.
struct Played {
    k: usize,
    opening: Opening,
    a_side: Side,
    game: Game,
    /// Time used by A and by B.
    used: [Duration; 2],
}

impl Played {
    /// Whether A (`i` = 0) or B (1) ran out of time.
    fn flagged(&self, i: usize) -> bool {
        let side = if i == 0 {
            self.a_side
        } else {
            self.a_side.other()
        };
        self.game.end() == Some(End::Time(side))
    }

    /// A's points: 1, 0.5 or 0.
    fn a_points(&self) -> f64 {
        match self.game.winner() {
            Some(Some(w)) if w == self.a_side => 1.0,
            Some(None) => 0.5,
            _ => 0.0,
        }
    }
}

fn play_one(
    db: &Database,
    rules: Rules,
    specs: &[Spec; 2],
    k: usize,
    opening: &Opening,
) -> Result<Played, Failure> {
    let a_side = if k % 2 == 0 { Side::South } else { Side::North };
    let mut g = Game::new(Board::opening(), rules);
    for m in &opening.moves {
        g.play(m)?;
    }
    let make = |s: &Spec| -> Result<Player, Error> {
        let settings = Settings {
            tables: s.tables,
            threads: s.threads,
            hash_bytes: s.hash_mib << 20,
        };
        Ok(Player::new(
            Engine::new(db, rules, settings)?,
            s.clock,
            s.depth,
        ))
    };
    // players[0] is A.
    let mut players = [make(&specs[0])?, make(&specs[1])?];
    while g.end().is_none() {
        let who = usize::from(g.board().to_move != a_side);
        players[who].move_in(&mut g, |_| {})?;
    }
    Ok(Played {
        k,
        opening: opening.clone(),
        a_side,
        used: [players[0].used, players[1].used],
        game: g,
    })
}

/// The Elo difference for a score share `s` (0 < s < 1).
fn elo(s: f64) -> f64 {
    -400.0 * (1.0 / s - 1.0).log10()
}

/// The score, the Elo difference and its 95% interval from A's points per
/// game; an interval end is infinite when the score share reaches it.
pub fn rating(points: &[f64]) -> (f64, f64, f64, f64) {
    let n = points.len() as f64;
    let s = points.iter().sum::<f64>() / n;
    let var = points.iter().map(|x| (x - s) * (x - s)).sum::<f64>() / n;
    // Every game alike: the rule of three bounds the other result's rate.
    let se = if var > 0.0 {
        (var / n).sqrt()
    } else {
        3.0 / n / 1.96
    };
    let at = |x: f64| {
        if x <= 0.0 {
            f64::NEG_INFINITY
        } else if x >= 1.0 {
            f64::INFINITY
        } else {
            elo(x)
        }
    };
    (s, at(s), at(s - 1.96 * se), at(s + 1.96 * se))
}

fn show_elo(e: f64) -> String {
    if e.is_infinite() {
        if e > 0.0 { "+inf" } else { "-inf" }.into()
    } else {
        format!("{e:+.0}")
    }
}

pub fn run(a: MatchArgs) -> Result<(), Failure> {
    let rules = a.db.rules()?;
    let specs = [Spec::parse("--a", &a.a)?, Spec::parse("--b", &a.b)?];
    if a.games == 0 {
        return Err(Failure::usage("--games must be at least 1"));
    }
    if a.jobs == 0 {
        return Err(Failure::usage("--jobs must be at least 1"));
    }
    let openings = match &a.openings {
        Some(p) => read_openings(p, &rules)?,
        None => vec![Opening {
            line: 0,
            moves: Vec::new(),
        }],
    };
    if let Some(dir) = &a.records {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::usage(format!("{}: {e}", dir.display())))?;
    }
    let db = super::player::open_tables(&a.db, &rules, "both players search without tables")?;
    println!(
        "match: {} games, rules {rules}{}, A = {}, B = {}; {} opening(s); tables: layers {}",
        a.games,
        match super::assumed(&db) {
            Some(note) => format!(" ({note})"),
            None => String::new(),
        },
        specs[0].describe(),
        specs[1].describe(),
        openings.len(),
        match db.layers() {
            l if l.is_empty() => "none".to_string(),
            l => format!("{}..={}", l[0], l[l.len() - 1]),
        }
    );
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Played>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<Failure>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..a.jobs.min(a.games) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::SeqCst);
                if k >= a.games || failure.lock().unwrap().is_some() {
                    return;
                }
                let opening = &openings[(k / 2) % openings.len()];
                match play_one(&db, rules, &specs, k, opening).and_then(|p| {
                    write_record(&a, &specs, &p)?;
                    Ok(p)
                }) {
                    Ok(p) => {
                        let mut d = done.lock().unwrap();
                        d.push(p);
                        report_game(&d, a.games);
                    }
                    Err(f) => {
                        failure.lock().unwrap().get_or_insert(f);
                        return;
                    }
                }
            });
        }
    });
    if let Some(f) = failure.into_inner().unwrap() {
        return Err(f);
    }
    let mut played = done.into_inner().unwrap();
    played.sort_by_key(|p| p.k);
    summary(&played);
    Ok(())
}

fn write_record(a: &MatchArgs, specs: &[Spec; 2], p: &Played) -> Result<(), Failure> {
    let Some(dir) = &a.records else {
        return Ok(());
    };
    let (south, north) = match p.a_side {
        Side::South => (("A", &specs[0]), ("B", &specs[1])),
        Side::North => (("B", &specs[1]), ("A", &specs[0])),
    };
    let text = format!(
        "# awari match game {}: South = {} ({}), North = {} ({}); opening {}; time used: A {}, B {}\n{}",
        p.k + 1,
        south.0,
        south.1.describe(),
        north.0,
        north.1.describe(),
        opening_name(&p.opening),
        clock_time(p.used[0]),
        clock_time(p.used[1]),
        p.game.record()
    );
    let path = dir.join(format!("game-{:03}.txt", p.k + 1));
    awari_egdb::store::write_atomic(&path, text.as_bytes())?;
    Ok(())
}

fn opening_name(o: &Opening) -> String {
    if o.moves.is_empty() {
        "start".into()
    } else {
        format!("line {}: {}", o.line, o.moves.join(" "))
    }
}

/// The line printed when a game ends: its result and the running score.
fn report_game(done: &[Played], games: usize) {
    let p = done.last().expect("a game just ended");
    let (w, d, l) = wdl(done);
    let pts = w as f64 + d as f64 / 2.0;
    println!(
        "game {}/{} ({} done; A {}; opening {}): {}; {} moves; time A {} B {}{}; A so far +{w} ={d} -{l} ({:.1}%)",
        p.k + 1,
        games,
        done.len(),
        p.a_side.name(),
        opening_name(&p.opening),
        p.game.result().unwrap_or_default(),
        p.game.moves().len(),
        clock_time(p.used[0]),
        clock_time(p.used[1]),
        match (p.flagged(0), p.flagged(1)) {
            (true, _) => "; A ran out of time",
            (_, true) => "; B ran out of time",
            _ => "",
        },
        100.0 * pts / done.len() as f64
    );
}

fn wdl(done: &[Played]) -> (usize, usize, usize) {
    let w = done.iter().filter(|p| p.a_points() == 1.0).count();
    let d = done.iter().filter(|p| p.a_points() == 0.5).count();
    (w, d, done.len() - w - d)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn summary(played: &[Played]) {
    let (w, d, l) = wdl(played);
    let points: Vec<f64> = played.iter().map(Played::a_points).collect();
    let (s, e, lo, hi) = rating(&points);
    println!(
        "result: A +{w} ={d} -{l} of {}: A scores {:.1} points ({:.1}%); Elo A - B {} (95%: {} .. {})",
        played.len(),
        points.iter().sum::<f64>(),
        100.0 * s,
        show_elo(e),
        show_elo(lo),
        show_elo(hi)
    );
    for (i, name) in ["A", "B"].iter().enumerate() {
        let used: Vec<Duration> = played.iter().map(|p| p.used[i]).collect();
        let flags = played.iter().filter(|p| p.flagged(i)).count();
        println!(
            "time {name}: median {} per game, most {}; out of time in {flags} game(s)",
            clock_time(median(used.clone())),
            clock_time(used.iter().copied().max().unwrap_or_default())
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratings() {
        let (s, e, lo, hi) = rating(&[1.0, 0.0]);
        assert_eq!((s, e), (0.5, 0.0));
        assert!(lo.is_infinite() && hi.is_infinite());
        let pts: Vec<f64> = (0..100).map(|i| if i < 76 { 1.0 } else { 0.0 }).collect();
        let (s, e, lo, hi) = rating(&pts);
        assert!((s - 0.76).abs() < 1e-12);
        assert!((e - 200.0).abs() < 1.0, "{e}");
        assert!(
            lo < e && e < hi && hi - lo > 100.0 && hi - lo < 250.0,
            "{lo} {hi}"
        );
        let (_, e, lo, hi) = rating(&[1.0; 50]);
        assert!(e.is_infinite() && hi.is_infinite());
        // Rule of three: at least 94% of the points.
        assert!((lo - elo(0.94)).abs() < 1.0, "{lo}");
    }
}

//! `awari play`: a game against the computer (or between two people, or
//! two computers), one command per line; the same on a terminal and from a
//! script (no escape codes are printed). `--protocol` is the line protocol
//! for other programs.

use super::board::parse_pits;
use super::player::{self, clock_time, iteration_line, move_line, Spec};
use super::Failure;
use awari_egdb::game::{self, Board, Game, Player, Side};
use awari_egdb::probe::Database;
use awari_egdb::rules::Rules;
use awari_egdb::search::{Budget, Engine, Limits, Settings, MAX_DEPTH};
use awari_egdb::Error;
use clap::{Args, ValueEnum};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Computer {
    South,
    North,
    Both,
    None,
}

#[derive(Args)]
#[command(after_help = concat!(
    "Commands, one per line: a pit label (A..F for South, a..f for North) plays it; ",
    "undo takes moves back to your last turn (repeatable); go lets the computer move for the side to move; ",
    "hint shows the best moves; save FILE writes the game record (save! FILE replaces an \
     existing file); load FILE reads one; ",
    "help; quit. On a terminal a bad line is refused and the game goes on; from a script the first ",
    "bad line stops the game (exit 2) naming it.\n\n",
    "The computer plays a best move of the tables at once where every move leads into a built layer; ",
    "elsewhere it searches (iterative deepening, exact wherever the tables are reached) within its clock: ",
    "each move's budget is a share of the time left, never more than a quarter of it.\n\n",
    "--protocol, for programs: read one move label per line (or quit); print `info depth D value V ",
    "[exact] nodes N nps R time S line L...` for each search iteration, `move L` for each computer move ",
    "and `end SENTENCE` when the game ends.\n\n",
    "Exit status: 0 success; 1 a check failed (a damaged table); 2 bad input or an I/O error ",
    "(one line on stderr starting with 'awari:')."
))]
pub struct PlayArgs {
    #[command(flatten)]
    db: super::DbArg,
    /// Start from this position (12 pit counts, the side to move first, as
    /// `awari query` takes them); that side is South.
    #[arg(
        long,
        value_name = "PIT",
        num_args = 12,
        allow_negative_numbers = true,
        conflicts_with = "game"
    )]
    from: Option<Vec<String>>,
    /// Seeds captured before the start, South then North, e.g. 20,12
    /// (default: the seeds off the board, split evenly).
    #[arg(
        long,
        value_name = "S,N",
        requires = "from",
        allow_hyphen_values = true
    )]
    captured: Option<String>,
    /// Start from a position in the notation, e.g. 1,0,0,0,0,3/0,0,2,0,0,0/N/20,22
    /// (South's pits A..F / North's a..f / side to move / captured by
    /// South,North; the last field may be left out).
    #[arg(long, value_name = "NOTATION", conflicts_with_all = ["from", "game"])]
    pos: Option<String>,
    /// Start from a game record written by `save`.
    #[arg(long, value_name = "FILE")]
    game: Option<PathBuf>,
    /// Which sides the computer plays.
    #[arg(long, value_enum, default_value = "north")]
    computer: Computer,
    /// The computer's time per side per game, with an optional increment
    /// per move: 30m, 90s, 5m+2s; `none`: no clock (give --depth). A
    /// person's time is not limited.
    #[arg(long, value_name = "TIME", default_value = "30m")]
    clock: String,
    /// The deepest search, in plies (1..=100; default: as deep as the
    /// clock allows). Each iteration taking over a second is shown.
    #[arg(long, value_name = "N")]
    depth: Option<u32>,
    /// A fixed time for each of the computer's moves (e.g. 1m, 10s),
    /// within its clock.
    #[arg(long, value_name = "TIME")]
    move_time: Option<String>,
    /// Search threads per computer side.
    #[arg(long, value_name = "T", default_value_t = 1)]
    threads: usize,
    /// MiB of transposition table per computer side.
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    hash: usize,
    /// The layers the computer reads: all, none, or N (layers 0..=N).
    #[arg(long, value_name = "N", default_value = "all")]
    tables: String,
    /// Write the game record to FILE after every move (written to a
    /// temporary name, then renamed). An existing FILE is refused unless
    /// the game was loaded from it (--game FILE) or --force is given.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// With --record: replace an existing FILE.
    #[arg(long, requires = "record")]
    force: bool,
    /// Show every iteration of every search.
    #[arg(long)]
    verbose: bool,
    /// The line protocol for programs (see below).
    #[arg(long)]
    protocol: bool,
}

/// A game record, which must follow the game's rule set.
fn read_game(path: &Path, rules: &Rules) -> Result<Game, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let g = Game::from_record(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if g.rules() != rules {
        return Err(format!(
            "{}: a game under the {} rules; the tables follow {}",
            path.display(),
            g.rules(),
            rules
        ));
    }
    Ok(g)
}

fn start(a: &PlayArgs, rules: &Rules) -> Result<Game, Failure> {
    if let Some(path) = &a.game {
        return read_game(path, rules).map_err(Failure::usage);
    }
    if let Some(pos) = &a.pos {
        return Ok(Game::new(Board::from_notation(pos)?, *rules));
    }
    let Some(words) = &a.from else {
        return Ok(Game::new(Board::opening(), *rules));
    };
    // Any board a record's `start` line may hold, the opening too (the
    // tables need not index it).
    let pits = parse_pits(words)?;
    let captured = match &a.captured {
        None => None,
        Some(s) => {
            let v: Vec<u32> = s
                .split(',')
                .map(|w| w.trim().parse::<u32>())
                .collect::<Result<_, _>>()
                .map_err(|_| Failure::usage(format!("--captured '{s}': give S,N, e.g. 20,12")))?;
            match v[..] {
                [s, n] => Some([s, n]),
                _ => return Err(Failure::usage(format!("--captured '{s}': give S,N"))),
            }
        }
    };
    Ok(Game::new(
        Board::new(pits, captured).map_err(|e| Failure::usage(e.to_string()))?,
        *rules,
    ))
}

/// `--record FILE`: an existing file is replaced only when the game was
/// loaded from it (`--game FILE`) or with `--force`.
fn check_record(a: &PlayArgs) -> Result<(), Failure> {
    let Some(path) = &a.record else {
        return Ok(());
    };
    if a.force || !path.exists() {
        return Ok(());
    }
    let same = |g: &PathBuf| match (g.canonicalize(), path.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    };
    if a.game.as_ref().is_some_and(same) {
        return Ok(());
    }
    Err(Failure::usage(format!(
        "--record {}: the file exists; give --force to replace it, or --game {} to \
         continue that game",
        path.display(),
        path.display()
    )))
}

fn computer_plays(c: Computer, side: Side) -> bool {
    matches!(
        (c, side),
        (Computer::Both, _) | (Computer::South, Side::South) | (Computer::North, Side::North)
    )
}

/// The session: the game, the two sides' players and what is printed.
struct Session<'d> {
    a: &'d PlayArgs,
    db: &'d Database,
    g: Game,
    /// The computer of each side (also for `go` and `hint`).
    players: [Player<'d>; 2],
}

impl<'d> Session<'d> {
    fn say(&self, s: &str) {
        if !self.a.protocol {
            println!("{s}");
        }
    }

    /// The board, and for the side to move the worth of every legal move.
    fn show(&self) -> Result<(), Failure> {
        if self.a.protocol {
            if let Some(r) = self.g.result() {
                println!("end {r}");
            }
            return Ok(());
        }
        let b = self.g.board();
        print!("{}", b.diagram());
        if let Some(r) = self.g.result() {
            let (sentence, score) = r.split_once("; ").unwrap_or((&r, ""));
            println!("game over: {sentence}");
            println!("final score: {score}");
            return Ok(());
        }
        let who = if computer_plays(self.a.computer, b.to_move) {
            " (computer)"
        } else {
            ""
        };
        let worths = game::move_worths(self.db, &self.g)?;
        let mut missing: Vec<u32> = worths.iter().filter_map(|w| w.missing_layer).collect();
        missing.sort_unstable();
        missing.dedup();
        let parts: Vec<String> = worths
            .iter()
            .map(|w| match w.worth {
                Some(v) => format!("{} {v:+}", w.label),
                None => format!("{} ?", w.label),
            })
            .collect();
        let note = match missing.len() {
            0 => String::new(),
            1 => format!(" (? layer {} not built)", missing[0]),
            _ => format!(
                " (? layers {} not built)",
                missing
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        println!(
            "{}{who}: worth of each move (seeds it will still win minus the opponent's): {}{note}",
            b.to_move.name(),
            parts.join("  ")
        );
        match game::best_labels(&worths) {
            Some(best) => {
                let best: Vec<String> = best.iter().map(|c| c.to_string()).collect();
                println!("best: {}", best.join(", "));
            }
            None => println!("best: unknown (the computer searches)"),
        }
        Ok(())
    }

    /// Writes the record to `--record`, if given.
    fn keep(&self) -> Result<(), Failure> {
        if let Some(path) = &self.a.record {
            awari_egdb::store::write_atomic(path, self.g.record().as_bytes())?;
        }
        Ok(())
    }

    /// The computer moves for the side to move.
    fn computer_move(&mut self) -> Result<(), Failure> {
        let side = self.g.board().to_move;
        let (protocol, verbose) = (self.a.protocol, self.a.verbose);
        let p = &mut self.players[side.index()];
        let moved = p.move_in(&mut self.g, |o| {
            if protocol {
                println!("info {}", iteration_line(side, o));
            } else if verbose || o.elapsed >= Duration::from_secs(1) {
                println!("  {}", iteration_line(side, o));
            }
            let _ = std::io::stdout().flush();
        })?;
        let left = p.clock.as_ref().map(|c| c.left());
        if let Some((c, took)) = moved {
            if self.g.end() == Some(game::End::Time(side)) {
                self.say(&format!(
                    "{} ran out of time ({} for its move)",
                    side.name(),
                    clock_time(took)
                ));
            } else if protocol {
                println!("move {}", c.label);
            } else {
                println!("{}", move_line(side, &c, took, left));
            }
        }
        self.keep()?;
        self.show()
    }

    /// A person's move (or a bad line's error).
    fn person_move(&mut self, label: &str) -> Result<(), Error> {
        let side = self.g.board().to_move;
        let c = self.g.play(label)?;
        self.say(&format!(
            "{} plays {label}{}",
            side.name(),
            if c > 0 {
                format!(", captures {c}")
            } else {
                String::new()
            }
        ));
        Ok(())
    }
}

const HELP: &str = "commands: a pit label (A..F South, a..f North) | undo | go | hint | save FILE | save! FILE | load FILE | help | quit";

pub fn run(a: PlayArgs) -> Result<(), Failure> {
    let rules = a.db.rules()?;
    let clock = player::parse_clock("--clock", &a.clock)?;
    let tables = player::parse_tables("--tables", &a.tables)?;
    let threads = player::check_threads("--threads", a.threads)?;
    let depth = match a.depth {
        Some(d) => player::check_depth("--depth", d)?,
        None if clock.is_none() && a.move_time.is_none() => {
            return Err(Failure::usage(
                "--clock none: give --depth N or --move-time T too, or the search has no bound",
            ))
        }
        None => MAX_DEPTH,
    };
    let hash = player::check_hash("--hash", a.hash)?;
    check_record(&a)?;
    // No tables: play by the rule set, the computer searching.
    let db = player::open_tables(
        &a.db,
        &rules,
        "playing without tables, the computer searches",
    )?;
    let g = start(&a, &rules)?;
    let settings = Settings {
        tables,
        threads,
        hash_bytes: hash << 20,
    };
    let move_time = match &a.move_time {
        None => None,
        Some(t) => Some(
            t.parse::<awari_egdb::search::TimeControl>()
                .ok()
                .filter(|tc| tc.increment.is_zero())
                .map(|tc| tc.base)
                .ok_or_else(|| {
                    Failure::usage(format!("--move-time '{t}': give a time, e.g. 10s or 1m"))
                })?,
        ),
    };
    let player = || -> Result<Player, Failure> {
        let mut p = Player::new(Engine::new(&db, rules, settings)?, clock, depth);
        p.move_time = move_time;
        Ok(p)
    };
    let mut s = Session {
        a: &a,
        db: &db,
        g,
        players: [player()?, player()?],
    };
    let spec = Spec {
        clock,
        depth,
        tables,
        threads,
        hash_mib: hash,
    };
    let assumed = match super::assumed(&db) {
        Some(note) => format!("{note}; "),
        None => String::new(),
    };
    s.say(&format!(
        "rules: {rules} ({assumed}`awari rules {rules}` shows them)"
    ));
    if a.computer != Computer::None {
        s.say(&format!("computer: {}", spec.describe()));
    }
    let interactive = std::io::stdin().is_terminal() && !a.protocol;
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines().enumerate();
    // The computer moves on its turn, except right after a load (until
    // `go` or a move of the other side).
    let mut auto = true;
    s.keep()?;
    s.show()?;
    loop {
        if s.g.end().is_none() && auto && computer_plays(a.computer, s.g.board().to_move) {
            s.computer_move()?;
            continue;
        }
        if s.g.end().is_some() && a.computer == Computer::Both {
            return Ok(());
        }
        if interactive {
            print!("> ");
        }
        let _ = std::io::stdout().flush();
        let Some((i, line)) = lines.next() else {
            return Ok(());
        };
        let raw = line.map_err(|e| Failure::usage(format!("reading standard input: {e}")))?;
        let line = raw.split('#').next().unwrap_or_default().trim().to_string();
        let words: Vec<&str> = line.split_whitespace().collect();
        // A bad line: asked again on a terminal; from a script, the end.
        let bad = |msg: String| -> Result<(), Failure> {
            if interactive {
                eprintln!("awari: {msg}");
                Ok(())
            } else {
                Err(Failure::usage(format!(
                    "line {}: '{}': {msg}",
                    i + 1,
                    raw.trim()
                )))
            }
        };
        match words[..] {
            [] => continue,
            ["quit" | "exit"] => return Ok(()),
            ["help"] if !a.protocol => println!("{HELP}"),
            ["undo"] if !a.protocol => {
                // Back to the last turn of a person (one move if the
                // computer plays neither side or both).
                let mut taken = Vec::new();
                loop {
                    match s.g.undo() {
                        Ok(l) => taken.push(l.to_string()),
                        Err(e) if taken.is_empty() => {
                            bad(e.to_string())?;
                            break;
                        }
                        Err(_) => break,
                    }
                    let to_move = s.g.board().to_move;
                    if a.computer == Computer::Both || !computer_plays(a.computer, to_move) {
                        break;
                    }
                }
                if !taken.is_empty() {
                    println!("took back {}", taken.join(", "));
                    auto = a.computer != Computer::Both;
                    s.keep()?;
                    s.show()?;
                }
            }
            ["go"] if !a.protocol => {
                auto = true;
                if s.g.end().is_none() {
                    s.computer_move()?;
                }
            }
            ["hint"] if !a.protocol => {
                let side = s.g.board().to_move;
                let engine = &s.players[side.index()].engine;
                let limits = Limits::timed(
                    Budget {
                        soft: Duration::from_secs(1),
                        hard: Duration::from_secs(3),
                    },
                    depth,
                );
                if let Some(c) = game::choose(engine, &s.g, limits, |_| {})? {
                    println!(
                        "hint: {} (worth {:+}{})",
                        c.label,
                        c.worth(),
                        if c.exact() {
                            ", exact".to_string()
                        } else {
                            format!(", searched {} plies: not exact", c.search.depth)
                        }
                    );
                }
            }
            ["save", file] if !a.protocol && Path::new(file).exists() => bad(format!(
                "{file} exists: `save! {file}` replaces it, or save under another name"
            ))?,
            ["save" | "save!", file] if !a.protocol => {
                match awari_egdb::store::write_atomic(Path::new(file), s.g.record().as_bytes()) {
                    Ok(()) => println!("saved {} move(s) to {file}", s.g.moves().len()),
                    Err(e) => bad(e.to_string())?,
                }
            }
            ["load", file] if !a.protocol => match read_game(Path::new(file), &rules) {
                Ok(loaded) => {
                    s.g = loaded;
                    auto = false;
                    for p in &s.players {
                        p.engine.clear();
                    }
                    println!("loaded {} move(s) from {file}", s.g.moves().len());
                    s.keep()?;
                    s.show()?;
                }
                Err(e) => bad(e)?,
            },
            ["save" | "save!" | "load"] if !a.protocol => {
                bad("save and load need one file name".into())?
            }
            [label] => match s.person_move(label) {
                Ok(()) => {
                    auto = true;
                    s.keep()?;
                    s.show()?;
                }
                Err(e) => bad(if a.protocol {
                    e.to_string()
                } else {
                    format!("{e} ({HELP})")
                })?,
            },
            _ => bad(if a.protocol {
                "one move label per line".into()
            } else {
                format!("one command per line ({HELP})")
            })?,
        }
    }
}

//! `awari play`: a game against perfect play (or between two people, or
//! two computers), one command per line; the same on a terminal and from a
//! script (no escape codes are printed).

use super::board::parse_board;
use super::Failure;
use awari_egdb::game::{self, Board, Game, Side};
use awari_egdb::probe::Database;
use awari_egdb::rules::Rules;
use awari_egdb::Error;
use clap::{Args, ValueEnum};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

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
    "undo takes the last move back (repeatable); go lets the computer move for the side to move; ",
    "hint shows the best moves; save FILE writes the game record; load FILE reads one; ",
    "help; quit. The computer plays a best move from the database, the lowest label among equals; ",
    "where the layers are not built it searches --depth plies and says its move is not exact.\n\n",
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
    /// Start from a game record written by `save`.
    #[arg(long, value_name = "FILE")]
    game: Option<PathBuf>,
    /// Which sides the computer plays.
    #[arg(long, value_enum, default_value = "north")]
    computer: Computer,
    /// Plies the computer searches where the database has no answer.
    #[arg(long, value_name = "N", default_value_t = 6)]
    depth: u32,
}

/// A game record, which must follow the folder's rule set.
fn read_game(path: &PathBuf, rules: &Rules) -> Result<Game, String> {
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
    let Some(words) = &a.from else {
        return Ok(Game::new(Board::opening(), *rules));
    };
    let p = parse_board(words)?;
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
        Board::new(p.0, captured).map_err(|e| Failure::usage(e.to_string()))?,
        *rules,
    ))
}

fn computer_plays(c: Computer, side: Side) -> bool {
    matches!(
        (c, side),
        (Computer::Both, _) | (Computer::South, Side::South) | (Computer::North, Side::North)
    )
}

fn half(h: u32) -> String {
    if h % 2 == 0 {
        (h / 2).to_string()
    } else {
        format!("{}.5", h / 2)
    }
}

/// The board, and for the side to move the worth of every legal move.
fn show(db: &Database, g: &Game, c: Computer) -> Result<(), Failure> {
    let b = g.board();
    print!("{}", b.diagram());
    if let Some(end) = g.end() {
        let [s, n] = g.final_half_seeds().expect("ended");
        println!("game over: {}", end.describe());
        println!("final score: South {}, North {}", half(s), half(n));
        return Ok(());
    }
    let who = if computer_plays(c, b.to_move) {
        " (computer)"
    } else {
        ""
    };
    let worths = game::move_worths(db, g)?;
    let parts: Vec<String> = worths
        .iter()
        .map(|w| match (w.worth, w.missing_layer) {
            (Some(v), _) => format!("{} {v:+}", w.label),
            (None, Some(l)) => format!("{} (layer {l} not built)", w.label),
            _ => w.label.to_string(),
        })
        .collect();
    println!(
        "{}{who}: worth of each move (seeds it will still win minus the opponent's): {}",
        b.to_move.name(),
        parts.join("  ")
    );
    match game::best_labels(&worths) {
        Some(best) => {
            let best: Vec<String> = best.iter().map(|c| c.to_string()).collect();
            println!("best: {}", best.join(", "));
        }
        None => println!("best: unknown (a layer these moves lead to is not built)"),
    }
    Ok(())
}

fn computer_move(db: &Database, g: &mut Game, depth: u32) -> Result<(), Failure> {
    let side = g.board().to_move;
    if let Some(c) = game::choose(db, g, depth)? {
        g.play(&c.label.to_string())
            .map_err(|e| Failure::usage(e.to_string()))?;
        if c.exact {
            println!(
                "{} plays {} (worth {:+}, exact)",
                side.name(),
                c.label,
                c.worth
            );
        } else {
            println!(
                "{} plays {} (searched {} plies: worth about {:+}; not exact, the layers are not built)",
                side.name(),
                c.label,
                c.depth,
                c.worth
            );
        }
    }
    Ok(())
}

const HELP: &str = "commands: a pit label (A..F South, a..f North) | undo | go | hint | save FILE | load FILE | help | quit";

pub fn run(a: PlayArgs) -> Result<(), Failure> {
    let rules = a.db.rules()?;
    let dir = a.db.path();
    let db = match Database::open(&dir) {
        Ok(db) => db,
        // No tables: play by the rule set, the computer searching.
        Err(e @ (Error::NoSuchFolder(_) | Error::NoTables(_))) => {
            eprintln!(
                "awari: note: {e}; playing without tables, the computer searches --depth plies"
            );
            Database::from_tables_of::<Vec<u8>>(&rules, Vec::new())?
        }
        Err(e) => return Err(e.into()),
    };
    let mut g = start(&a, &rules)?;
    println!("rules: {rules} (`awari rules {rules}` shows them)");
    let interactive = std::io::stdin().is_terminal();
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    // The computer moves on its turn, except right after an undo or a load
    // (until `go` or a move of the other side).
    let mut auto = true;
    show(&db, &g, a.computer)?;
    loop {
        if g.end().is_none() && auto && computer_plays(a.computer, g.board().to_move) {
            computer_move(&db, &mut g, a.depth)?;
            show(&db, &g, a.computer)?;
            continue;
        }
        if g.end().is_some() && a.computer == Computer::Both {
            return Ok(());
        }
        if interactive {
            print!("> ");
        }
        let _ = std::io::stdout().flush();
        let Some(line) = lines.next() else {
            return Ok(());
        };
        let line = line.map_err(|e| Failure::usage(format!("reading standard input: {e}")))?;
        let line = line
            .split('#')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        let (cmd, arg) = match line.split_once(char::is_whitespace) {
            Some((c, r)) => (c, r.trim()),
            None => (line.as_str(), ""),
        };
        match cmd {
            "" => continue,
            "quit" | "exit" => return Ok(()),
            "help" => println!("{HELP}"),
            "undo" => match g.undo() {
                Ok(l) => {
                    println!("took back {l}");
                    auto = false;
                    show(&db, &g, a.computer)?;
                }
                Err(e) => eprintln!("awari: {e}"),
            },
            "go" => {
                auto = true;
                if g.end().is_none() {
                    computer_move(&db, &mut g, a.depth)?;
                    show(&db, &g, a.computer)?;
                }
            }
            "hint" => {
                if let Some(c) = game::choose(&db, &g, a.depth)? {
                    println!(
                        "hint: {} (worth {:+}{})",
                        c.label,
                        c.worth,
                        if c.exact {
                            ", exact"
                        } else {
                            ", searched: not exact"
                        }
                    );
                }
            }
            "save" if !arg.is_empty() => match std::fs::write(arg, g.record()) {
                Ok(()) => println!("saved {} move(s) to {arg}", g.moves().len()),
                Err(e) => eprintln!("awari: {arg}: {e}"),
            },
            "load" if !arg.is_empty() => match read_game(&PathBuf::from(arg), &rules) {
                Ok(loaded) => {
                    g = loaded;
                    auto = false;
                    println!("loaded {} move(s) from {arg}", g.moves().len());
                    show(&db, &g, a.computer)?;
                }
                Err(e) => eprintln!("awari: {e}"),
            },
            "save" | "load" => eprintln!("awari: {cmd} needs a file name"),
            label => match g.play(label) {
                Ok(c) => {
                    let side = g.board().to_move.other();
                    println!(
                        "{} plays {label}{}",
                        side.name(),
                        if c > 0 {
                            format!(", captures {c}")
                        } else {
                            String::new()
                        }
                    );
                    auto = true;
                    show(&db, &g, a.computer)?;
                }
                Err(e) => eprintln!("awari: {e} ({HELP})"),
            },
        }
    }
}

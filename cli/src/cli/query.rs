//! `awari query`: exact scores, the envelope, the six moves and best play.

use super::board::{label, parse_board};
use super::Failure;
use awari_egdb::game::{Board, Side};
use awari_egdb::probe::{Answer, Database, PvEnd};
use awari_egdb::rules::Position;
use awari_egdb::store::StoreError;
use clap::Args;
use std::io::BufRead;

#[derive(Args)]
#[command(after_help = super::EXIT_CODES)]
pub struct QueryArgs {
    #[command(flatten)]
    db: super::DbArg,
    /// Twelve pit counts: the mover's pits A..F, then the opponent's a..f.
    #[arg(value_name = "PIT", num_args = 0.., allow_negative_numbers = true)]
    pits: Vec<String>,
    /// The position in the notation instead of the pits, e.g.
    /// 1,0,0,0,0,3/0,0,2,0,0,0/N/20,22 (South's A..F / North's a..f / side
    /// to move / captured); it is answered for its side to move.
    #[arg(long, value_name = "NOTATION", conflicts_with_all = ["pits", "stdin"])]
    pos: Option<String>,
    /// Print one JSON object (one per line with --stdin).
    #[arg(long)]
    json: bool,
    /// Also print the line of best play, at most N moves.
    #[arg(long, value_name = "N")]
    pv: Option<usize>,
    /// Read one position per line from standard input (12 numbers separated
    /// by spaces or commas) instead of the arguments; blank lines and text
    /// after a '#' are skipped.
    #[arg(long, conflicts_with = "pits")]
    stdin: bool,
    /// Verify the checksum of every table a layer's first lookup reads
    /// (reads those tables whole; without it a lookup reads only the bytes it
    /// needs and `awari verify --checksums` or `awari check` check tables).
    #[arg(long)]
    verify: bool,
}

/// The Goedel number, `-` for a board without one.
fn index(a: &Answer) -> String {
    a.index.map_or("-".into(), |g| g.to_string())
}

fn signed(v: i8) -> String {
    format!("{v:+}")
}

/// The answer as text; `board`: the position as players see it (from
/// `--pos`), whose side to move's pits are labelled as `play` labels them.
fn print_text(p: &Position, a: &Answer, board: Option<&Board>) {
    let side = board.map_or(Side::South, |b| b.to_move);
    let label = |pit: usize| side.label(pit);
    match board {
        Some(b) => print!("{}", b.diagram()),
        None => print!("{}", p.diagram()),
    }
    let assumed = match a.rules_assumed {
        true => format!(" ({})", super::ASSUMED),
        false => String::new(),
    };
    println!(
        "seeds {}  index {}  rules {}{assumed}",
        a.seeds,
        index(a),
        a.rules
    );
    print!("score {}", signed(a.score));
    match (a.lower, a.upper, a.pinned) {
        (Some(lo), Some(hi), Some(pinned)) => println!(
            "  envelope {}..{}  {}",
            signed(lo),
            signed(hi),
            if pinned {
                "pinned (independent of the cycle rule)"
            } else {
                "not pinned (depends on how endless play is scored)"
            }
        ),
        _ => println!("  (no envelope in these tables)"),
    }
    match a.distance {
        Some(d) => println!("distance {d} (both sides keeping the score)"),
        None if !a.best.is_empty() => println!(
            "distance: not in these tables (built without it): best play may repeat a \
             position before the capture the score needs"
        ),
        None => {}
    }
    println!("pit  seeds  move");
    for m in &a.moves {
        let seeds = p.0[m.pit as usize];
        let what = if seeds == 0 {
            "empty".to_string()
        } else if !m.legal {
            "illegal (leaves the opponent without seeds)".to_string()
        } else {
            format!(
                "captures {:>2}  worth {}{}",
                m.captures,
                signed(m.score.expect("legal move has a score")),
                m.distance.map_or(String::new(), |d| format!(", {d}"))
            )
        };
        println!("{:>3}  {:>5}  {what}", label(m.pit as usize), seeds);
    }
    if a.best.is_empty() {
        println!("best: none (no seeds to move: the game is over)");
    } else {
        let best: Vec<String> = a
            .best
            .iter()
            .map(|&b| label(b as usize).to_string())
            .collect();
        println!("best: {}", best.join(", "));
    }
    if let (Some(steps), Some(end)) = (&a.pv, a.pv_end) {
        println!("principal variation (each score is for the side to move in that row's position, which alternates):");
        for (i, s) in steps.iter().enumerate() {
            println!(
                "{:>4}. {:<40} score {:>3}{}  plays {}{}",
                i + 1,
                Position(s.pits).to_string(),
                signed(s.score),
                s.distance.map_or(String::new(), |d| format!(", {d}")),
                // The line's rows alternate sides.
                if i % 2 == 0 { side } else { side.other() }.label(s.pit as usize),
                if s.captures > 0 {
                    format!(", captures {}", s.captures)
                } else {
                    String::new()
                }
            );
        }
        println!(
            "      {}",
            match end {
                PvEnd::GameOver => "game over: the side to move has no seeds",
                PvEnd::Repetition => "a position repeats: play goes on forever",
                PvEnd::Limit => "(limit reached)",
            }
        );
    }
}

/// The database of the folder `--db` under its rule set (see
/// [`super::DbArg::open`]).
pub fn open(db: &super::DbArg, verify: bool) -> Result<Database, Failure> {
    Ok(db.open()?.verify_on_load(verify))
}

pub fn run(a: QueryArgs) -> Result<(), Failure> {
    a.db.rules()?;
    let db = open(&a.db, a.verify)?;
    if a.verify && db.is_vu() {
        eprintln!(
            "awari: warning: {}: no manifest.json (a VU dataset or scores-only folder), so no \
             checksum to verify the tables against; lookups still refuse values outside -n..=n",
            a.db.path().display()
        );
    }
    if a.stdin {
        return run_stdin(&db, a.json, a.pv);
    }
    let board = a.pos.as_deref().map(Board::from_notation).transpose()?;
    let p = match &board {
        Some(b) => b.position(),
        None => parse_board(&a.pits)?,
    };
    let ans = match &board {
        Some(b) => b.answer(&db, a.pv),
        None => db.answer(&p, a.pv),
    }
    .map_err(|e| not_built(&db, &p, e))?;
    if a.json {
        let mut v = serde_json::to_value(&ans).expect("JSON");
        if let Some(b) = &board {
            v["pos"] = b.notation().into();
        }
        println!("{v}");
    } else {
        if let Some(b) = &board {
            println!("{}", b.notation());
        }
        print_text(&p, &ans, board.as_ref());
    }
    Ok(())
}

/// A board whose own layer is not built, said as a player needs it: which
/// layer it needs and which the folder holds.
pub fn not_built(db: &Database, p: &Position, e: awari_egdb::Error) -> Failure {
    let n = p.seeds();
    match e.cause() {
        Some(StoreError::MissingLayer { layer, dir, .. }) if *layer == n => {
            let held = db.layers();
            let holds = match held.last() {
                Some(top) => format!(
                    "holds layers {} (up to {top} seeds)",
                    super::verify::runs(&held)
                ),
                None => "holds no layer".into(),
            };
            Failure::usage(format!(
                "this board has {n} seeds: its score needs layer {n}, and {} {holds}; \
                 `awari build --max-seeds {n} --db {}` builds it (layer 48, the opening's, \
                 is the whole game)",
                dir.display(),
                dir.display()
            ))
        }
        _ => e.into(),
    }
}

/// One line of `--stdin` answered: printed, or counted as failed.
fn report(
    i: usize,
    result: Result<(Position, Answer), Failure>,
    json: bool,
    failed: &mut usize,
    damaged: &mut bool,
) {
    match result {
        Ok((_, ans)) if json => {
            println!("{}", serde_json::to_string(&ans).expect("JSON"))
        }
        Ok((p, ans)) => {
            let best: Vec<String> = ans
                .best
                .iter()
                .map(|&b| label(b as usize).to_string())
                .collect();
            println!(
                "{p}  seeds {} index {} score {} best {}",
                ans.seeds,
                index(&ans),
                signed(ans.score),
                if best.is_empty() {
                    "-".into()
                } else {
                    best.join(",")
                }
            );
        }
        Err(f) => {
            *failed += 1;
            *damaged |= f.code == 1;
            eprintln!("awari: line {}: {}", i + 1, f.message);
        }
    }
}

fn run_stdin(db: &Database, json: bool, pv: Option<usize>) -> Result<(), Failure> {
    let stdin = std::io::stdin();
    let mut failed = 0usize;
    let mut damaged = false;
    for (i, line) in stdin.lock().lines().enumerate() {
        let line = line.map_err(|e| Failure::usage(format!("reading standard input: {e}")))?;
        let line = line.split('#').next().unwrap_or_default();
        if line.contains('/') {
            // A position in the notation.
            let result = Board::from_notation(line)
                .map_err(Failure::from)
                .map(|b| b.position())
                .and_then(|p| db.answer(&p, pv).map(|r| (p, r)).map_err(Failure::from));
            report(i, result, json, &mut failed, &mut damaged);
            continue;
        }
        let words: Vec<String> = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect();
        if words.is_empty() {
            continue;
        }
        let result = parse_board(&words)
            .and_then(|p| db.answer(&p, pv).map(|r| (p, r)).map_err(Failure::from));
        report(i, result, json, &mut failed, &mut damaged);
    }
    if failed > 0 {
        return Err(Failure {
            message: format!("{failed} line(s) could not be answered"),
            code: if damaged { 1 } else { 2 },
        });
    }
    Ok(())
}

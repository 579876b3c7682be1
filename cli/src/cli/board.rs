//! `awari index` and `awari position`.

use super::Failure;
use awari_egdb::index;
use awari_egdb::rules::{Position, RulesError, MAX_SEEDS};
use clap::Args;

#[derive(Args)]
#[command(after_help = super::EXIT_CODES)]
pub struct IndexArgs {
    /// Twelve pit counts: the mover's pits A..F, then the opponent's a..f.
    #[arg(value_name = "PIT", num_args = 0.., allow_negative_numbers = true)]
    pits: Vec<String>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
#[command(after_help = super::EXIT_CODES)]
pub struct PositionArgs {
    /// Seeds on the board (the layer), 0..=48.
    #[arg(value_name = "SEEDS", allow_negative_numbers = true)]
    seeds: String,
    /// Goedel number within the layer.
    #[arg(value_name = "INDEX", allow_negative_numbers = true)]
    index: String,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Parses twelve pit counts into a board a probe answers: at most 48
/// seeds, not 47 (a board without a Goedel number, as the opening, is
/// answered from its moves), with a one-line reason on failure.
pub fn parse_board(words: &[String]) -> Result<Position, Failure> {
    let p = Position(parse_pits(words)?);
    if p.seeds() == 47 {
        return Err(awari_egdb::Error::from(awari_egdb::index::IndexError::Layer47).into());
    }
    Ok(p)
}

/// [`parse_board`] of a board with a Goedel number.
fn parse_indexable(words: &[String]) -> Result<Position, Failure> {
    let p = parse_board(words)?;
    Position::indexable(p.0).map_err(|e| Failure::usage(format!("{p}: {e}")))
}

/// The label of pit `i` of a board as the commands take it: the mover's
/// `A`..`F` (South's, in `play`), then the opponent's `a`..`f`.
pub fn label(i: usize) -> char {
    Position::label(i)
}

/// Parses twelve pit counts, each 0..=48, at most 48 in all (any board a
/// game can start from, the opening too), in the library's words.
pub fn parse_pits(words: &[String]) -> Result<[u8; 12], Failure> {
    let mut counts = Vec::with_capacity(words.len());
    for (i, w) in words.iter().enumerate() {
        let v: Result<i64, _> = w.trim().parse::<i64>().map_err(|_| {
            awari_egdb::Error::from(RulesError::NotASeedCount {
                pit: label(i),
                value: w.clone(),
            })
        });
        // A word that is no number is named only when the count is right.
        match v {
            Ok(v) => counts.push(v),
            Err(e) if words.len() == 12 => return Err(e.into()),
            Err(_) => counts.push(0),
        }
    }
    Ok(Position::from_counts(&counts)?.0)
}

#[derive(serde::Serialize)]
struct BoardJson {
    seeds: u32,
    index: u64,
    pits: [u8; 12],
}

fn print_board(p: &Position, g: u64, json: bool) {
    let n = p.seeds();
    if json {
        let j = BoardJson {
            seeds: n,
            index: g,
            pits: p.0,
        };
        println!("{}", serde_json::to_string(&j).expect("JSON"));
    } else {
        print!("{}", p.diagram());
        println!("seeds {n}  index {g}");
    }
}

pub fn index(a: IndexArgs) -> Result<(), Failure> {
    let p = parse_indexable(&a.pits)?;
    print_board(&p, index::rank(&p), a.json);
    Ok(())
}

pub fn position(a: PositionArgs) -> Result<(), Failure> {
    let n: u32 = a
        .seeds
        .parse()
        .ok()
        .filter(|&n| n <= MAX_SEEDS)
        .ok_or_else(|| {
            Failure::usage(format!(
                "SEEDS '{}' is not a layer (a whole number from 0 to {MAX_SEEDS})",
                a.seeds
            ))
        })?;
    let g: u64 = a.index.parse().map_err(|_| {
        Failure::usage(format!(
            "INDEX '{}' is not a Goedel number (a whole number from 0)",
            a.index
        ))
    })?;
    if n == 47 {
        return Err(awari_egdb::Error::from(awari_egdb::index::IndexError::Layer47).into());
    }
    let p = index::unrank(n, g)?;
    print_board(&p, g, a.json);
    Ok(())
}

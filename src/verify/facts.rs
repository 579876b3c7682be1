//! Recorded move facts: reading them from a CSV file and checking each
//! against a database.

use super::csv;
use crate::error::{AtPath, Result};
use crate::index::rank;
use crate::probe::Database;
use crate::rules::Position;
use crate::store::StoreError;
use serde::Serialize;
use std::path::Path;

/// A recorded move fact: playing `mv` in `pits` loses `loss` points against
/// the best move (one row of `data/vu-move-facts.csv`).
#[derive(Clone, Debug, Serialize)]
pub struct Fact {
    /// Its id in the file.
    pub id: String,
    /// The board.
    pub pits: [u8; 12],
    /// Seeds as recorded.
    pub seeds: u32,
    /// Goedel index as recorded.
    pub index: u64,
    /// The pit played.
    pub mv: u8,
    /// Points lost against the best move.
    pub loss: i32,
}

/// Reads a move-facts CSV (columns by header name: `fact_id`, `seeds`,
/// `p0`..`p11`, `goedel_index`, `move`, `loss_vs_best`).
pub fn read_facts(path: &Path) -> Result<Vec<Fact>> {
    let text = std::fs::read_to_string(path).at(path)?;
    let bad = csv::error(path);
    let mut lines = csv::lines(&text);
    let (_, first) = lines.next().ok_or_else(|| bad(1, "empty file".into()))?;
    let header = csv::fields(first);
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| bad(1, format!("no column '{name}'")))
    };
    let (id, seeds, gi, mv, loss) = (
        col("fact_id")?,
        col("seeds")?,
        col("goedel_index")?,
        col("move")?,
        col("loss_vs_best")?,
    );
    let pit_cols: Vec<usize> = (0..12)
        .map(|k| col(&format!("p{k}")))
        .collect::<Result<_, _>>()?;
    let mut facts = Vec::new();
    for (lineno, f) in csv::records(lines, false) {
        let get = |c: usize| -> Result<&str> {
            f.get(c)
                .copied()
                .ok_or_else(|| bad(lineno, "too few columns".into()))
        };
        let num = |c: usize| -> Result<i64> {
            let s = get(c)?;
            s.parse()
                .map_err(|_| bad(lineno, format!("'{s}' is not a number")))
        };
        let mut pits = [0u8; 12];
        for (k, &c) in pit_cols.iter().enumerate() {
            let v = num(c)?;
            if !(0..=48).contains(&v) {
                return Err(bad(lineno, format!("pit {k} holds {v} seeds")));
            }
            pits[k] = v as u8;
        }
        let mvv = num(mv)?;
        if !(0..6).contains(&mvv) {
            return Err(bad(lineno, format!("move {mvv} is not a pit 0..5")));
        }
        facts.push(Fact {
            id: get(id)?.to_string(),
            pits,
            seeds: num(seeds)? as u32,
            index: num(gi)? as u64,
            mv: mvv as u8,
            loss: num(loss)? as i32,
        });
    }
    Ok(facts)
}

/// The outcome of checking one fact.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum FactOutcome {
    /// Our tables give the recorded loss.
    Agrees,
    /// They do not.
    Disagrees {
        /// Why.
        reason: String,
    },
    /// A layer the fact needs is not in the folder.
    Skipped {
        /// The missing layer.
        layer: u32,
    },
}

/// Checks one fact (of the VU database: awari only) against a database.
pub fn check_fact(db: &Database, f: &Fact) -> Result<FactOutcome> {
    let dir = db.dir().unwrap_or(Path::new("(memory)"));
    super::awari_only(dir, db.rules(), "verify --facts")?;
    let p = Position(f.pits);
    let n = p.seeds();
    if n != f.seeds {
        return Ok(FactOutcome::Disagrees {
            reason: format!("board holds {n} seeds, the fact says {}", f.seeds),
        });
    }
    if !p.is_indexable() {
        return Ok(FactOutcome::Disagrees {
            reason: "board has no Goedel number (opponent side full)".into(),
        });
    }
    if rank(&p) != f.index {
        return Ok(FactOutcome::Disagrees {
            reason: format!("Goedel index is {}, the fact says {}", rank(&p), f.index),
        });
    }
    let moves = match db.moves(&p) {
        Ok(m) => m,
        Err(e) => match e.cause() {
            Some(&StoreError::MissingLayer { layer, .. }) => {
                return Ok(FactOutcome::Skipped { layer })
            }
            _ => return Err(e),
        },
    };
    let best = moves.iter().filter_map(|m| m.score).max();
    let played = moves[f.mv as usize].score;
    match (best, played) {
        (Some(b), Some(s)) if (b as i32 - s as i32) == f.loss => Ok(FactOutcome::Agrees),
        (Some(b), Some(s)) => Ok(FactOutcome::Disagrees {
            reason: format!(
                "move {} loses {} against the best move, the fact says {}",
                f.mv,
                b as i32 - s as i32,
                f.loss
            ),
        }),
        _ => Ok(FactOutcome::Disagrees {
            reason: format!("move {} is not legal here", f.mv),
        }),
    }
}

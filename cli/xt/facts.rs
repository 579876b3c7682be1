//! The oracle's (position, move) facts from the VU database
//! (`data/vu-move-facts.csv`) and a checker that
//! tests one fact against any score tables.

use awari_egdb::index::rank;
use awari_egdb::rules::{Position, AWARI};

/// One row of `vu-move-facts.csv`.
#[derive(Clone, Debug)]
pub struct Fact {
    /// Seeds on the board (the layer).
    pub seeds: u32,
    /// The position, mover's pits 0..5 first.
    pub pits: [u8; 12],
    /// The position's index in `scores.<seeds>`.
    pub goedel_index: u64,
    /// The pit played, 0..5.
    pub mv: u8,
    /// Best legal move's value minus the played move's value.
    pub loss_vs_best: i32,
    /// `move_is_optimal`.
    pub optimal: bool,
    /// `fact_id`.
    pub id: u32,
}

/// Path of the facts file.
pub fn path() -> String {
    format!(
        "{}/data/vu-move-facts.csv",
        concat!(env!("CARGO_MANIFEST_DIR"), "/..")
    )
}

/// Reads every fact, panicking on a malformed file.
pub fn load() -> Vec<Fact> {
    let path = path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("empty facts file").split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h.trim() == name)
            .unwrap_or_else(|| panic!("{path}: no column {name}"))
    };
    let c_id = col("fact_id");
    let c_seeds = col("seeds");
    let c_pits: Vec<usize> = (0..12).map(|i| col(&format!("p{i}"))).collect();
    let c_goedel = col("goedel_index");
    let c_move = col("move");
    let c_opt = col("move_is_optimal");
    let c_loss = col("loss_vs_best");

    let mut out = Vec::new();
    for (i, line) in lines.enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(
            f.len(),
            header.len(),
            "{path} line {}: {} fields, header has {}",
            i + 2,
            f.len(),
            header.len()
        );
        let num = |c: usize| -> i64 {
            f[c].trim()
                .parse()
                .unwrap_or_else(|e| panic!("{path} line {}: field {:?}: {e}", i + 2, f[c]))
        };
        let mut pits = [0u8; 12];
        for (k, &c) in c_pits.iter().enumerate() {
            pits[k] = u8::try_from(num(c)).expect("pit count out of range");
        }
        let opt = num(c_opt);
        assert!(
            opt == 0 || opt == 1,
            "{path} line {}: move_is_optimal {opt}",
            i + 2
        );
        out.push(Fact {
            seeds: num(c_seeds) as u32,
            pits,
            goedel_index: num(c_goedel) as u64,
            mv: u8::try_from(num(c_move)).expect("move out of range"),
            loss_vs_best: num(c_loss) as i32,
            optimal: opt == 1,
            id: num(c_id) as u32,
        });
    }
    out
}

/// Checks one fact against `score(layer, goedel index)`: the board's seed
/// count and Goedel number, that the played move is legal, that its loss
/// against the best legal move is `loss_vs_best`, and that the optimal flag is
/// consistent (set exactly when the loss is 0). A move's value is
/// `captured - score(child)`; a child whose mover has no seeds scores
/// `-(its seeds)` without a lookup.
pub fn check(f: &Fact, score: &dyn Fn(u32, u64) -> i8) -> Result<(), String> {
    let p = Position(f.pits);
    let who = format!("fact {} [{p}]", f.id);
    if p.seeds() != f.seeds {
        return Err(format!(
            "{who}: board holds {} seeds, fact says {}",
            p.seeds(),
            f.seeds
        ));
    }
    if !p.is_indexable() {
        return Err(format!("{who}: board has no Goedel number"));
    }
    let g = rank(&p);
    if g != f.goedel_index {
        return Err(format!(
            "{who}: Goedel index {g}, fact says {}",
            f.goedel_index
        ));
    }
    if f.optimal != (f.loss_vs_best == 0) {
        return Err(format!(
            "{who}: optimal flag {} inconsistent with loss {}",
            f.optimal, f.loss_vs_best
        ));
    }
    let moves = p.moves(&AWARI);
    let value = |m: &awari_egdb::rules::Move| -> i32 {
        let ch = m.child;
        let cs = if ch.mover_seeds() == 0 {
            -(ch.seeds() as i32)
        } else {
            score(ch.seeds(), rank(&ch)) as i32
        };
        m.captured as i32 - cs
    };
    let played = match moves.from_pit(f.mv as usize) {
        Some(m) if m.legal => value(m),
        Some(_) => return Err(format!("{who}: move {} is illegal", f.mv)),
        None => return Err(format!("{who}: pit {} is empty or not the mover's", f.mv)),
    };
    let best = moves
        .legal()
        .map(value)
        .max()
        .expect("a legal move exists since the played one is legal");
    let loss = best - played;
    if loss != f.loss_vs_best {
        let vals: Vec<String> = moves
            .legal()
            .map(|m| format!("pit {}: {}", m.pit, value(m)))
            .collect();
        return Err(format!(
            "{who}: move {} loses {loss} against the best (move values {}), fact says {}",
            f.mv,
            vals.join(", "),
            f.loss_vs_best
        ));
    }
    Ok(())
}

//! A computer player's settings as `awari play` and `awari match` take
//! them, and the lines that show its search.

use super::Failure;
use awari_egdb::game::{Choice, Side};
use awari_egdb::probe::Database;
use awari_egdb::rules::Rules;
use awari_egdb::search::{Outcome, TableReach, TimeControl, MAX_DEPTH};
use awari_egdb::store::StoreError;
use std::time::Duration;

/// A player's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// `None`: no clock (the depth bounds the search).
    pub clock: Option<TimeControl>,
    pub depth: u32,
    pub tables: TableReach,
    pub threads: usize,
    pub hash_mib: usize,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            clock: Some(TimeControl {
                base: Duration::from_secs(30 * 60),
                increment: Duration::ZERO,
            }),
            depth: MAX_DEPTH,
            tables: TableReach::All,
            threads: 1,
            hash_mib: 64,
        }
    }
}

/// `--clock`: a time control, or `none`.
pub fn parse_clock(flag: &str, s: &str) -> Result<Option<TimeControl>, Failure> {
    if s == "none" {
        return Ok(None);
    }
    s.parse()
        .map(Some)
        .map_err(|e| Failure::usage(format!("{flag} '{s}': {e}, or none")))
}

/// `--tables`: all, none, or N (layers 0..=N).
pub fn parse_tables(flag: &str, s: &str) -> Result<TableReach, Failure> {
    match s {
        "all" => Ok(TableReach::All),
        "none" => Ok(TableReach::None),
        n => n
            .parse::<u32>()
            .ok()
            .filter(|&n| n <= 48)
            .map(TableReach::UpTo)
            .ok_or_else(|| {
                Failure::usage(format!(
                    "{flag} '{s}': give all, none, or N from 0 to 48 (layers 0..=N)"
                ))
            }),
    }
}

/// The folder's tables under its rule set ([`super::DbArg::open`]), or
/// none when the folder is missing or empty (then `note` says who
/// searches without them).
pub fn open_tables(db: &super::DbArg, rules: &Rules, note: &str) -> Result<Database, Failure> {
    match Database::open(db.path()) {
        Ok(found) => Ok(match db.rules_asked() {
            Some(r) => found.with_rules(&r)?,
            None => found,
        }),
        Err(e)
            if matches!(
                e.cause(),
                Some(StoreError::NoSuchFolder(_) | StoreError::NoTables(_))
            ) =>
        {
            eprintln!("awari: note: {e}; {note}");
            Ok(Database::from_tables_of::<Vec<u8>>(rules, Vec::new())?)
        }
        Err(e) => Err(e.into()),
    }
}

/// `--hash`: at least 1 MiB, at most the machine's memory (as
/// `build --memory-limit`).
pub fn check_hash(flag: &str, mib: usize) -> Result<usize, Failure> {
    if mib == 0 {
        return Err(Failure::usage(format!(
            "{flag} 0: give MiB of transposition table, at least 1"
        )));
    }
    if let Some(total) = awari_egdb::mem::total_memory() {
        if mib as u64 > total >> 20 {
            return Err(Failure::usage(format!(
                "{flag} {mib}: {mib} MiB of transposition table is more than this machine has \
                 ({} MiB)",
                total >> 20
            )));
        }
    }
    Ok(mib)
}

/// `--depth`: 1..=100.
pub fn check_depth(flag: &str, d: u32) -> Result<u32, Failure> {
    if (1..=MAX_DEPTH).contains(&d) {
        Ok(d)
    } else {
        Err(Failure::usage(format!(
            "{flag} {d}: give a depth from 1 to {MAX_DEPTH} plies"
        )))
    }
}

/// `--threads` of a search: 1 up to 8 per core.
pub fn check_threads(flag: &str, t: usize) -> Result<usize, Failure> {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    if t == 0 || t > 8 * cores {
        return Err(Failure::usage(format!(
            "{flag} {t}: give 1 to {} threads (this machine has {cores} cores)",
            8 * cores
        )));
    }
    Ok(t)
}

impl Spec {
    /// A player of `awari match`: comma-separated `key=value` settings,
    /// e.g. `clock=1m,tables=24` or `depth=6,clock=none`.
    pub fn parse(flag: &str, s: &str) -> Result<Spec, Failure> {
        let mut spec = Spec::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((k, v)) = part.split_once('=') else {
                return Err(Failure::usage(format!(
                    "{flag} '{s}': '{part}' is not key=value (keys: clock, depth, tables, threads, hash)"
                )));
            };
            let what = format!("{flag} {k}=");
            let (k, v) = (k.trim(), v.trim());
            let number = |unit: &str| {
                v.parse::<usize>()
                    .map_err(|_| Failure::usage(format!("{what}'{v}': give a number of {unit}")))
            };
            match k {
                "clock" => spec.clock = parse_clock(&what, v)?,
                "depth" => {
                    let d = u32::try_from(number("plies")?).unwrap_or(u32::MAX);
                    spec.depth = check_depth(&what, d)?
                }
                "tables" => spec.tables = parse_tables(&what, v)?,
                "threads" => spec.threads = check_threads(&what, number("threads")?)?,
                "hash" => spec.hash_mib = check_hash(&what, number("MiB")?)?,
                other => {
                    return Err(Failure::usage(format!(
                        "{flag} '{s}': unknown setting '{other}' (keys: clock, depth, tables, threads, hash)"
                    )))
                }
            }
        }
        if spec.clock.is_none() && spec.depth == MAX_DEPTH {
            return Err(Failure::usage(format!(
                "{flag} '{s}': without a clock give a depth (depth=N), or the search has no bound"
            )));
        }
        Ok(spec)
    }

    /// The settings in the words `parse` takes.
    pub fn describe(&self) -> String {
        let mut parts = vec![match &self.clock {
            Some(c) => format!("clock={c}"),
            None => "clock=none".into(),
        }];
        if self.depth != MAX_DEPTH {
            parts.push(format!("depth={}", self.depth));
        }
        parts.push(match self.tables {
            TableReach::All => "tables=all".into(),
            TableReach::None => "tables=none".into(),
            TableReach::UpTo(n) => format!("tables={n}"),
        });
        if self.threads != 1 {
            parts.push(format!("threads={}", self.threads));
        }
        parts.join(",")
    }
}

/// A duration as m:ss.s (tenths cut off, not rounded).
pub fn clock_time(d: Duration) -> String {
    let tenths = d.as_millis() / 100;
    format!("{}:{:02}.{}", tenths / 600, tenths % 600 / 10, tenths % 10)
}

/// A count with a unit prefix (1.23M).
pub fn count(n: f64) -> String {
    if n >= 1e9 {
        format!("{:.2}G", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.2}M", n / 1e6)
    } else if n >= 1e4 {
        format!("{:.1}k", n / 1e3)
    } else {
        format!("{n:.0}")
    }
}

/// One iteration of a search, in words: depth, value, nodes, speed, time
/// and line.
pub fn iteration_line(side: Side, o: &Outcome) -> String {
    let line: Vec<String> = awari_egdb::game::line_labels(side, &o.pv)
        .iter()
        .map(char::to_string)
        .collect();
    format!(
        "depth {} value {:+}{} nodes {} nps {} time {:.2} line {}",
        o.depth,
        o.value,
        if o.exact { " exact" } else { "" },
        o.nodes,
        count(o.nodes_per_second()),
        o.elapsed.as_secs_f64(),
        line.join(" ")
    )
}

/// A computer's move in words.
pub fn move_line(side: Side, c: &Choice, took: Duration, left: Option<Duration>) -> String {
    let left = left.map_or(String::new(), |l| format!(", clock {} left", clock_time(l)));
    let line: Vec<String> = c.line.iter().map(char::to_string).collect();
    let o = &c.search;
    if o.depth == 0 && c.exact() {
        return format!(
            "{} plays {} (worth {:+}, exact: the tables{left})",
            side.name(),
            c.label,
            c.worth()
        );
    }
    format!(
        "{} plays {} (worth {}{:+}{}; searched {} plies, {} nodes in {:.2} s, {} nodes/s{left}; line {})",
        side.name(),
        c.label,
        if c.exact() { "" } else { "about " },
        c.worth(),
        if c.exact() { ", exact" } else { ", not exact" },
        o.depth,
        count(o.nodes as f64),
        took.as_secs_f64(),
        count(o.nodes_per_second()),
        line.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_times() {
        let t = |ms| clock_time(Duration::from_millis(ms));
        assert_eq!(t(1_799_999), "29:59.9");
        assert_eq!(t(1_800_000), "30:00.0");
        assert_eq!(t(61_050), "1:01.0");
        assert_eq!(t(0), "0:00.0");
    }

    #[test]
    fn specs_parse_and_refuse() {
        let s = Spec::parse("--a", "clock=1m,tables=24").unwrap();
        assert_eq!(s.tables, TableReach::UpTo(24));
        assert_eq!(s.describe(), "clock=1m,tables=24");
        let s = Spec::parse("--b", "depth=6, clock=none, tables=none").unwrap();
        assert_eq!((s.depth, s.clock, s.tables), (6, None, TableReach::None));
        for bad in [
            "clock=none",
            "depth=0",
            "depth=x",
            "tables=49",
            "speed=3",
            "clock",
            "clock=5q",
        ] {
            assert!(Spec::parse("--a", bad).is_err(), "{bad}");
        }
    }
}

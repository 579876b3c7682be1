//! Time controls and a side's clock: how long a move may take.
//!
//! A [`TimeControl`] is a time per side per game and an increment added
//! after each move (`30m`, `5m+2s`, `90s`, `1h30m`, `500ms+100ms`). A
//! [`Clock`] holds a side's time left and, for each move, hands out a
//! [`Budget`]: a *soft* time after which the search starts no deeper
//! iteration, and a *hard* time at which it stops in the middle of one. The
//! hard time never exceeds a quarter of the time left (less a margin for
//! the work around the search), so a side never runs out of time however
//! many moves the game lasts: each move leaves at least three quarters of
//! what was left.

use crate::error::{Error, Result};
use crate::search::SearchError;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// A time per side per game plus an increment per move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeControl {
    /// Time per side for the whole game.
    pub base: Duration,
    /// Time added to a side's clock after each of its moves.
    pub increment: Duration,
}

/// Moves a side is assumed still to have to play, for dividing its time.
/// Positions in built layers are played at once, so with tables the real
/// number of searched moves is smaller and the time is spent earlier.
const MOVES_TO_GO: u32 = 25;

fn parse_duration(s: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut rest = s.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return None;
        }
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit] {
            "h" => 3600.0,
            "m" | "min" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        rest = &rest[unit..];
        let secs = value * scale;
        if !secs.is_finite() || secs > 1e7 {
            return None;
        }
        total += Duration::from_secs_f64(secs);
    }
    Some(total)
}

impl FromStr for TimeControl {
    type Err = Error;
    fn from_str(s: &str) -> Result<TimeControl> {
        let bad = || SearchError::BadClock(s.to_string());
        let (base, inc) = match s.split_once('+') {
            Some((b, i)) => (b, Some(i)),
            None => (s, None),
        };
        let base = parse_duration(base).ok_or_else(bad)?;
        let increment = match inc {
            Some(i) => parse_duration(i).ok_or_else(bad)?,
            None => Duration::ZERO,
        };
        if base.is_zero() {
            return Err(bad().into());
        }
        Ok(TimeControl { base, increment })
    }
}

fn show(d: Duration) -> String {
    let ms = d.as_millis();
    if ms % 60_000 == 0 {
        format!("{}m", ms / 60_000)
    } else if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", show(self.base))?;
        if !self.increment.is_zero() {
            write!(f, "+{}", show(self.increment))?;
        }
        Ok(())
    }
}

/// How long one move may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// After this, no new iteration starts.
    pub soft: Duration,
    /// At this, the search stops.
    pub hard: Duration,
}

/// A side's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    control: TimeControl,
    left: Duration,
}

impl Clock {
    /// A full clock.
    pub fn new(control: TimeControl) -> Clock {
        Clock {
            control,
            left: control.base,
        }
    }

    /// Time left.
    pub fn left(&self) -> Duration {
        self.left
    }

    /// The budget of the next move; `margin` is kept back for the work
    /// around the search (reading input, printing, the tables' first
    /// reads).
    pub fn budget(&self, margin: Duration) -> Budget {
        let usable = self.left.saturating_sub(margin);
        let share = usable / MOVES_TO_GO + self.control.increment * 3 / 4;
        let hard = (usable / 4).max(Duration::from_millis(1));
        Budget {
            soft: share.min(hard),
            hard: (share * 3).min(hard),
        }
    }

    /// Charges a move that took `took`, then adds the increment (when time
    /// was left). Returns false when the side ran out of time.
    pub fn charge(&mut self, took: Duration) -> bool {
        if took >= self.left {
            self.left = Duration::ZERO;
            return false;
        }
        self.left = self.left - took + self.control.increment;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_time_controls() {
        let tc = |s: &str| s.parse::<TimeControl>();
        let ok = |s: &str, b: u64, i: u64| {
            assert_eq!(
                tc(s).unwrap(),
                TimeControl {
                    base: Duration::from_millis(b),
                    increment: Duration::from_millis(i)
                },
                "{s}"
            )
        };
        ok("30m", 1_800_000, 0);
        ok("5m+2s", 300_000, 2000);
        ok("90s", 90_000, 0);
        ok("1h30m", 5_400_000, 0);
        ok("1.5s+100ms", 1500, 100);
        for bad in [
            "", "30", "m", "5x", "5m+", "+2s", "0s", "-5m", "5m+2s+1s", "1e9h",
        ] {
            assert!(
                matches!(tc(bad), Err(e) if matches!(e.cause(), Some(SearchError::BadClock(_)))),
                "{bad}"
            );
        }
        assert_eq!(tc("5m+2s").unwrap().to_string(), "5m+2s");
    }

    #[test]
    fn never_runs_out_whatever_the_number_of_moves() {
        // The worst case: every move takes its whole hard time.
        let mut c = Clock::new("1m".parse().unwrap());
        while c.left() > Duration::from_millis(8) {
            let b = c.budget(Duration::from_millis(2));
            assert!(b.soft <= b.hard && b.hard * 4 <= c.left());
            assert!(c.charge(b.hard));
        }
        let mut c = Clock::new("10s+1s".parse().unwrap());
        for _ in 0..1000 {
            let b = c.budget(Duration::from_millis(5));
            assert!(c.charge(b.hard));
        }
        assert!(c.left() >= Duration::from_secs(1));
    }
}

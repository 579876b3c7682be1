//! The game record: writing a game as text ([`Game::record`]) and reading
//! it back, replaying its moves ([`Game::from_record`]). The format is in
//! the [module's documentation](super).

use super::{Board, Game, GameError};
use crate::error::{Error, Result};
use crate::rules::{Rules, PITS};

impl Game {
    /// The game record (see the module's documentation).
    pub fn record(&self) -> String {
        let s = self.start();
        let pits: Vec<String> = s.pits.iter().map(|p| p.to_string()).collect();
        // North to move first: the start in the notation, which says so.
        let start = match s.to_move {
            super::Side::South => format!(
                "{} captured {} {}",
                pits.join(" "),
                s.captured[0],
                s.captured[1]
            ),
            super::Side::North => s.notation(),
        };
        let mut out = format!(
            "# awari game record: the rule set, the start (pits A..F, then a..f, South moving first; or a position's notation), then one move per line\nrules {}\nstart {start}\n",
            self.rules.name,
        );
        for (l, note) in self.labels.iter().zip(&self.notes) {
            out.push(*l);
            if !note.is_empty() {
                out.push_str("  # ");
                out.push_str(note);
            }
            out.push('\n');
        }
        if let Some(r) = self.result() {
            out.push_str(&format!("# end: {r}\n"));
        }
        out
    }

    /// Reads a game record and replays its moves.
    pub fn from_record(text: &str) -> Result<Game> {
        let mut game: Option<Game> = None;
        let mut rules: Option<Rules> = None;
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let bad = |e: Error| -> Error {
                GameError::Record {
                    line: i + 1,
                    source: Box::new(e),
                }
                .into()
            };
            match &mut game {
                None if rules.is_none() && line.split_whitespace().next() == Some("rules") => {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    if words.len() != 2 {
                        return Err(bad(GameError::RecordSyntax(
                            "a 'rules' line names one rule set, e.g. 'rules awari' or 'rules olympiad'",
                        ).into()));
                    }
                    rules = Some(Rules::by_name(words[1]).map_err(bad)?);
                }
                None if line.split_whitespace().count() == 2 && line.starts_with("start") => {
                    let start = Board::from_notation(line["start".len()..].trim()).map_err(bad)?;
                    game = Some(Game::new(start, rules.unwrap_or_default()));
                }
                None => {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    if words.first() != Some(&"start") || !(words.len() == 13 || words.len() == 16)
                    {
                        return Err(bad(GameError::RecordSyntax(
                            "the first line must be 'start' and 12 pit counts, optionally \
                             followed by 'captured S N', or 'start' and a position's notation",
                        )
                        .into()));
                    }
                    let mut pits = [0u8; PITS];
                    for (k, w) in words[1..13].iter().enumerate() {
                        pits[k] = w.parse().ok().filter(|&v: &u8| v <= 48).ok_or_else(|| {
                            bad(GameError::RecordWord {
                                word: w.to_string(),
                                expected: "a pit count",
                            }
                            .into())
                        })?;
                    }
                    let captured = if words.len() == 16 {
                        if words[13] != "captured" {
                            return Err(bad(GameError::RecordWord {
                                word: words[13].to_string(),
                                expected: "'captured'",
                            }
                            .into()));
                        }
                        let num = |w: &str| {
                            w.parse::<u32>().map_err(|_| {
                                bad(GameError::RecordWord {
                                    word: w.to_string(),
                                    expected: "a number of seeds",
                                }
                                .into())
                            })
                        };
                        Some([num(words[14])?, num(words[15])?])
                    } else {
                        None
                    };
                    let start = Board::new(pits, captured).map_err(bad)?;
                    game = Some(Game::new(start, rules.unwrap_or_default()));
                }
                Some(g) => {
                    g.play(line).map_err(bad)?;
                }
            }
        }
        game.ok_or_else(|| {
            GameError::Record {
                line: 1,
                source: Box::new(GameError::RecordSyntax("no 'start' line").into()),
            }
            .into()
        })
    }
}

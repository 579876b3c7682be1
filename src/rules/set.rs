//! Rule sets as data: one struct of named fields ([`Rules`]) and its named
//! presets: [`AWARI`] (the VU database's rules, the default), [`ABAPA`]
//! (international play, and the rules of the C++ solver of jh85/smallgames
//! and of OpenSpiel's `oware`), [`OLYMPIAD`] (the Computer Olympiad's awari
//! tournaments) and [`AWALE`] (the Awale program, Philoo).
//!
//! | field | awari (VU) | abapa | olympiad | awale |
//! |---|---|---|---|---|
//! | `grand_slam` | illegal unless every move leaves the opponent no seeds | legal; the sowing stands and nothing is captured | legal; captures as usual, and the mover takes the rest | never legal; a mover whose every move is one cannot play, and the opponent takes the rest |
//! | `feeding` | subsumed: a move that leaves the opponent no seeds is illegal unless every move does | mandatory where a move reaches the opponent; if none does, the mover takes the rest | as abapa | free; a move that leaves an empty opponent empty ends the game, the mover taking the rest |
//! | `no_seeds` | the other side takes the seeds left | the same | the same | the same |
//! | `win` / `draw` (play only) | 25 / 24 each | 25 / 24 each | 25 / 24 each | none: the most seeds at the end |
//! | `repetition` (play only) | the first repetition | the third occurrence | the first repetition | the first repetition |
//! | `no_capture_limit` (play only) | none | 500 plies | none | none |
//! | `seeds_left` (play only) | split evenly | split evenly | split evenly | not captured |
//!
//! Only the first three fields change a table; the others tell `awari play`
//! when a game ends. Whatever a rule set does with the seeds left when play
//! would go on forever (split evenly, or nobody's), the difference of the
//! two sides' captures gains nothing from them: that is what the score
//! tables assume (see [`crate::rules`]).
//!
//! # Why the rule sets give tables of the same shape
//!
//! A move always empties the pit it is sown from (laps skip it), so under
//! every rule set the side that has just moved has an empty pit, and the
//! Goedel index ([`crate::index`]) numbers the same positions. The score,
//! the envelope and "pinned" keep their meaning: a position with no legal
//! move ends the game ([`Position::final_score`](super::Position::final_score)).
//!
//! Under abapa a grand slam is a move that captures nothing and stays in its
//! layer, so it is an internal move of the solvers (its child is found by
//! [`Position::for_each_predecessor`](super::Position::for_each_predecessor)
//! like any other sowing); under awari and olympiad it leaves the layer, a
//! move worth every seed left (or, under awari, is illegal); under awale it
//! is illegal.
//!
//! # What the texts pin
//!
//! The olympiad and awale presets follow the one-line texts of their rules.
//! Awale's text does not say what happens when every move a player has is
//! a grand slam; this crate reads it as "cannot play" (the game ends, the
//! opponent takes the rest), which the `grand_slam` field says.

use crate::error::Result;
use crate::rules::RulesError;
use std::fmt;

/// What a capture that would take every seed the opponent has does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GrandSlam {
    /// Illegal unless every move leaves the opponent without seeds; then it
    /// captures as usual (awari).
    IllegalUnlessForced,
    /// Legal; the sowing stands and nothing is captured (abapa).
    NoCapture,
    /// Legal, and it captures as usual: the opponent, left without seeds,
    /// cannot move, and the mover takes the seeds left (olympiad).
    Captures,
    /// Never legal; a mover whose every move is a grand slam cannot play:
    /// the game ends and the opponent takes the seeds left (awale).
    Never,
}

/// What the mover owes an opponent without seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Feeding {
    /// Part of the one awari rule: a move that leaves the opponent no seeds
    /// is illegal unless every move does; then every move is legal.
    Subsumed,
    /// A move that gives the opponent seeds is mandatory where one exists;
    /// if none does, the game ends and each side takes the seeds of its
    /// own row (abapa, olympiad): the mover takes every seed left.
    Mandatory,
    /// Not required: any move is legal, and one that leaves an empty
    /// opponent empty ends the game, the mover taking the seeds left
    /// (awale).
    Free,
}

/// What becomes of the seeds left when play ends by repetition or by the
/// limit of plies without a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SeedsLeft {
    /// Split evenly between the sides.
    SplitEvenly,
    /// Nobody's: neither side captures them (awale).
    NotCaptured,
}

/// What happens when the side to move has no seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NoSeeds {
    /// The game ends; the other side takes the seeds left (its own row).
    OtherSideTakesTheRest,
}

/// A rule set: what the tables are built under (the first three fields)
/// and when `awari play` ends a game (the others).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    /// The preset's name, as `--rules` takes it.
    pub name: &'static str,
    /// What a capture of every seed the opponent has does.
    pub grand_slam: GrandSlam,
    /// What the mover owes an opponent without seeds.
    pub feeding: Feeding,
    /// What happens when the side to move has no seeds.
    pub no_seeds: NoSeeds,
    /// Seeds captured that win the game at once; `None`: play goes on, the
    /// most seeds at the end winning.
    pub win: Option<u8>,
    /// Seeds captured by each side that make a draw at once; `None`: no
    /// such end.
    pub draw: Option<u8>,
    /// The occurrence of a position (board and side to move) that ends the
    /// game, the seeds left split evenly: 2 is the first repetition.
    pub repetition: u8,
    /// Plies without a capture that end the game, the seeds left split
    /// evenly; `None`: no such limit.
    pub no_capture_limit: Option<u32>,
    /// What becomes of the seeds left when play ends by repetition or by
    /// the limit of plies without a capture.
    pub seeds_left: SeedsLeft,
}

/// The awari rule set of the VU database (Romein & Bal), the default.
pub const AWARI: Rules = Rules {
    name: "awari",
    grand_slam: GrandSlam::IllegalUnlessForced,
    feeding: Feeding::Subsumed,
    no_seeds: NoSeeds::OtherSideTakesTheRest,
    win: Some(25),
    draw: Some(24),
    repetition: 2,
    no_capture_limit: None,
    seeds_left: SeedsLeft::SplitEvenly,
};

/// The abapa rule set of international play.
pub const ABAPA: Rules = Rules {
    name: "abapa",
    grand_slam: GrandSlam::NoCapture,
    feeding: Feeding::Mandatory,
    no_seeds: NoSeeds::OtherSideTakesTheRest,
    win: Some(25),
    draw: Some(24),
    repetition: 3,
    no_capture_limit: Some(500),
    seeds_left: SeedsLeft::SplitEvenly,
};

/// The Computer Olympiad's awari tournament rules: a grand slam is legal
/// and captures; feeding an empty opponent is mandatory where possible
/// (else the mover takes the rest); 25 wins, 24 each draws, the first
/// repetition splits the rest evenly.
pub const OLYMPIAD: Rules = Rules {
    name: "olympiad",
    grand_slam: GrandSlam::Captures,
    feeding: Feeding::Mandatory,
    no_seeds: NoSeeds::OtherSideTakesTheRest,
    win: Some(25),
    draw: Some(24),
    repetition: 2,
    no_capture_limit: None,
    seeds_left: SeedsLeft::SplitEvenly,
};

/// The reading of the Awale program (Philoo): a grand slam is never
/// legal; no duty to feed; the first repetition ends the game with the
/// rest not captured; the most seeds win.
pub const AWALE: Rules = Rules {
    name: "awale",
    grand_slam: GrandSlam::Never,
    feeding: Feeding::Free,
    no_seeds: NoSeeds::OtherSideTakesTheRest,
    win: None,
    draw: None,
    repetition: 2,
    no_capture_limit: None,
    seeds_left: SeedsLeft::NotCaptured,
};

/// Every preset, the default first.
pub const PRESETS: [Rules; 4] = [AWARI, ABAPA, OLYMPIAD, AWALE];

impl Default for Rules {
    fn default() -> Self {
        AWARI
    }
}

/// One row of the rule table: a field's name, its meaning and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// The field's name in the struct and in JSON.
    pub name: &'static str,
    /// What the field says, in one line.
    pub meaning: &'static str,
    /// Whether it changes the tables (else it only tells play when a game
    /// ends).
    pub tables: bool,
    /// Its value, as JSON and manifests write it.
    pub value: String,
    /// Its value in words.
    pub words: String,
}

impl Rules {
    /// The preset called `name`.
    pub fn by_name(name: &str) -> Result<Rules> {
        PRESETS
            .iter()
            .find(|r| r.name == name)
            .copied()
            .ok_or_else(|| {
                RulesError::UnknownRules {
                    name: name.to_string(),
                    known: known_names(),
                }
                .into()
            })
    }

    /// The tag manifests and compressed headers carry: `awari-vu2002` for
    /// awari (what folders written before there were rule sets carry), the
    /// name otherwise.
    pub fn tag(&self) -> &'static str {
        match self.name {
            "awari" => crate::format::RULE_SET,
            other => other,
        }
    }

    /// The preset a manifest's or header's tag names.
    pub fn by_tag(tag: &str) -> Option<Rules> {
        PRESETS.iter().find(|r| r.tag() == tag).copied()
    }

    /// Whether two rule sets give the same tables (the fields the solver
    /// reads agree).
    pub fn same_tables(&self, other: &Rules) -> bool {
        (self.grand_slam, self.feeding, self.no_seeds)
            == (other.grand_slam, other.feeding, other.no_seeds)
    }

    /// The fields, in the order of the rule table.
    pub fn fields(&self) -> Vec<Field> {
        let f = |name, meaning, tables, value: String, words: String| Field {
            name,
            meaning,
            tables,
            value,
            words,
        };
        vec![
            f(
                "grand_slam",
                "a capture that would take every seed the opponent has",
                true,
                match self.grand_slam {
                    GrandSlam::IllegalUnlessForced => "illegal-unless-forced",
                    GrandSlam::NoCapture => "no-capture",
                    GrandSlam::Captures => "captures",
                    GrandSlam::Never => "never",
                }
                .into(),
                match self.grand_slam {
                    GrandSlam::IllegalUnlessForced => {
                        "illegal unless every move leaves the opponent no seeds"
                    }
                    GrandSlam::NoCapture => "legal; the sowing stands and nothing is captured",
                    GrandSlam::Captures => {
                        "legal; it captures, and the opponent, left no seeds, cannot move: the mover takes the rest"
                    }
                    GrandSlam::Never => {
                        "never legal; a mover whose every move is one cannot play: the game ends and the opponent takes the rest"
                    }
                }
                .into(),
            ),
            f(
                "feeding",
                "what the mover owes an opponent with no seeds",
                true,
                match self.feeding {
                    Feeding::Subsumed => "subsumed",
                    Feeding::Mandatory => "mandatory",
                    Feeding::Free => "free",
                }
                .into(),
                match self.feeding {
                    Feeding::Subsumed => {
                        "a move that leaves the opponent no seeds is illegal unless every move does"
                    }
                    Feeding::Mandatory => {
                        "a move that reaches the opponent is mandatory; if none does, the game ends and the mover takes the rest"
                    }
                    Feeding::Free => {
                        "nothing: a move that leaves the opponent no seeds ends the game, and the mover takes the rest"
                    }
                }
                .into(),
            ),
            f(
                "no_seeds",
                "the side to move has no seeds",
                true,
                "other-side-takes-the-rest".into(),
                "the game ends; the other side takes the seeds left".into(),
            ),
            f(
                "win",
                "seeds captured that win the game at once",
                false,
                json_or_null(self.win),
                match self.win {
                    Some(k) => format!("{k} seeds"),
                    None => "none: the most seeds at the end win".into(),
                },
            ),
            f(
                "draw",
                "seeds captured by each side that draw the game at once",
                false,
                json_or_null(self.draw),
                match self.draw {
                    Some(k) => format!("{k} each"),
                    None => "none".into(),
                },
            ),
            f(
                "repetition",
                "the occurrence of a position that ends the game",
                false,
                self.repetition.to_string(),
                match self.repetition {
                    2 => "the first repetition".to_string(),
                    3 => "the third occurrence".to_string(),
                    k => format!("occurrence {k}"),
                },
            ),
            f(
                "no_capture_limit",
                "plies without a capture that end the game",
                false,
                json_or_null(self.no_capture_limit),
                match self.no_capture_limit {
                    None => "none".into(),
                    Some(k) => format!("{k} plies"),
                },
            ),
            f(
                "seeds_left",
                "what becomes of the seeds left at a repetition or the plies' limit",
                false,
                match self.seeds_left {
                    SeedsLeft::SplitEvenly => "split-evenly",
                    SeedsLeft::NotCaptured => "not-captured",
                }
                .into(),
                match self.seeds_left {
                    SeedsLeft::SplitEvenly => "split evenly",
                    SeedsLeft::NotCaptured => "not captured: nobody's",
                }
                .into(),
            ),
        ]
    }

    /// The rule set as a JSON object: its name and every field's value.
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("name".into(), self.name.into());
        for f in self.fields() {
            let v = serde_json::from_str(&f.value).unwrap_or(serde_json::Value::String(f.value));
            m.insert(f.name.into(), v);
        }
        serde_json::Value::Object(m)
    }

    /// The preset a JSON object (as [`Rules::to_json`] writes it) names,
    /// checked on the fields that shape the tables: an error names the
    /// first that differs and its value there ([`RulesError::RulesFieldDiffers`]),
    /// or says the object has no name ([`RulesError::RulesUnnamed`]) or an
    /// unknown one ([`RulesError::UnknownRules`]). (The fields that only tell
    /// play when a game ends are the program's.)
    pub fn from_json(v: &serde_json::Value) -> Result<Rules> {
        let name = v
            .get("name")
            .and_then(|n| n.as_str())
            .ok_or(RulesError::RulesUnnamed)?;
        let r = Rules::by_name(name)?;
        let want = r.to_json();
        for f in r.fields().iter().filter(|f| f.tables) {
            if v.get(f.name) != want.get(f.name) {
                return Err(RulesError::RulesFieldDiffers {
                    name: r.name,
                    field: f.name,
                    found: v.get(f.name).cloned(),
                }
                .into());
            }
        }
        Ok(r)
    }
}

/// A number as JSON, `null` for `None`.
fn json_or_null(v: Option<impl fmt::Display>) -> String {
    v.map_or_else(|| "null".into(), |k| k.to_string())
}

/// The presets' names, for messages: `awari, abapa, olympiad, awale`.
pub fn known_names() -> String {
    PRESETS
        .iter()
        .map(|r| r.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_round_trip_through_json() {
        for r in PRESETS {
            assert_eq!(Rules::from_json(&r.to_json()).unwrap(), r);
            assert_eq!(Rules::by_tag(r.tag()), Some(r));
        }
        let mut v = ABAPA.to_json();
        v["grand_slam"] = "illegal-unless-forced".into();
        let err = Rules::from_json(&v).unwrap_err();
        match err.cause() {
            Some(RulesError::RulesFieldDiffers { name, field, found }) => {
                assert_eq!((*name, *field), ("abapa", "grand_slam"));
                assert_eq!(found, &Some("illegal-unless-forced".into()));
            }
            _ => panic!("{err:?}"),
        }
        assert!(matches!(
            Rules::from_json(&serde_json::json!({})),
            Err(e) if matches!(e.cause(), Some(RulesError::RulesUnnamed))
        ));
        assert!(matches!(
            Rules::from_json(&serde_json::json!({"name": "kalah"})),
            Err(e) if matches!(e.cause(), Some(RulesError::UnknownRules { .. }))
        ));
        assert!(Rules::by_name("kalah").is_err());
        for (i, a) in PRESETS.iter().enumerate() {
            for b in &PRESETS[i + 1..] {
                assert!(!a.same_tables(b), "{a} and {b}");
            }
        }
    }
}

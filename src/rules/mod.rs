//! The rules of the game, for the four rule sets the crate builds tables
//! for: **awari**, exactly as the VU database encodes it (the default);
//! **abapa**, the rule set of international play; **olympiad**, the
//! Computer Olympiad's awari tournaments; **awale**, the Awale program's.
//!
//! The Vrije Universiteit's Awari Game Score Database (Romein & Bal,
//! "Solving the Game of Awari using Parallel Retrograde Analysis", IEEE
//! Computer 36(10), 2003; dataset DOI 10.48338/vu01-11wjke) was solved under
//! the awari rules below. Every table this crate builds for the `awari` rule
//! set (recorded as `awari-vu2002` in its manifests) has to follow them to
//! the letter. The others differ in two rules only (grand slam and
//! feeding, under "Legality"); abapa's tables follow those of the C++
//! solver of jh85/smallgames and OpenSpiel's `oware`. A rule set is data, a
//! [`Rules`] value with named presets ([`AWARI`], [`ABAPA`], [`OLYMPIAD`],
//! [`AWALE`]; the table of their fields is in `set.rs`, [`Rules`]). This
//! module is the reference of all four: [`crate::index`] numbers the
//! positions (the same ones under each) and [`crate::solve`] computes their
//! values.
//!
//! # Board and perspective
//!
//! * The board has 12 pits ([`PITS`]). A [`Position`] is always seen from the
//!   side to move: pits 0..5 belong to the mover, left to right in
//!   counter-clockwise sowing order, and pits 6..11 to the opponent,
//!   continuing counter-clockwise; pit 0 comes after pit 11.
//! * Seeds captured earlier are not part of a position. The database's entry
//!   for a position with `n` seeds on the board is its **score**: the seeds
//!   the mover will still capture minus the seeds the opponent will still
//!   capture, both sides playing perfectly from here on. It lies in `-n..=n`.
//!
//! # A move
//!
//! 1. The mover chooses a non-empty pit `i` among 0..5, takes out all its
//!    seeds and sows them one at a time into the pits that follow it
//!    (`i+1`, `i+2`, ..., modulo 12).
//! 2. A pit of 12 or more seeds goes round the board more than once; every
//!    lap skips the pit the seeds came from, which is therefore empty after
//!    the move.
//! 3. Capture: if the last seed falls into an opponent pit (6..11) that then
//!    holds 2 or 3 seeds, the mover takes those seeds. The pit before it
//!    (clockwise) is then tested the same way, and so on; the chain ends at
//!    the first pit that is not an opponent pit holding 2 or 3 seeds.
//! 4. The other side moves next, so the result is handed over mirrored
//!    ([`Position::mirror`]): the old pits 6..11 become the new 0..5, and the
//!    old 0..5 the new 6..11.
//!
//! [`Position::sow`] performs steps 1 to 3 (as awari captures);
//! [`Position::moves`] adds step 4, the grand slam rule and the legality
//! rules below, for a rule set.
//!
//! # Legality
//!
//! **Awari** has a single rule in place of the "grand slam" and "feeding"
//! rules of other rule sets: a move that leaves the opponent with no seeds
//! at all, whether by capturing everything the opponent had or by not
//! sowing into an opponent that was already empty, is **illegal unless every
//! available move does so**. When every move does, all of them are legal
//! and capture as usual ([`Move::legal`]).
//!
//! **Abapa** ([`GrandSlam::NoCapture`], [`Feeding::Mandatory`]):
//! * a **grand slam** (a capture that would take every seed the opponent
//!   has) is legal, but the sowing stands and nothing is captured: the move
//!   stays in its layer;
//! * when the opponent has no seeds, a move that gives it some is
//!   mandatory; if no move does, the game ends and each side takes the
//!   seeds of its own row (the mover all of them).
//!
//! **Olympiad** ([`GrandSlam::Captures`], [`Feeding::Mandatory`]):
//! * a grand slam is legal and captures as usual: the opponent, left
//!   without seeds, cannot move, and the mover takes the seeds left, so the
//!   move is worth `+n`;
//! * feeding as under abapa: when the opponent has no seeds, a move that
//!   gives it some is mandatory; if no move does, the mover takes the rest.
//!
//! **Awale** ([`GrandSlam::Never`], [`Feeding::Free`]):
//! * a grand slam is never legal; a mover whose every move is a grand slam
//!   cannot play: the game ends and the opponent takes the rest (`-n`; the
//!   text of the rules does not say, and this is our reading);
//! * there is no duty to feed: a move that leaves an empty opponent empty
//!   is legal, and ends the game with the mover taking the rest (`+n`).
//!
//! Every other move is legal under all four.
//!
//! # Ends
//!
//! * **No legal move** ([`Position::final_score`]): a mover with no seeds
//!   scores `-n`, because the opponent takes every seed left; an abapa or
//!   olympiad mover that cannot feed scores `+n` (each side takes its own
//!   row, and the opponent's is empty); an awale mover whose every move is
//!   a grand slam scores `-n`. A move that leaves the opponent without
//!   seeds (awari's forced moves, olympiad's grand slams, awale's moves
//!   that do not feed) is worth `+n`: the mover gets its capture plus
//!   every seed still on the board.
//! * **Empty board**: the score is 0.
//! * **Endless play** (play that cycles and never captures again): the seeds
//!   left are split evenly (awale: nobody takes them), so such play is
//!   worth 0 to each side's score, the difference of their captures.
//!
//! # What the dataset pins, and the cycle envelope
//!
//! The dataset's own text fixes sowing, capture, the legality rule above and
//! the index ([`crate::index`]), and its lookup code gives a position with no
//! moves the value `-n`. Its text does **not** fix how repetition is scored:
//! only the published descriptions of the solution say the remaining seeds
//! are split evenly (the 0 above). So, besides the score, the builder computes
//! an envelope for every position:
//!
//! * `upper`: the score if every endless play, in this layer or in any layer
//!   below, were worth all remaining seeds to the side to move in the position
//!   being scored;
//! * `lower`: the score if every endless play were worth all of them to that
//!   side's opponent.
//!
//! Whichever way the cycle rule is read, the score lies in `lower..=upper`. A
//! position is **pinned** when `lower == upper`: its score cannot depend on
//! the cycle rule, and only pinned positions count as proof when tables are
//! compared with the oracle (the VU dataset). Small layers hold many positions
//! that are not pinned (fewer than half of them at 10 seeds), so every report
//! has to say how many positions it compared. [`crate::solve`] describes how
//! the score and the envelope are computed.
//!
//! # The same meaning under every rule set
//!
//! The three tables mean the same under abapa (and olympiad and awale,
//! whose texts end play at the first repetition): the score with endless play
//! splitting the seeds left evenly (what play falls back on: the third
//! repetition, or 500 plies without a capture, split the rest evenly); the
//! envelope as its two extremes, every endless play in this layer or below
//! worth everything to one side; pinned where the repetition rule cannot
//! matter. The C++ abapa solver of jh85/smallgames keeps two guarantees per
//! position, `gM` (seeds the mover can force with play that ends) and `gN`
//! (the same for the opponent), and calls a position *exact* when
//! `gM + gN = n`; in our terms `lower = 2 gM - n` and `upper = n - 2 gN`, so
//! exact is pinned. Its published shares of exact positions (4 seeds:
//! 72.8%, 8: 61.1%, 12: 18.7%, 16: 6.5%, 20: 3.8%, 24: 2.4%) are our abapa
//! pinned shares (the test suite checks 4..=16, docs/verification.md all of
//! them).
//!
//! # Counts
//!
//! Layer `n` consists of every way of putting `n` seeds into the 12 pits in
//! which the opponent's pits 6..11 are **not all** non-empty: the opponent has
//! just moved, and the pit it moved from is empty
//! ([`Position::is_indexable`]). That makes `C(n+11, 11) - C(n+5, 11)`
//! positions ([`crate::index::layer_size`]); the second term is 0 for
//! `n < 6`. Layer 47 cannot occur, since a capture takes at least 2 seeds, and
//! the dataset does not contain it. Layers 0..46 and 48 together with the
//! initial position (4 seeds in every pit, [`Position::initial`]) come to
//! 889,063,398,406 positions.
//!
//! # Worked sowing examples
//!
//! Boards are written from the mover's view, pits 0..11.
//!
//! * In `[1,1,1,1,1,2, 4,2,3,0,0,0]`, pit 5 sows its 2 seeds into pits 6 and
//!   7, which then hold 5 and 3. Pit 7 holds 3, so it is captured; pit 6
//!   holds 5, so the chain stops there. The move captures 3 seeds and 13
//!   stay on the board.
//! * A pit of 12 seeds sows pits `i+1..i+11` once each and then drops its
//!   last seed into the pit after the origin again, skipping the origin.
//!
//! ```
//! use awari_egdb::rules::Position;
//!
//! let p = Position::new([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]).unwrap();
//! let (board, captured) = p.sow(5);
//! assert_eq!(captured, 3);
//! assert_eq!(board, [1, 1, 1, 1, 1, 0, 5, 0, 3, 0, 0, 0]);
//!
//! let p = Position::new([12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
//! assert_eq!(p.sow(0), ([0, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], 0));
//! ```

mod counts;
mod error;
pub use error::RulesError;
mod exits;
mod packed;
mod set;

pub use exits::Exits;
pub use set::{
    known_names, Feeding, Field, GrandSlam, NoSeeds, Rules, SeedsLeft, ABAPA, AWALE, AWARI,
    OLYMPIAD, PRESETS,
};

use packed::{has_zero_byte, mirror_packed, pack, sow_packed, unpack, HIGH_BITS, LAST, SOWN};
use std::fmt;

/// Number of pits on the board.
pub const PITS: usize = 12;
/// Largest number of seeds on the board (the initial position).
pub const MAX_SEEDS: u32 = 48;

/// A board seen from the side to move.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Position(pub [u8; PITS]);

/// One move of the side to move.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Move {
    /// The pit sown, 0..5.
    pub pit: u8,
    /// Seeds captured by the move.
    pub captured: u8,
    /// The resulting position, seen from the opponent (who moves next).
    pub child: Position,
    /// Whether the move is legal under the rule set it was generated for
    /// (awari: a move that leaves the opponent without seeds is legal only
    /// if every move does; abapa and olympiad: a move must feed an
    /// opponent without seeds where one can; awale: a grand slam never is).
    pub legal: bool,
}

/// The moves of a position: one entry per non-empty mover pit, in pit order.
#[derive(Clone, Copy, Debug)]
pub struct MoveList {
    moves: [Move; 6],
    len: u8,
}

impl MoveList {
    /// The moves as a slice, in pit order.
    pub fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len as usize]
    }
    /// The legal moves.
    pub fn legal(&self) -> impl Iterator<Item = &Move> {
        self.as_slice().iter().filter(|m| m.legal)
    }
    /// The move from `pit`, if that pit holds seeds.
    pub fn from_pit(&self, pit: usize) -> Option<&Move> {
        self.as_slice().iter().find(|m| m.pit as usize == pit)
    }
}

impl Position {
    /// The initial position: four seeds in every pit.
    pub const fn initial() -> Self {
        Position([4; PITS])
    }

    /// The pit counts.
    #[inline]
    pub fn pits(&self) -> &[u8; PITS] {
        &self.0
    }

    /// Seeds on the board.
    #[inline]
    pub fn seeds(&self) -> u32 {
        self.0.iter().map(|&x| x as u32).sum()
    }

    /// Seeds in the mover's pits 0..5.
    #[inline]
    pub fn mover_seeds(&self) -> u32 {
        self.0[..6].iter().map(|&x| x as u32).sum()
    }

    /// Seeds in the opponent's pits 6..11.
    #[inline]
    pub fn opponent_seeds(&self) -> u32 {
        self.0[6..].iter().map(|&x| x as u32).sum()
    }

    /// Whether the position has a Goedel number: some opponent pit is empty.
    #[inline]
    pub fn is_indexable(&self) -> bool {
        self.0[6..].contains(&0)
    }

    /// The same board seen from the other side.
    #[inline]
    pub fn mirror(&self) -> Self {
        let p = &self.0;
        Position([
            p[6], p[7], p[8], p[9], p[10], p[11], p[0], p[1], p[2], p[3], p[4], p[5],
        ])
    }

    /// Sow pit `pit` (0..5, non-empty) and capture; returns the board before
    /// mirroring (still from the mover's view) and the seeds captured.
    #[inline]
    pub fn sow(&self, pit: usize) -> ([u8; PITS], u8) {
        debug_assert!(pit < 6 && self.0[pit] > 0);
        let (b, captured) = sow_packed(pack(&self.0), pit, self.0[pit] as usize);
        (unpack(b), captured)
    }

    /// Every move from a non-empty mover pit, with its legality and its
    /// capture under `rules`.
    #[inline]
    pub fn moves(&self, rules: &Rules) -> MoveList {
        // The presets' combinations inline; any other one out of line.
        match (rules.grand_slam, rules.feeding) {
            (GrandSlam::IllegalUnlessForced, Feeding::Subsumed) => {
                self.moves_with::<SLAM_UNLESS_FORCED, FEED_SUBSUMED>()
            }
            (GrandSlam::NoCapture, Feeding::Mandatory) => {
                self.moves_with::<SLAM_STANDS, FEED_MANDATORY>()
            }
            (GrandSlam::Captures, Feeding::Mandatory) => {
                self.moves_with::<SLAM_CAPTURES, FEED_MANDATORY>()
            }
            (GrandSlam::Never, Feeding::Free) => self.moves_with::<SLAM_NEVER, FEED_FREE>(),
            _ => self.moves_combined(rules),
        }
    }

    /// [`Position::moves`] for the combinations of fields no preset has.
    #[inline(never)]
    fn moves_combined(&self, rules: &Rules) -> MoveList {
        macro_rules! by_feeding {
            ($slam:expr) => {
                match rules.feeding {
                    Feeding::Subsumed => self.moves_with::<$slam, FEED_SUBSUMED>(),
                    Feeding::Mandatory => self.moves_with::<$slam, FEED_MANDATORY>(),
                    Feeding::Free => self.moves_with::<$slam, FEED_FREE>(),
                }
            };
        }
        match rules.grand_slam {
            GrandSlam::IllegalUnlessForced => by_feeding!(SLAM_UNLESS_FORCED),
            GrandSlam::NoCapture => by_feeding!(SLAM_STANDS),
            GrandSlam::Captures => by_feeding!(SLAM_CAPTURES),
            GrandSlam::Never => by_feeding!(SLAM_NEVER),
        }
    }

    /// [`Position::moves`] with the grand slam and feeding rules resolved
    /// at compile time (`SLAM`: one of the `SLAM_*` constants, `FEED`: one
    /// of the `FEED_*`).
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // `pit` is a pit number as well
    fn moves_with<const SLAM: u8, const FEED: u8>(&self) -> MoveList {
        let empty = Move {
            pit: 0,
            captured: 0,
            child: Position([0; PITS]),
            legal: false,
        };
        let mut list = MoveList {
            moves: [empty; 6],
            len: 0,
        };
        let x = pack(&self.0);
        let opponent_empty = x >> 48 == 0;
        let mut any_feeds = false;
        // Grand slams, by their place in the list (only kept when a rule
        // needs them after the loop).
        let mut slams = 0u8;
        for pit in 0..6 {
            let s = self.0[pit] as usize;
            if s == 0 {
                continue;
            }
            let (mut b, mut captured) = sow_packed(x, pit, s);
            let slam = captured > 0 && b >> 48 == 0;
            if SLAM == SLAM_STANDS && slam {
                // A grand slam: the sowing stands, nothing is captured.
                b = x - ((s as u128) << (8 * pit)) + SOWN[pit][s];
                captured = 0;
            }
            let feeds = b >> 48 != 0;
            any_feeds |= feeds;
            let legal = match FEED {
                // Fixed below when no move feeds.
                FEED_SUBSUMED => feeds,
                FEED_MANDATORY => feeds || !opponent_empty,
                _ => true,
            };
            let legal = legal && !(SLAM == SLAM_NEVER && slam);
            if SLAM == SLAM_UNLESS_FORCED && FEED != FEED_SUBSUMED && slam {
                slams |= 1 << list.len;
            }
            list.moves[list.len as usize] = Move {
                pit: pit as u8,
                captured,
                child: Position(unpack(mirror_packed(b))),
                legal,
            };
            list.len += 1;
        }
        let moves = &mut list.moves[..list.len as usize];
        if FEED == FEED_SUBSUMED && !any_feeds {
            // Every move leaves the opponent without seeds: all are legal
            // (but grand slams that are never legal).
            for m in moves.iter_mut() {
                m.legal = !(SLAM == SLAM_NEVER && m.captured > 0);
            }
        }
        if SLAM == SLAM_UNLESS_FORCED && FEED != FEED_SUBSUMED && any_feeds {
            // A grand slam is illegal while some move feeds.
            for (k, m) in moves.iter_mut().enumerate() {
                m.legal &= slams >> k & 1 == 0;
            }
        }
        list
    }

    /// The score of a position without a legal move, where the game ends:
    /// `-n` when the mover has no seeds or (a grand slam never legal)
    /// every move it has is a grand slam, the opponent taking every seed
    /// left; `+n` when, under mandatory feeding, no move can reach an
    /// empty opponent, the mover taking them. (In both, each side gets the
    /// seeds of its own row, but for the grand slams' end.)
    #[inline]
    pub fn final_score(&self, rules: &Rules) -> i32 {
        let n = self.seeds() as i32;
        if self.mover_seeds() > 0
            && self.opponent_seeds() == 0
            && rules.feeding == Feeding::Mandatory
        {
            n
        } else {
            -n
        }
    }

    /// Calls `f` with every predecessor of `self` by a non-capturing legal move
    /// under `rules` (an *internal* move: the child `self` stays in the layer
    /// and its mover has seeds; under abapa a grand slam is one). Each
    /// predecessor is an indexable position seen from its own mover. Nothing
    /// is reported when `self`'s mover has no seeds (a move into such a
    /// position is an exit, not an internal move).
    #[inline]
    pub fn for_each_predecessor(&self, rules: &Rules, mut f: impl FnMut(Position)) {
        self.for_each_predecessor_packed(rules, |p| f(Position::from_packed(p)));
    }

    /// [`Position::for_each_predecessor`], each predecessor given packed
    /// ([`Position::packed`]), the form the solvers rank
    /// ([`crate::index::rank_packed`]) without unpacking it.
    #[inline]
    pub fn for_each_predecessor_packed(&self, rules: &Rules, f: impl FnMut(u128)) {
        // A move that captures nothing and feeds is legal under every rule
        // set; only a grand slam that stands is a sowing that captured
        // nothing although its last seed made 2 or 3.
        match rules.grand_slam {
            GrandSlam::NoCapture => self.predecessors_with::<true>(f),
            _ => self.predecessors_with::<false>(f),
        }
    }

    /// The board packed little-endian into a `u128`: pit `k` in byte `k`,
    /// bytes 12..=15 zero.
    #[inline(always)]
    pub fn packed(&self) -> u128 {
        pack(&self.0)
    }

    /// The position of a board packed as [`Position::packed`] packs it.
    #[inline(always)]
    pub fn from_packed(x: u128) -> Position {
        Position(unpack(x))
    }

    /// [`Position::for_each_predecessor`] with the grand slam rule resolved
    /// at compile time (`SLAM_STANDS`: a grand slam captures nothing, so it
    /// is an internal move).
    #[inline(always)]
    fn predecessors_with<const SLAM_STANDS: bool>(&self, mut f: impl FnMut(u128)) {
        if self.mover_seeds() == 0 {
            return;
        }
        // The board right after the move, before mirroring: the predecessor's
        // mover owns 0..5 and its origin pit is among the empty ones there.
        let r = mirror_packed(pack(&self.0));
        let rb = self.mirror().0;
        let slam = if SLAM_STANDS { slam_last(&rb) } else { NO_PIT };
        let high = r | HIGH_BITS;
        for origin in 0..6 {
            if rb[origin] != 0 {
                continue;
            }
            for s in 1..=MAX_SEEDS as usize {
                // Take back what s seeds sowed; a borrow out of a pit's high
                // bit means a pit held too few, and so for every larger s.
                let t = high - SOWN[origin][s];
                if t & HIGH_BITS != HIGH_BITS {
                    break;
                }
                // A last seed that made 2 or 3 in an opponent pit would have
                // captured: not an internal move.
                let last = LAST[origin][s] as usize;
                if last >= 6 && (rb[last] == 2 || rb[last] == 3) && last != slam {
                    continue;
                }
                let p = (t & !HIGH_BITS) + ((s as u128) << (8 * origin));
                if !has_zero_byte((p >> 48) as u64 | (0x0101 << 48)) {
                    continue;
                }
                f(p);
            }
        }
    }

    /// Calls `f` with every position `P` that has a legal move capturing
    /// exactly `captured` seeds whose child is `self` (the predecessors by a
    /// *capture*; `P` lies `captured` seeds above `self`). Nothing is
    /// reported when `self`'s mover has no seeds: such a move leaves its
    /// opponent empty and is worth the same whatever the child's value, so
    /// the solver takes it from the parent's side. A predecessor may be
    /// reported more than once.
    ///
    /// Taking a capture back: in the board right after the move (before
    /// mirroring), the captured pits are a run of opponent pits ending at
    /// the last seed's pit, each now empty and each holding 2 or 3 before the
    /// capture; the opponent pit before the run (if any) holds neither 2 nor
    /// 3. Each way to put 2s and 3s back that sums to `captured` is then
    /// un-sown like an internal move.
    pub fn for_each_capture_predecessor(&self, captured: u32, mut f: impl FnMut(Position)) {
        let c = captured as usize;
        if self.mover_seeds() == 0 || c < 2 {
            return;
        }
        let rb = self.mirror().0;
        let base = pack(&rb);
        for last in 6..PITS {
            // The run last+1-r ..= last, r pits.
            for r in 1..=last - 5 {
                let low = last + 1 - r;
                if rb[low] != 0 {
                    break;
                }
                if c < 2 * r || c > 3 * r {
                    continue;
                }
                if low > 6 && (rb[low - 1] == 2 || rb[low - 1] == 3) {
                    continue;
                }
                let threes = (c - 2 * r) as u32;
                for mask in 0u32..1 << r {
                    if mask.count_ones() != threes {
                        continue;
                    }
                    let mut b = base;
                    for j in 0..r {
                        b += (2 + (mask >> j & 1) as u128) << (8 * (low + j));
                    }
                    let high = b | HIGH_BITS;
                    for origin in 0..6 {
                        if rb[origin] != 0 {
                            continue;
                        }
                        // Sowings from `origin` whose last seed lands on `last`.
                        let mut s = last - origin;
                        while s <= MAX_SEEDS as usize {
                            let t = high - SOWN[origin][s];
                            if t & HIGH_BITS != HIGH_BITS {
                                break;
                            }
                            let p = (t & !HIGH_BITS) + ((s as u128) << (8 * origin));
                            if has_zero_byte((p >> 48) as u64 | (0x0101 << 48)) {
                                f(Position(unpack(p)));
                            }
                            s += 11;
                        }
                    }
                }
            }
        }
    }

    /// The predecessors as a vector (convenience for tests and tools).
    pub fn predecessors(&self, rules: &Rules) -> Vec<Position> {
        let mut v = Vec::new();
        self.for_each_predecessor(rules, |p| v.push(p));
        v
    }
}

/// The grand slam rules, as [`Position::moves_with`] takes them: a grand
/// slam illegal unless forced (awari), one that stands capturing nothing
/// (abapa), one that captures (olympiad), one never legal (awale).
const SLAM_UNLESS_FORCED: u8 = 0;
const SLAM_STANDS: u8 = 1;
const SLAM_CAPTURES: u8 = 2;
const SLAM_NEVER: u8 = 3;
/// The feeding rules: subsumed by awari's one rule, mandatory, free.
const FEED_SUBSUMED: u8 = 0;
const FEED_MANDATORY: u8 = 1;
const FEED_FREE: u8 = 2;

/// No pit (see [`slam_last`]).
const NO_PIT: usize = usize::MAX;

/// In the board `rb` right after a move (before mirroring), the pit a last
/// seed must have fallen in for the move to be a grand slam that captured
/// nothing: the highest non-empty opponent pit, when the non-empty opponent
/// pits are one run of 2s and 3s below it. [`NO_PIT`] otherwise.
#[inline]
fn slam_last(rb: &[u8; PITS]) -> usize {
    let Some(top) = (6..PITS).rev().find(|&k| rb[k] != 0) else {
        return NO_PIT;
    };
    let mut k = top;
    while k >= 6 && (rb[k] == 2 || rb[k] == 3) {
        k -= 1;
    }
    if k >= 6 && rb[6..=k].iter().any(|&v| v != 0) {
        return NO_PIT;
    }
    if k == top {
        return NO_PIT;
    }
    top
}

/// Serialises as the array of 12 pit counts.
impl serde::Serialize for Position {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({self})")
    }
}

/// Prints the 12 counts separated by spaces, pit 0 first.
impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, x) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{x}")?;
        }
        Ok(())
    }
}

impl Position {
    /// The board drawn for humans: the opponent's row above (pits 11..6), the
    /// mover's row below (pits 0..5).
    pub fn diagram(&self) -> String {
        let p = &self.0;
        let row = |idx: &[usize]| {
            idx.iter()
                .map(|&i| format!("{:>3}", p[i]))
                .collect::<Vec<_>>()
                .join("")
        };
        format!(
            "  opponent   f  e  d  c  b  a\n            {}\n            {}\n  mover      A  B  C  D  E  F\n",
            row(&[11, 10, 9, 8, 7, 6]),
            row(&[0, 1, 2, 3, 4, 5])
        )
    }
}

#[cfg(test)]
mod tests;

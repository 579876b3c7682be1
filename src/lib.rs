//! # awari-egdb
//!
//! Exact endgame score databases for Awari (Oware) in the file format and
//! Goedel numbering of the Vrije Universiteit's Awari Game Score Database
//! (Romein & Bal, 2002). Their values agree with every VU fact the layers
//! built so far reach (the 46 move facts with at most 30 seeds); the
//! dataset's own files were not compared (see the README).
//!
//! * [`rules`]: positions, sowing, captures, the awari legality rule, un-moves.
//! * [`index`]: the VU Goedel numbering of each layer.
//!
//! ```
//! use awari_egdb::{index, rules::Position};
//! let p = Position::indexable([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]).unwrap();
//! assert_eq!(index::rank(&p), 588_953);
//! assert_eq!(index::unrank(16, 588_953).unwrap(), p);
//! ```
#![warn(missing_docs)]

pub mod build;
pub mod codec;
pub mod comm;
pub mod fault;
pub mod format;
pub mod game;
pub mod index;
pub mod mem;
pub mod pack;
pub mod probe;
pub mod recover;
pub mod rules;
pub mod solve;
pub mod stats;
pub mod table;
pub mod verify;

pub use rules::{Move, Position, PositionError};

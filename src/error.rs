//! The library's error: thin, over the typed errors of its rooms.
//!
//! Each room reports its failures as its own error type, typed where the
//! causes are known: [`rules::RulesError`](crate::rules::RulesError),
//! [`index::IndexError`](crate::index::IndexError), the store's
//! `StoreError` (a folder, its manifest and tables, damage with the path),
//! [`codec::CompressError`](crate::codec::CompressError) (inside the
//! store's, with the file), [`probe::ProbeError`](crate::probe::ProbeError),
//! [`verify::VerifyError`](crate::verify::VerifyError),
//! [`recover::RecoverError`](crate::recover::RecoverError),
//! [`pack::PackError`](crate::pack::PackError),
//! [`build::BuildError`](crate::build::BuildError), the planner's
//! `PlanError` (memory, disk), the solver's, the ranks', the allocator's,
//! [`game::GameError`](crate::game::GameError) and
//! [`search::SearchError`](crate::search::SearchError). Their messages name
//! files and figures, never a command or a flag of the `awari` binary
//! (which adds those words itself).
//!
//! Every fallible function of the library returns [`Error`], which holds
//! one of them: its [`kind`](Error::kind) (the few classes a caller acts
//! on: a damaged table is [`ErrorKind::Damaged`] on every path that finds
//! it), its [`path`](Error::path) when it concerns one file or folder, its
//! message, and the room's error itself, typed, through
//! [`Error::cause`]. The binary decides its exit status from the kind
//! alone; the C API, the Python module and the server map the kind too.
//!
//! This module is the lowest floor: it names no other room. It also holds
//! the one failure no room owns, a file operation that failed, with its
//! path ([`IoError`], made by [`AtPath::at`]).

use std::error::Error as StdError;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// What kind of failure an [`Error`] is: what the caller can do about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Bad input: a position, layer, range, setting or folder the call
    /// cannot take, or a layer the folder does not have.
    Input,
    /// The operating system failed a file operation (permissions, a full
    /// disk, a missing folder the caller named).
    Io,
    /// A table, compressed file or manifest entry is damaged: the wrong
    /// size or checksum, missing though listed, values no score can take.
    /// Rebuilding the table repairs it.
    Damaged,
    /// A layer does not fit in the memory allowed.
    Memory,
    /// Another process holds the folder's lock.
    Busy,
    /// Another rank of a build stopped.
    Stopped,
}

/// Sizes: what a file's expected size is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SizeOf {
    /// One byte per position of its layer (a raw table).
    Layer,
    /// The size the manifest records for it (a compressed file).
    Recorded,
    /// The size it had when it was opened (a file no manifest lists).
    Opened,
}

/// A room's typed error: what [`Error`] holds. Its class and, when it
/// concerns one file or folder, that path.
pub trait Cause: StdError + Send + Sync + 'static + AsStdError {
    /// The class of the failure.
    fn kind(&self) -> ErrorKind;
    /// The path the failure concerns, if it concerns one.
    fn path(&self) -> Option<&Path> {
        None
    }
}

/// A [`Cause`] seen as a standard error (to be downcast); implemented for
/// every error type.
#[doc(hidden)]
pub trait AsStdError {
    /// Itself as a standard error.
    fn as_std(&self) -> &(dyn StdError + Send + Sync + 'static);
    /// Itself, boxed, as a standard error.
    fn into_std(self: Box<Self>) -> Box<dyn StdError + Send + Sync + 'static>;
}

impl<T: StdError + Send + Sync + 'static> AsStdError for T {
    fn as_std(&self) -> &(dyn StdError + Send + Sync + 'static) {
        self
    }

    fn into_std(self: Box<Self>) -> Box<dyn StdError + Send + Sync + 'static> {
        self
    }
}

/// Why a call failed: one room's error. See the [module documentation](self).
pub struct Error(Box<dyn Cause>);

impl Error {
    /// The class of the failure: what a caller can do about it.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind()
    }

    /// Whether it says a table is damaged ([`ErrorKind::Damaged`]).
    pub fn is_damage(&self) -> bool {
        self.kind() == ErrorKind::Damaged
    }

    /// The path the error concerns, when it concerns one file or folder.
    pub fn path(&self) -> Option<&Path> {
        self.0.path()
    }

    /// The room's error, if it is of type `E`: `e.cause::<StoreError>()`.
    pub fn cause<E: Cause>(&self) -> Option<&E> {
        self.0.as_std().downcast_ref::<E>()
    }

    /// The room's error by value, if it is of type `E`; else the error
    /// itself back.
    pub fn downcast<E: Cause>(self) -> std::result::Result<E, Error> {
        if self.cause::<E>().is_none() {
            return Err(self);
        }
        Ok(*self.0.into_std().downcast::<E>().expect("of type E"))
    }
}

impl<E: Cause> From<E> for Error {
    fn from(e: E) -> Error {
        Error(Box::new(e))
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.0.source()
    }
}

/// The library's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A file operation that failed.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct IoError {
    /// The file or folder.
    pub path: PathBuf,
    /// What went wrong.
    #[source]
    pub source: io::Error,
}

impl Cause for IoError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Io
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.path)
    }
}

/// Attaches a path to an I/O result, making an [`IoError`].
pub trait AtPath<T> {
    /// The error with `path`.
    fn at(self, path: &Path) -> Result<T>;
}

impl<T> AtPath<T> for io::Result<T> {
    fn at(self, path: &Path) -> Result<T> {
        self.map_err(|source| {
            IoError {
                path: path.to_path_buf(),
                source,
            }
            .into()
        })
    }
}

#[path = "error_display.rs"]
mod display;
#[doc(hidden)]
pub use display::mixed;
pub use display::{human, Layers};

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;

//! Reading the CSV files of the verifiers (move facts, known-good
//! checksums): numbered lines, fields split at commas, and the error that
//! names a bad line. Quoting is not supported; neither file needs it.

use crate::error::Error;
use std::path::Path;

/// The error for a bad line (1-based) of the CSV file `path`.
pub(super) fn error(path: &Path) -> impl Fn(usize, String) -> Error + '_ {
    move |line, reason| {
        super::VerifyError::Csv {
            path: path.to_path_buf(),
            line,
            reason,
        }
        .into()
    }
}

/// The lines of `text`, each with its number (from 1).
pub(super) fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, line)| (i + 1, line))
}

/// The fields of one line: split at commas, each trimmed.
pub(super) fn fields(line: &str) -> Vec<&str> {
    line.split(',').map(str::trim).collect()
}

/// The fields of each numbered line that holds something, with its number:
/// blank lines are skipped, and with `comments` so are lines starting with
/// `#`.
pub(super) fn records<'a>(
    lines: impl Iterator<Item = (usize, &'a str)>,
    comments: bool,
) -> impl Iterator<Item = (usize, Vec<&'a str>)> {
    lines.filter_map(move |(lineno, line)| {
        let line = line.trim();
        if line.is_empty() || comments && line.starts_with('#') {
            None
        } else {
            Some((lineno, fields(line)))
        }
    })
}

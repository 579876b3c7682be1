//! The error type's own tests.

use super::*;

#[test]
fn kinds_decide_the_class() {
    let damaged = Error::Missing(PathBuf::from("scores.3"));
    assert_eq!(damaged.kind(), ErrorKind::Damaged);
    let io = std::fs::read("/nonexistent/x").at(Path::new("/nonexistent/x"));
    assert_eq!(io.unwrap_err().kind(), ErrorKind::Io);
    assert_eq!(Error::Layer47.kind(), ErrorKind::Input);
    let rec = Error::Record {
        line: 3,
        source: Box::new(Error::EmptyPit('A')),
    };
    assert_eq!(rec.kind(), ErrorKind::Input);
    assert_eq!(rec.to_string(), "line 3: pit A is empty");
}

#[test]
fn a_failed_read_of_a_compressed_file_is_io_and_a_short_one_damage() {
    let read = |k| Error::compressed("scores.9.zst", CompressError::Read(k));
    assert_eq!(read(io::ErrorKind::Other).kind(), ErrorKind::Io);
    assert_eq!(
        read(io::ErrorKind::UnexpectedEof).kind(),
        ErrorKind::Damaged
    );
}

#[test]
fn size_messages_say_where_the_size_comes_from() {
    let e = Error::Size {
        path: "scores.15.zst".into(),
        expected: 3_376_746,
        found: 3_375_746,
        of: SizeOf::Recorded,
    };
    assert_eq!(
        e.to_string(),
        "scores.15.zst: 3375746 bytes, but the manifest records 3376746"
    );
}

#[test]
fn layer_lists_print_as_ranges() {
    assert_eq!(
        Layers(&[0, 1, 2, 3, 5, 46, 48]).to_string(),
        "0..=3, 5, 46..=48"
    );
    assert_eq!(Layers(&[]).to_string(), "");
}

//! The error's own tests: the kinds the rooms' errors give, and messages.

use super::*;
use crate::codec::CompressError;
use crate::game::GameError;
use crate::index::IndexError;
use crate::store::StoreError;

#[test]
fn kinds_decide_the_class() {
    let damaged = Error::from(StoreError::Missing(PathBuf::from("scores.3")));
    assert_eq!(damaged.kind(), ErrorKind::Damaged);
    assert_eq!(damaged.path(), Some(Path::new("scores.3")));
    let io = std::fs::read("/nonexistent/x").at(Path::new("/nonexistent/x"));
    assert_eq!(io.unwrap_err().kind(), ErrorKind::Io);
    assert_eq!(Error::from(IndexError::Layer47).kind(), ErrorKind::Input);
    let rec = Error::from(GameError::Record {
        line: 3,
        source: Box::new(GameError::EmptyPit('A').into()),
    });
    assert_eq!(rec.kind(), ErrorKind::Input);
    assert_eq!(rec.to_string(), "line 3: pit A is empty");
}

#[test]
fn the_room_s_error_comes_back_typed() {
    let e = Error::from(IndexError::NoSuchLayer(49));
    assert!(matches!(e.cause(), Some(IndexError::NoSuchLayer(49))));
    assert!(e.cause::<StoreError>().is_none());
    assert_eq!(
        e.to_string(),
        "layer 49 does not exist: layers have 0 to 48 seeds"
    );
}

#[test]
fn a_failed_read_of_a_compressed_file_is_io_and_a_short_one_damage() {
    let read = |k| StoreError::compressed("scores.9.zst", CompressError::Read(k));
    assert_eq!(read(io::ErrorKind::Other).kind(), ErrorKind::Io);
    assert_eq!(
        read(io::ErrorKind::UnexpectedEof).kind(),
        ErrorKind::Damaged
    );
}

#[test]
fn size_messages_say_where_the_size_comes_from() {
    let e = StoreError::Size {
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

//! The C API as a C caller meets it: `libawari_egdb.so` opened with
//! `dlopen` and its functions found by name with `dlsym` (the library's
//! `cdylib`, found or built by [`built`]).

#![allow(dead_code, non_camel_case_types)]

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `awari_status` values of `include/awari_egdb.h`.
pub const AWARI_OK: c_int = 0;
/// A layer the folder does not hold.
pub const AWARI_NOT_BUILT: c_int = 2;

/// An open folder (`awari_db *`).
pub type Db = *mut c_void;

type Open = unsafe extern "C" fn(*const c_char, *mut Db) -> c_int;
type Close = unsafe extern "C" fn(Db);
type RulesOf = unsafe extern "C" fn(Db) -> *const c_char;
type Score = unsafe extern "C" fn(Db, *const u8, *mut i8) -> c_int;
type Scores = unsafe extern "C" fn(Db, *const u8, usize, *mut i8) -> c_int;
type ScoresWhereBuilt = unsafe extern "C" fn(Db, *const u8, usize, *mut i8, *mut u8) -> c_int;

/// The functions of the header that the Rust side calls.
pub struct Api {
    pub open: Open,
    pub open_mapped: Open,
    pub close: Close,
    pub rules: RulesOf,
    pub score: Score,
    pub scores: Scores,
    pub scores_where_built: ScoresWhereBuilt,
}

/// The library, opened once.
pub fn api() -> &'static Api {
    static API: OnceLock<Api> = OnceLock::new();
    API.get_or_init(|| {
        let path = CString::new(
            built("libawari_egdb.so")
                .to_str()
                .expect("UTF-8")
                .to_string(),
        )
        .expect("a path");
        // SAFETY: a valid path; the library stays loaded for the process.
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        assert!(!handle.is_null(), "dlopen {path:?} failed");
        let sym = |name: &str| {
            let c = CString::new(name).expect("a name");
            // SAFETY: an open handle and a valid name.
            let p = unsafe { libc::dlsym(handle, c.as_ptr()) };
            assert!(!p.is_null(), "{name} is not exported");
            p
        };
        // SAFETY: each symbol has the signature of the header.
        unsafe {
            Api {
                open: std::mem::transmute::<*mut c_void, Open>(sym("awari_open")),
                open_mapped: std::mem::transmute::<*mut c_void, Open>(sym("awari_open_mapped")),
                close: std::mem::transmute::<*mut c_void, Close>(sym("awari_close")),
                rules: std::mem::transmute::<*mut c_void, RulesOf>(sym("awari_rules")),
                score: std::mem::transmute::<*mut c_void, Score>(sym("awari_score")),
                scores: std::mem::transmute::<*mut c_void, Scores>(sym("awari_scores")),
                scores_where_built: std::mem::transmute::<*mut c_void, ScoresWhereBuilt>(sym(
                    "awari_scores_where_built",
                )),
            }
        }
    })
}

/// `name` (`libawari_egdb.a` or `libawari_egdb.so`), this crate built in
/// one of its crate types. Beside the test binary (`target/release/deps`)
/// or one folder up when the cargo that runs the tests built it there; a
/// `cargo test` does not always build the library's own crate types (no
/// test links them), so wherever it is missing a cargo of its own builds
/// both in `target/capi` (its own lock; the first time about a minute,
/// then nothing to do). Built once per test binary.
pub fn built(name: &str) -> PathBuf {
    static TARGET: OnceLock<PathBuf> = OnceLock::new();
    let exe = std::env::current_exe().expect("the test's path");
    let deps = exe.parent().expect("a folder");
    if let Some(p) = [deps.join(name), deps.join("..").join(name)]
        .into_iter()
        .find(|p| p.exists())
    {
        return p;
    }
    let target = TARGET.get_or_init(build_library);
    let lib = target.join("release").join(name);
    assert!(lib.exists(), "{} was not built", lib.display());
    lib
}

/// Builds the library's crate types in `target/capi`; returns that folder.
fn build_library() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or(root.join("../target"), PathBuf::from)
        .join("capi");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let st = std::process::Command::new(cargo)
        .args(["build", "--release", "--lib", "--quiet"])
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .status()
        .expect("cargo runs");
    assert!(st.success(), "cargo build of the C library failed");
    target
}

//! The C API as a C caller meets it: `libawari_egdb.so` opened with
//! `dlopen` and its functions found by name with `dlsym` (the library's
//! `cdylib`, built by the cargo that builds this test beside its binary).

#![allow(dead_code, non_camel_case_types)]

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::PathBuf;
use std::sync::OnceLock;

/// `awari_status` values of `include/awari_egdb.h`.
pub const AWARI_OK: c_int = 0;
/// A layer the folder does not hold.
pub const AWARI_NOT_BUILT: c_int = 2;

/// An open folder (`awari_db *`).
pub type Db = *mut c_void;

/// The functions of the header that the Rust side calls.
pub struct Api {
    pub open: unsafe extern "C" fn(*const c_char, *mut Db) -> c_int,
    pub open_mapped: unsafe extern "C" fn(*const c_char, *mut Db) -> c_int,
    pub close: unsafe extern "C" fn(Db),
    pub rules: unsafe extern "C" fn(Db) -> *const c_char,
    pub score: unsafe extern "C" fn(Db, *const u8, *mut i8) -> c_int,
    pub scores: unsafe extern "C" fn(Db, *const u8, usize, *mut i8) -> c_int,
    pub scores_where_built: unsafe extern "C" fn(Db, *const u8, usize, *mut i8, *mut u8) -> c_int,
}

/// `libawari_egdb.so` beside this binary (`target/release/deps`), else one
/// folder up (`target/release`).
fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let deps = exe.parent().expect("a folder");
    let name = "libawari_egdb.so";
    [deps.join(name), deps.join("..").join(name)]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{name} is not beside {}", exe.display()))
}

/// The library, opened once.
pub fn api() -> &'static Api {
    static API: OnceLock<Api> = OnceLock::new();
    API.get_or_init(|| {
        let path = CString::new(library().to_str().expect("UTF-8").to_string()).expect("a path");
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
                open: std::mem::transmute::<*mut c_void, _>(sym("awari_open")),
                open_mapped: std::mem::transmute::<*mut c_void, _>(sym("awari_open_mapped")),
                close: std::mem::transmute::<*mut c_void, _>(sym("awari_close")),
                rules: std::mem::transmute::<*mut c_void, _>(sym("awari_rules")),
                score: std::mem::transmute::<*mut c_void, _>(sym("awari_score")),
                scores: std::mem::transmute::<*mut c_void, _>(sym("awari_scores")),
                scores_where_built: std::mem::transmute::<*mut c_void, _>(sym(
                    "awari_scores_where_built",
                )),
            }
        }
    })
}

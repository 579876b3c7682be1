//! The `awari` command line.

mod cli;

fn main() {
    // A closed stdout (`awari check | head -1`) ends the program quietly,
    // as it does `cat`: the default action of SIGPIPE, which Rust's
    // runtime sets to "ignore" so that every print would panic instead.
    // SAFETY: called before any thread starts; SIG_DFL is a valid handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(cli::run());
}

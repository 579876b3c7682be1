//! `awari serve`: the web oracle. A JSON API over the folder's tables and
//! a page that draws the board, both from one HTTP server (axum on hyper
//! and tokio), read-only on the folder.
//!
//! * `mod.rs`: the arguments, the runtime, the listener and the shutdown
//!   on Ctrl-C or SIGTERM.
//! * `conn.rs`: one connection: the limits and time-outs that keep a slow,
//!   silent or flooding client from holding the server.
//! * `api.rs`: the routes of `/api/v1` and their errors, JSON
//!   `{"error", "kind"}` with the status of each kind.
//! * `explore.rs`: `/api/v1/game` and `/api/v1/random`, what the page
//!   plays and explores with.
//! * `health.rs`: `/api/v1/health`, the tables' presence and sizes.
//! * `page.rs`: the page at `/`, its files embedded in the binary.
//!
//! The probes are those of `awari query` ([`awari_egdb::probe::Database`],
//! read with `pread`, so a table truncated while serving is an error of
//! its layer, never a crash); the answer of a position is
//! [`awari_egdb::probe::Answer`], the object `awari query --json` prints.

mod api;
mod conn;
mod explore;
mod health;
mod page;
mod reply;

use super::Failure;
use awari_egdb::probe::Database;
use clap::Args;
use std::net::SocketAddr;
use std::sync::Arc;

#[derive(Args)]
#[command(after_help = super::EXIT_CODES)]
pub struct ServeArgs {
    #[command(flatten)]
    db: super::DbArg,
    /// Address to listen on (another interface than loopback only when
    /// asked; port 0 picks a free port, printed at start).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: String,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "T")]
    threads: Option<usize>,
    /// Log one line per request to stderr: method, path, status, time.
    #[arg(long)]
    log: bool,
    /// Seconds a client has to send a request's headers (and the longest a
    /// kept-alive connection stays idle, or a read or write stalls); a
    /// request with its body must be answered within three times as long.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    timeout: u64,
}

/// What every request shares.
pub struct State {
    /// The folder's tables.
    pub db: Database,
    /// The folder's path as the error messages name it, with the separator
    /// after it and without: taken out of what the API says (a client
    /// learns a table's name, not where the server keeps it).
    pub dir_prefix: (String, String),
    /// Log each request.
    pub log: bool,
}

/// The folder's path as the API names it: not at all.
fn hide(dir: &std::path::Path) -> (String, String) {
    let d = dir.display().to_string();
    (format!("{d}/"), d)
}

pub fn run(a: ServeArgs) -> Result<(), Failure> {
    a.db.rules()?;
    let dir = a.db.path();
    let db = super::query::open(&a.db, false)?;
    let addr = listen_address(&a.listen)?;
    if a.timeout == 0 {
        return Err(Failure::usage("--timeout must be at least 1 second"));
    }
    let limits = conn::Limits::new(std::time::Duration::from_secs(a.timeout));
    let threads = match a.threads {
        Some(t) => {
            super::pool_builder(Some(t))?;
            t
        }
        None => std::thread::available_parallelism().map_or(1, |c| c.get()),
    };
    let state = Arc::new(State {
        db,
        dir_prefix: hide(&dir),
        log: a.log,
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .map_err(|e| Failure::usage(format!("cannot start the server's threads: {e}")))?;
    runtime.block_on(serve(state, addr, dir, limits))
}

async fn serve(
    state: Arc<State>,
    addr: SocketAddr,
    dir: std::path::PathBuf,
    limits: conn::Limits,
) -> Result<(), Failure> {
    // A listen queue longer than the connections served at once, so a
    // flood of them does not overflow it (the kernel then drops new
    // clients' handshakes, which retry only after 1, 3, 7 s); the kernel
    // caps it at its own `somaxconn`.
    let cannot = |e: std::io::Error| Failure::usage(format!("cannot listen on {addr}: {e}"));
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()
    } else {
        tokio::net::TcpSocket::new_v6()
    }
    .map_err(cannot)?;
    socket.set_reuseaddr(true).map_err(cannot)?;
    socket.bind(addr).map_err(cannot)?;
    let listener = socket
        .listen(2 * conn::MAX_CONNECTIONS as u32)
        .map_err(cannot)?;
    let local = listener
        .local_addr()
        .map_err(|e| Failure::usage(format!("cannot listen on {addr}: {e}")))?;
    let assumed = match super::assumed(&state.db) {
        Some(note) => format!(", {note}"),
        None => String::new(),
    };
    println!(
        "awari serve: http://{local}/ ({} rules{assumed}, folder {}); Ctrl-C stops",
        state.db.rules().name,
        dir.display()
    );
    let app = api::router(state.clone()).merge(page::router());
    conn::accept(listener, app, state.log, limits, shutdown()).await;
    Ok(())
}

/// The address of `--listen`: `HOST:PORT` (an address, or a host name
/// resolved, its first address), or a bare `PORT` on 127.0.0.1.
fn listen_address(text: &str) -> Result<SocketAddr, Failure> {
    let bad = |why: String| {
        Failure::usage(format!(
            "--listen '{text}' {why} (e.g. 127.0.0.1:8080, localhost:8080, [::1]:8080, 8080)"
        ))
    };
    if let Ok(a) = text.parse::<SocketAddr>() {
        return Ok(a);
    }
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if !text.contains(':') {
        return Err(bad("is not an address or a port".into()));
    }
    use std::net::ToSocketAddrs;
    match text.to_socket_addrs() {
        Ok(mut addrs) => addrs.next().ok_or_else(|| bad("names no address".into())),
        Err(e) => Err(bad(format!("is not an address: {e}"))),
    }
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}

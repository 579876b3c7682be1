//! Each connection within [`Limits`]: headers of at most
//! [`MAX_HEADER_BYTES`] (431 past it), all of them within the time-out
//! (which also ends a connection idle between requests), no read or write
//! stalled longer than it (a client that never reads its answers), a
//! request with its body answered within three times as long (408 past
//! it), at most [`MAX_CONNECTIONS`] at once (past it, the connections silent
//! for over [`GRACE`] are closed to make room, so a flood of half-open
//! connections does not hold new clients). On shutdown the server stops accepting, lets the
//! requests under way finish (at most [`DRAIN`]) and returns.

use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{watch, Semaphore};
use tokio_io_timeout::TimeoutStream;
use tower::ServiceExt;

/// The time-outs of a connection.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Time a client has to send a request's headers, and the longest a
    /// kept-alive connection may wait idle for its next request.
    pub header: Duration,
    /// The longest a read or a write may make no progress.
    pub io: Duration,
    /// Time to answer one request, its body read included.
    pub request: Duration,
}

impl Limits {
    /// Headers and stalled reads or writes within `t`, requests within
    /// `3 t`.
    pub fn new(t: Duration) -> Limits {
        Limits {
            header: t,
            io: t,
            request: 3 * t,
        }
    }
}
/// The most bytes of request line and headers.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
/// The most connections served at once.
pub const MAX_CONNECTIONS: usize = 2048;
/// How long a new connection may stay silent when the server is at
/// [`MAX_CONNECTIONS`] and another client waits.
pub const GRACE: Duration = Duration::from_millis(250);
/// The longest a shutdown waits for the requests under way.
pub const DRAIN: Duration = Duration::from_secs(5);

/// Serves `app` on `listener` until `shutdown` resolves.
pub async fn accept(
    listener: tokio::net::TcpListener,
    app: Router,
    log: bool,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let (stop, stopped) = watch::channel(false);
    let (pressure, pressed) = watch::channel(0u64);
    tokio::pin!(shutdown);
    'serve: loop {
        // At the limit, the connections silent for over GRACE are asked to
        // go (again every GRACE / 2 while none has gone).
        let permit = loop {
            if let Ok(p) = permits.clone().try_acquire_owned() {
                break p;
            }
            pressure.send_modify(|n| *n += 1);
            tokio::select! {
                _ = &mut shutdown => break 'serve,
                p = permits.clone().acquire_owned() => match p {
                    Ok(p) => break p,
                    Err(_) => break 'serve,
                },
                _ = tokio::time::sleep(GRACE / 2) => {}
            }
        };
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break 'serve,
            r = listener.accept() => match r {
                Ok(s) => s,
                // Out of file descriptors, or a connection reset before it
                // was accepted: wait a moment and go on.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let mut stopped = stopped.clone();
        let pressed = pressed.clone();
        tokio::spawn(async move {
            if !first_bytes(&stream, limits.header, pressed).await {
                drop(permit);
                return;
            }
            let mut io = TimeoutStream::new(stream);
            io.set_read_timeout(Some(limits.io));
            io.set_write_timeout(Some(limits.io));
            let io = TokioIo::new(Box::pin(io));
            let service = hyper::service::service_fn(move |req| {
                let app = app.clone();
                async move { Ok::<_, Infallible>(answer(app, req, log, peer, limits.request).await) }
            });
            let conn = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header)
                .max_header_size(MAX_HEADER_BYTES)
                .serve_connection(io, service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = stopped.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
            drop(permit);
        });
    }
    let _ = stop.send(true);
    let _ = tokio::time::timeout(DRAIN, permits.acquire_many(MAX_CONNECTIONS as u32)).await;
}

/// Waits for a new connection's first bytes: `false` when none came
/// within `limit`, or when the server is at [`MAX_CONNECTIONS`] and this
/// one has been silent for over [`GRACE`] (a flood of half-open
/// connections does not make new clients wait for the time-out).
async fn first_bytes(
    stream: &tokio::net::TcpStream,
    limit: Duration,
    mut pressure: watch::Receiver<u64>,
) -> bool {
    let start = Instant::now();
    let deadline = tokio::time::sleep(limit);
    tokio::pin!(deadline);
    // `peek`, not `readable`: readiness alone can be spurious (a new
    // socket's often is), and a peek waits for a byte or the end.
    let mut byte = [0u8; 1];
    loop {
        tokio::select! {
            r = stream.peek(&mut byte) => return matches!(r, Ok(n) if n > 0),
            _ = &mut deadline => return false,
            c = pressure.changed() => {
                if c.is_err() || start.elapsed() >= GRACE {
                    return false;
                }
            }
        }
    }
}

/// The answer to one request, within `limit`, logged when asked.
async fn answer(
    app: Router,
    req: hyper::Request<Incoming>,
    log: bool,
    peer: std::net::SocketAddr,
    limit: Duration,
) -> axum::response::Response {
    let start = Instant::now();
    let what = log.then(|| format!("{} {}", req.method(), req.uri()));
    let response = match tokio::time::timeout(limit, app.oneshot(req)).await {
        Ok(Ok(r)) => r,
        Ok(Err(never)) => match never {},
        Err(_) => super::reply::ApiError::new(
            axum::http::StatusCode::REQUEST_TIMEOUT,
            "timeout",
            format!("the request took longer than {} s", limit.as_secs()),
        )
        .response(),
    };
    if let Some(what) = what {
        eprintln!(
            "{peer} {what} {} {:.3} ms",
            response.status().as_u16(),
            start.elapsed().as_secs_f64() * 1e3
        );
    }
    response
}

//! `awari serve` as a child process for the tests of the web oracle
//! ([`Server`]), and requests over plain sockets ([`request`], [`get`],
//! [`post`]): a test can send what no HTTP library would.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

/// A running `awari serve`, killed when dropped.
pub struct Server {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl Server {
    /// Serves `dir` on a free loopback port, with `extra` arguments.
    pub fn start(dir: &Path, extra: &[&str]) -> Server {
        let mut child = super::awari_command()
            .args(["serve", "--db"])
            .arg(dir)
            .args(["--listen", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start awari serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read the first line");
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .map(str::to_string);
        let Some(addr) = addr else {
            let _ = child.kill();
            let out = child.wait_with_output().expect("wait");
            panic!(
                "awari serve did not start: {line:?}; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        Server { child, addr }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Open sockets of the server (its listener and connections).
    pub fn open_sockets(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .map(|d| {
                d.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                    .filter(|l| l.to_string_lossy().starts_with("socket:"))
                    .count()
            })
            .unwrap_or(0)
    }

    /// The server's resident memory, bytes.
    pub fn rss(&self) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    }

    /// Sends SIGTERM and waits for the exit, at most `limit`: the exit
    /// status, or `None` if it did not stop.
    pub fn terminate(mut self, limit: Duration) -> (Option<std::process::ExitStatus>, String) {
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(self.pid() as i32, libc::SIGTERM) };
        let start = std::time::Instant::now();
        let status = loop {
            match self.child.try_wait().expect("wait") {
                Some(s) => break Some(s),
                None if start.elapsed() > limit => break None,
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            if status.is_some() {
                let _ = e.read_to_string(&mut err);
            }
        }
        (status, err)
    }

    /// What the server wrote to stderr so far, after stopping it.
    pub fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        err
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One raw request on a new connection; the status and the body (up to
/// the connection's close, at most 10 s).
pub fn request(addr: &str, raw: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // A refused body (413) may close the connection before all is sent.
    let _ = s.write_all(raw);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {:?}", &text[..text.len().min(200)]));
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

/// The body as JSON (`Null` if it is not).
pub fn json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or(Value::Null)
}

/// `GET path`: the status and the JSON body.
pub fn get(addr: &str, path: &str) -> (u16, Value) {
    let raw = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let (status, body) = request(addr, raw.as_bytes());
    (status, json(&body))
}

/// `POST path` with `body`: the status and the JSON body.
pub fn post(addr: &str, path: &str, body: &[u8]) -> (u16, Value) {
    let mut raw = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: \
         application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    raw.extend_from_slice(body);
    let (status, body) = request(addr, &raw);
    (status, json(&body))
}

/// The query string of a board.
pub fn pits(p: &[u8; 12]) -> String {
    p.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
}

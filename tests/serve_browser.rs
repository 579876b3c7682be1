//! `awari serve`'s page in a real browser: headless Chromium driven over
//! WebDriver (chromedriver, through `fantoccini`). The page is loaded from
//! a position's URL, its worths and score are checked against the library
//! ([`Database::moves`], [`Database::score`]), then the best move is
//! clicked, Undo, and the set-up form, each checked the same way; a
//! screenshot is saved to `target/serve-page.png` (under
//! `CARGO_TARGET_DIR` when set).
//!
//! Skipped (it passes, saying why) when `/usr/bin/chromium` or
//! `/usr/bin/chromedriver` is missing, or when `AWARI_NO_BROWSER` is set.
//! Every wait gives up after [`WAIT`] and the whole test after [`WHOLE`],
//! so a hang fails rather than blocks; the server and chromedriver (with
//! the browser it started) are killed by guards, also when a check fails.

mod common;

use awari_egdb::probe::Database;
use awari_egdb::rules::Position;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// The longest any one wait lasts.
const WAIT: Duration = Duration::from_secs(15);
/// The longest the browser part of the test lasts.
const WHOLE: Duration = Duration::from_secs(180);

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// A child process and its process group, killed when dropped (the
/// group: chromedriver's browser goes with it).
struct Guard {
    child: Child,
    what: &'static str,
}

impl Guard {
    /// Starts `cmd` in a process group of its own.
    fn spawn(mut cmd: Command, what: &'static str) -> Guard {
        cmd.process_group(0);
        let child = cmd.spawn().unwrap_or_else(|e| panic!("start {what}: {e}"));
        Guard { child, what }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: signals the process group this guard's child leads.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = self.child.kill();
        match self.child.wait() {
            Ok(_) => {}
            Err(e) => eprintln!("wait for {}: {e}", self.what),
        }
    }
}

/// A free port on loopback (bound, then let go).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Starts `awari serve` on a free port of loopback; its URL.
fn start_server(dir: &Path) -> (Guard, String) {
    let mut cmd = common::awari_command();
    cmd.args(["serve", "--db", common::s(dir), "--listen", "127.0.0.1:0"])
        .args(["--threads", "2"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut guard = Guard::spawn(cmd, "awari serve");
    let stdout = guard.child.stdout.take().expect("stdout");
    // The first line names the address; read it on a thread so that a
    // server that never says it is a time-out, not a hang.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let r = BufReader::new(stdout).read_line(&mut line).map(|_| line);
        let _ = tx.send(r);
    });
    let line = rx
        .recv_timeout(WAIT)
        .expect("awari serve prints its address in time")
        .expect("read awari serve's first line");
    let url = line
        .strip_prefix("awari serve: ")
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("awari serve's first line: {line:?}"));
    let port: u16 = url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|r| r.strip_suffix('/'))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in awari serve's first line: {line:?}"));
    assert_ne!(port, 0, "{line:?}");
    (guard, format!("http://127.0.0.1:{port}"))
}

/// Starts chromedriver on a free port and waits until it listens; its URL.
fn start_chromedriver() -> (Guard, String) {
    let port = free_port();
    let mut cmd = Command::new(CHROMEDRIVER);
    cmd.arg(format!("--port={port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let guard = Guard::spawn(cmd, "chromedriver");
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < WAIT,
            "chromedriver does not listen on port {port} after {WAIT:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (guard, format!("http://127.0.0.1:{port}"))
}

/// Where the screenshot goes.
fn screenshot_path() -> PathBuf {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target"),
    };
    target.join("serve-page.png")
}

/// Who is to move.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Turn {
    South,
    North,
}

/// A position as the page holds it: pits in absolute order (South's A..F,
/// then North's a..f) and the side to move.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Board {
    pits: [u8; 12],
    turn: Turn,
}

impl Board {
    /// The board from the mover's side, as the library takes it.
    fn mover(&self) -> Position {
        let mut p = self.pits;
        if self.turn == Turn::North {
            p.rotate_left(6);
        }
        Position(p)
    }

    /// The board after a move, from `child` (the library's, from the
    /// opponent's side).
    fn after(&self, child: &Position) -> Board {
        let turn = match self.turn {
            Turn::South => Turn::North,
            Turn::North => Turn::South,
        };
        let mut pits = child.0;
        if turn == Turn::North {
            pits.rotate_left(6);
        }
        Board { pits, turn }
    }

    /// The label of the mover's pit `pit` (0..5).
    fn label(&self, pit: u8) -> char {
        let row = if self.turn == Turn::South {
            b"ABCDEF"
        } else {
            b"abcdef"
        };
        row[pit as usize] as char
    }

    /// The query string of the page's URL.
    fn query(&self) -> String {
        let pits: Vec<String> = self.pits.iter().map(|n| n.to_string()).collect();
        let turn = if self.turn == Turn::South { "S" } else { "N" };
        format!("pits={}&turn={turn}", pits.join(","))
    }
}

/// A worth as the page writes it: `+3`, `0`, `-2`.
fn signed(v: i8) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

/// The labels of the pits in absolute order.
const LABELS: &[u8; 12] = b"ABCDEFabcdef";

/// Runs `js` (a function body) in the page.
async fn js(c: &Client, script: &str) -> Res<Value> {
    Ok(c.execute(script, vec![]).await?)
}

/// Waits until `script` returns true in the page.
async fn wait_for(c: &Client, script: &str, what: &str) -> Res<()> {
    let t0 = Instant::now();
    loop {
        if js(c, script).await? == Value::Bool(true) {
            return Ok(());
        }
        if t0.elapsed() > WAIT {
            return Err(format!("waited {WAIT:?} for {what}").into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Marks the drawn answer stale, so that [`wait_ready`] waits for the next.
async fn mark_stale(c: &Client) -> Res<()> {
    js(c, "document.body.dataset.ready = 'stale'; return true;").await?;
    Ok(())
}

/// Waits until the page has drawn an answer.
async fn wait_ready(c: &Client) -> Res<()> {
    wait_for(
        c,
        "return document.body.dataset.ready === 'yes';",
        "body[data-ready=yes]",
    )
    .await
}

/// The board the page shows: each pit's count from its button's text.
async fn shown_pits(c: &Client) -> Res<[u8; 12]> {
    let mut pits = [0u8; 12];
    for (i, l) in LABELS.iter().enumerate() {
        let id = format!("pit-{}", *l as char);
        let text = c.find(Locator::Id(&id)).await?.text().await?;
        let digits: String = text
            .trim()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        pits[i] = digits
            .parse()
            .map_err(|_| format!("#{id} shows {text:?}, no count"))?;
    }
    Ok(pits)
}

/// The position the page's URL holds: `pits=..&turn=..` (decoded).
async fn url_query(c: &Client) -> Res<String> {
    let url = c.current_url().await?;
    let q: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let get = |k: &str| {
        q.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    Ok(format!("pits={}&turn={}", get("pits"), get("turn")))
}

/// Checks everything the page shows for `b` against the library: the board,
/// the URL, the status, the score, each legal move's worth in the table and
/// on its pit, and which are best.
async fn check_page(c: &Client, db: &Database, b: &Board, what: &str) -> Res<()> {
    let p = b.mover();
    let status = c.find(Locator::Id("status")).await?.text().await?;
    assert_eq!(status.trim(), "", "{what}: the page says {status:?}");
    assert_eq!(shown_pits(c).await?, b.pits, "{what}: the board");
    assert_eq!(url_query(c).await?, b.query(), "{what}: the URL");

    let score = db.score(&p)?;
    let summary = c.find(Locator::Id("summary")).await?;
    assert_eq!(
        summary.attr("data-score").await?.as_deref(),
        Some(score.to_string().as_str()),
        "{what}: the score ({:?})",
        summary.text().await?
    );
    let who = if b.turn == Turn::South {
        "South"
    } else {
        "North"
    };
    let text = summary.text().await?;
    assert!(
        text.starts_with(&format!("{who} to move: {}", signed(score))),
        "{what}: the summary {text:?}"
    );

    let moves = db.moves(&p)?;
    let best = moves.iter().filter_map(|m| m.score).max();
    let mut want = Vec::new();
    for m in &moves {
        if let (true, Some(s)) = (m.legal, m.score) {
            want.push((b.label(m.pit), s, Some(s) == best));
        }
    }
    // The table: one row with a worth per legal move.
    let mut rows = Vec::new();
    for tr in c
        .find_all(Locator::Css("#moves tbody tr[data-label][data-worth]"))
        .await?
    {
        let l = tr.attr("data-label").await?.unwrap_or_default();
        let w = tr.attr("data-worth").await?.unwrap_or_default();
        let class = tr.attr("class").await?.unwrap_or_default();
        let cell = tr.find(Locator::Css("td:last-child")).await?.text().await?;
        let worth: i8 = w
            .parse()
            .map_err(|_| format!("{what}: row {l} data-worth {w:?}"))?;
        assert_eq!(cell.trim(), signed(worth), "{what}: row {l}'s worth cell");
        rows.push((
            l.chars().next().unwrap_or('?'),
            worth,
            class.split_whitespace().any(|k| k == "best"),
        ));
    }
    assert_eq!(rows, want, "{what}: the moves table (label, worth, best)");
    // The pits: the mover's playable ones carry their worth.
    let mut pits = Vec::new();
    for pit in c.find_all(Locator::Css(".pit[data-worth]")).await? {
        let id = pit.attr("id").await?.unwrap_or_default();
        let w = pit.attr("data-worth").await?.unwrap_or_default();
        let class = pit.attr("class").await?.unwrap_or_default();
        pits.push((
            id.strip_prefix("pit-")
                .and_then(|l| l.chars().next())
                .unwrap_or('?'),
            w.parse::<i8>()
                .map_err(|_| format!("{what}: {id} data-worth {w:?}"))?,
            class.split_whitespace().any(|k| k == "best"),
        ));
    }
    // The board lists North's pits first, f..a.
    pits.sort_by_key(|&(l, _, _)| LABELS.iter().position(|&x| x as char == l));
    assert_eq!(pits, want, "{what}: the playable pits (label, worth, best)");
    Ok(())
}

/// Clicks the element `css` selects and waits for the next answer.
async fn click(c: &Client, css: &str) -> Res<()> {
    mark_stale(c).await?;
    c.find(Locator::Css(css)).await?.click().await?;
    wait_ready(c).await
}

/// The browser part: every check, against the server at `base`.
async fn drive(c: &Client, base: &str, db: &Database) -> Res<()> {
    // 1. A 12-seed position, South to move, from its URL.
    let start = Board {
        pits: [2, 1, 0, 3, 1, 0, 1, 0, 2, 1, 0, 1],
        turn: Turn::South,
    };
    let moves = db.moves(&start.mover())?;
    let worths: std::collections::BTreeSet<i8> = moves.iter().filter_map(|m| m.score).collect();
    assert!(
        worths.len() >= 2 && moves.iter().filter(|m| m.legal).count() >= 3,
        "the test's position should have several moves of different worths: {moves:?}"
    );
    c.goto(&format!("{base}/?{}&cap=0,0", start.query()))
        .await?;
    wait_ready(c).await?;
    check_page(c, db, &start, "the position from the URL").await?;
    wait_for(
        c,
        "return document.getElementById('rules-name').textContent === 'awari';",
        "the rules' name",
    )
    .await?;
    let shot = c.screenshot().await?;
    let path = screenshot_path();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&path, shot)?;
    eprintln!("screenshot: {}", path.display());

    // 2. The best move, clicked on its pit.
    let best = moves.iter().filter_map(|m| m.score).max().expect("a move");
    let m = moves
        .iter()
        .find(|m| m.score == Some(best))
        .expect("a best move");
    let next = start.after(&m.child.expect("the best move's child"));
    let label = start.label(m.pit);
    click(c, &format!("#pit-{label}")).await?;
    check_page(c, db, &next, &format!("after {label}")).await?;
    let url = c.current_url().await?;
    let cap = url
        .query_pairs()
        .find(|(k, _)| k == "cap")
        .map(|(_, v)| v.into_owned());
    assert_eq!(
        cap.as_deref(),
        Some(format!("{},0", m.captures).as_str()),
        "captures in the URL {url}"
    );
    assert_eq!(
        c.find(Locator::Id("cap-south")).await?.text().await?,
        m.captures.to_string(),
        "South's captures"
    );

    // 3. Undo: back to the start.
    click(c, "#undo").await?;
    check_page(c, db, &start, "after Undo").await?;

    // 4. The set-up form: North to move.
    let setup = Board {
        pits: [1, 0, 2, 0, 1, 1, 0, 3, 1, 0, 2, 1],
        turn: Turn::North,
    };
    let counts: Vec<String> = setup.pits.iter().map(|n| n.to_string()).collect();
    let input = c.find(Locator::Id("setup-pits")).await?;
    input.clear().await?;
    input.send_keys(&counts.join(" ")).await?;
    c.find(Locator::Id("setup-turn"))
        .await?
        .select_by_value("N")
        .await?;
    click(c, "#setup button[type=submit]").await?;
    check_page(c, db, &setup, "after the set-up form").await?;

    // 5. North to move, from the URL; then its best move.
    let north = Board {
        pits: [0, 2, 1, 0, 1, 1, 3, 0, 1, 2, 0, 1],
        turn: Turn::North,
    };
    c.goto(&format!("{base}/?{}&cap=3,5", north.query()))
        .await?;
    wait_ready(c).await?;
    check_page(c, db, &north, "North to move, from the URL").await?;
    let moves = db.moves(&north.mover())?;
    let best = moves.iter().filter_map(|m| m.score).max().expect("a move");
    let m = moves
        .iter()
        .find(|m| m.score == Some(best))
        .expect("a best move");
    let after = north.after(&m.child.expect("the best move's child"));
    let label = north.label(m.pit);
    click(c, &format!("#pit-{label}")).await?;
    check_page(c, db, &after, &format!("after North's {label}")).await?;
    assert_eq!(
        c.find(Locator::Id("cap-north")).await?.text().await?,
        (5 + m.captures).to_string(),
        "North's captures"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_in_chromium() {
    if std::env::var_os("AWARI_NO_BROWSER").is_some() {
        eprintln!("skipped: AWARI_NO_BROWSER is set");
        return;
    }
    for bin in [CHROMIUM, CHROMEDRIVER] {
        if !Path::new(bin).exists() {
            eprintln!("skipped: no {bin} (apt-get install chromium chromium-driver)");
            return;
        }
    }
    let t0 = Instant::now();
    let dir = tokio::task::spawn_blocking(common::db_dir)
        .await
        .expect("build the tables");
    let db = Database::open(dir).expect("open the tables");
    let (_server, base) = start_server(dir);
    // The browser's profile, removed after the guard below has ended the
    // browser (locals drop in reverse order).
    let profile = tempfile::tempdir().expect("a profile folder");
    let (_driver, driver_url) = start_chromedriver();
    let caps = json!({
        "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": [
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--window-size=900,1300",
                format!("--user-data-dir={}", profile.path().display()),
            ],
        }
    });
    let caps = match caps {
        Value::Object(m) => m,
        _ => unreachable!(),
    };
    let run = async {
        let c = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&driver_url)
            .await?;
        let r = drive(&c, &base, &db).await;
        // Closing the session ends the browser; the guards kill what is
        // left.
        let closed = c.close().await;
        r?;
        closed?;
        Res::Ok(())
    };
    match tokio::time::timeout(WHOLE, run).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => panic!("in the browser: {e}"),
        Err(_) => panic!("the browser test took over {WHOLE:?}"),
    }
    eprintln!("the page in Chromium: {:.1?}", t0.elapsed());
}

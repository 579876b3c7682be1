//! `awari serve`'s page in a real browser: headless Chromium driven over
//! WebDriver (chromedriver, through `fantoccini`). Each view is checked
//! against the library ([`Database::moves`], [`Database::score`],
//! [`Database::envelope`], [`Game::result`]): the first view (a won
//! position of the largest layer), a link opened fresh (`?pos=`, and an
//! old `?pits=` one), bad links said in words, the opening above the
//! built layers, the best move clicked and Undo, a board set up by clicks,
//! Flip sides, a random position of a chosen layer and result, Play best
//! until the game ends with the result named, the narrow layout
//! (380 px: nothing wider than the window), and a folder whose largest
//! layer is damaged (the first view falls back to the next layer). Screenshots go to
//! `target/serve-*.png` (under `CARGO_TARGET_DIR` when set).
//!
//! Skipped (it passes, saying why) when `/usr/bin/chromium` or
//! `/usr/bin/chromedriver` is missing, or when `AWARI_NO_BROWSER` is set.
//! Every wait gives up after [`WAIT`] and the whole test after [`WHOLE`],
//! so a hang fails rather than blocks; the server and chromedriver (with
//! the browser it started) are killed by guards, also when a check fails.

mod common;

use awari_egdb::game::{Board, Game};
use awari_egdb::probe::Database;
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

/// Where screenshot `name` goes.
fn screenshot_path(name: &str) -> PathBuf {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("target"),
    };
    target.join(format!("serve-{name}.png"))
}

/// Saves a screenshot of the page as `name`.
async fn screenshot(c: &Client, name: &str) -> Res<()> {
    let shot = c.screenshot().await?;
    let path = screenshot_path(name);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&path, shot)?;
    eprintln!("screenshot: {}", path.display());
    Ok(())
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
        tokio::time::sleep(Duration::from_millis(20)).await;
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

/// Opens `url` and waits until the page has settled on its first view.
async fn open(c: &Client, url: &str) -> Res<()> {
    c.goto(url).await?;
    wait_for(
        c,
        "return document.body.dataset.first === 'done' && document.body.dataset.ready === 'yes';",
        "the first view",
    )
    .await
}

/// The text of element `id`, trimmed.
async fn text(c: &Client, id: &str) -> Res<String> {
    Ok(c.find(Locator::Id(id))
        .await?
        .text()
        .await?
        .trim()
        .to_string())
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

/// The position the page's URL names (`?pos=`).
async fn url_board(c: &Client) -> Res<Board> {
    let url = c.current_url().await?;
    let pos = url
        .query_pairs()
        .find(|(k, _)| k == "pos")
        .map(|(_, v)| v.into_owned())
        .ok_or_else(|| format!("no pos= in {url}"))?;
    Ok(Board::from_notation(&pos)?)
}

/// Checks everything the page shows for `b` against the library: the board,
/// the captured seeds, the URL, no error, the score, each legal move's
/// worth and pinned flag in the table and on its pit, and which are best.
async fn check_page(c: &Client, db: &Database, b: &Board, what: &str) -> Res<()> {
    let p = b.position();
    assert_eq!(text(c, "status").await?, "", "{what}: the status");
    assert_eq!(shown_pits(c).await?, b.pits, "{what}: the board");
    assert_eq!(
        [text(c, "cap-south").await?, text(c, "cap-north").await?],
        [b.captured[0].to_string(), b.captured[1].to_string()],
        "{what}: the captured seeds"
    );
    assert_eq!(url_board(c).await?, *b, "{what}: the URL");

    let score = db.score(&p)?;
    let summary = c.find(Locator::Id("summary")).await?;
    assert_eq!(
        summary.attr("data-score").await?.as_deref(),
        Some(score.to_string().as_str()),
        "{what}: the score ({:?})",
        summary.text().await?
    );
    let text = summary.text().await?;
    // The result best play leads to, from the captured seeds and the score.
    let side = b.to_move.name();
    let mover = if b.to_move == awari_egdb::game::Side::South {
        score as i64
    } else {
        -(score as i64)
    };
    let n = b.seeds() as i64;
    let half = [
        2 * b.captured[0] as i64 + n + mover,
        2 * b.captured[1] as i64 + n - mover,
    ];
    let seeds = |h: i64| match h % 2 {
        0 => (h / 2).to_string(),
        _ => format!("{}.5", h / 2),
    };
    let result = match half[0].cmp(&half[1]) {
        std::cmp::Ordering::Greater => format!("South wins {}-{}", seeds(half[0]), seeds(half[1])),
        std::cmp::Ordering::Less => format!("North wins {}-{}", seeds(half[1]), seeds(half[0])),
        std::cmp::Ordering::Equal => format!("a draw, {}-{}", seeds(half[0]), seeds(half[1])),
    };
    assert!(
        text.starts_with(&format!(
            "{side} to move: {result} with best play ({} for {side} from here on",
            signed(score)
        )),
        "{what}: the summary {text:?}"
    );

    let moves = db.moves(&p)?;
    let best = db.best_moves(&p)?;
    let mut want = Vec::new();
    for m in &moves {
        if let (true, Some(s), Some(child)) = (m.legal, m.score, m.child) {
            let pinned =
                child.mover_seeds() == 0 || db.envelope(&child)?.is_some_and(|e| e.pinned());
            want.push((
                b.to_move.label(m.pit as usize),
                s,
                best.contains(&m.pit),
                pinned,
            ));
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
        let cells = tr.find_all(Locator::Css("td")).await?;
        let cell = cells[3].text().await?;
        let pinned = cells[4].text().await?;
        let worth: i8 = w
            .parse()
            .map_err(|_| format!("{what}: row {l} data-worth {w:?}"))?;
        assert_eq!(cell.trim(), signed(worth), "{what}: row {l}'s worth cell");
        rows.push((
            l.chars().next().unwrap_or('?'),
            worth,
            class.split_whitespace().any(|k| k == "best"),
            pinned.trim() == "yes",
        ));
    }
    assert_eq!(
        rows, want,
        "{what}: the moves table (label, worth, best, pinned)"
    );
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
    let want: Vec<_> = want.iter().map(|&(l, w, best, _)| (l, w, best)).collect();
    assert_eq!(pits, want, "{what}: the playable pits (label, worth, best)");
    Ok(())
}

/// Clicks the element `css` selects and waits for the next answer.
async fn click(c: &Client, css: &str) -> Res<()> {
    mark_stale(c).await?;
    c.find(Locator::Css(css)).await?.click().await?;
    wait_ready(c).await
}

/// The best move of `b` by the library, the lowest pit among equals (as
/// the page's Play best).
fn best_move(db: &Database, b: &Board) -> Res<(char, Board)> {
    let pit = db.best_move(&b.position())?.ok_or("no move")?;
    let (next, _) = b.play(db.rules(), pit as usize);
    Ok((b.to_move.label(pit as usize), next))
}

/// The browser part: every check, against the server at `base`.
async fn drive(c: &Client, base: &str, db: &Database) -> Res<()> {
    let top = *db.layers().iter().max().ok_or("no layer")?;
    // 1. The first view: a won position of the largest layer.
    open(c, &format!("{base}/")).await?;
    let first = url_board(c).await?;
    assert_eq!(first.seeds(), top, "the first view's layer");
    assert!(db.score(&first.position())? > 0, "the first view is won");
    check_page(c, db, &first, "the first view").await?;
    wait_for(
        c,
        "return document.getElementById('rules-name').textContent === 'awari';",
        "the rules' name",
    )
    .await?;
    let href = c
        .find(Locator::Id("rules-link"))
        .await?
        .attr("href")
        .await?;
    assert_eq!(href.as_deref(), Some("/api/v1/rules"));
    screenshot(c, "first").await?;

    // 2. A link opened fresh; its best move clicked; Undo.
    let start = Board::from_notation("2,1,0,3,1,0/1,0,2,1,0,1/S")?;
    open(c, &format!("{base}/?pos={}", start.notation())).await?;
    check_page(c, db, &start, "a ?pos= link").await?;
    let (label, next) = best_move(db, &start)?;
    click(c, &format!("#pit-{label}")).await?;
    check_page(c, db, &next, &format!("after {label}")).await?;
    click(c, "#undo").await?;
    check_page(c, db, &start, "after Undo").await?;

    // 3. An old link (captured seeds left out: split as play splits them),
    // and bad links said in words.
    let north = Board::from_notation("0,2,1,0,1,1/3,0,1,2,0,1/N")?;
    open(c, &format!("{base}/?pits=0,2,1,0,1,1,3,0,1,2,0,1&turn=N")).await?;
    check_page(c, db, &north, "an old ?pits= link").await?;
    for (link, says) in [
        ("pits=1,2,3", "12 counts"),
        (
            "pits=1,0,0,0,0,0,0,0,0,0,0,1&turn=W",
            "'W' is not the side to move",
        ),
        ("pos=1,2/S", "not a position"),
    ] {
        open(c, &format!("{base}/?{link}")).await?;
        let notice = text(c, "notice").await?;
        assert!(notice.contains(says), "{link}: the page says {notice:?}");
        let shown = url_board(c).await?;
        check_page(
            c,
            db,
            &shown,
            &format!("the view after the bad link {link}"),
        )
        .await?;
    }

    // 4. The opening: beyond the tables, said in words, its moves listed.
    open(c, &format!("{base}/?pos=4,4,4,4,4,4/4,4,4,4,4,4/S/0,0")).await?;
    let why = text(c, "notice-layer").await?;
    assert!(why.contains(&format!("up to {top} seeds")), "{why:?}");
    assert_eq!(text(c, "status").await?, "");
    let unknown = c.find_all(Locator::Css("#moves tbody tr")).await?.len();
    assert_eq!(unknown, 6, "the opening's six moves");
    assert_eq!(c.find_all(Locator::Css(".pit.playable")).await?.len(), 6);

    // 5. A board set up by clicks: Clear, add A A d, remove one A, North
    // to move.
    c.find(Locator::Id("edit")).await?.click().await?;
    click(c, "#edit-clear").await?;
    for pit in ["A", "A", "d", "b"] {
        click(c, &format!("#pit-{pit}")).await?;
    }
    c.find(Locator::Id("edit-remove")).await?.click().await?;
    c.find(Locator::Id("pit-C")).await?.click().await?;
    let empty = text(c, "notice").await?;
    assert!(empty.contains("Pit C is already empty"), "{empty:?}");
    click(c, "#pit-A").await?;
    let notice = text(c, "notice").await?;
    mark_stale(c).await?;
    c.find(Locator::Id("edit-turn"))
        .await?
        .select_by_value("N")
        .await?;
    wait_ready(c).await?;
    c.find(Locator::Id("edit")).await?.click().await?;
    let set = Board::from_notation("1,0,0,0,0,0/0,1,0,1,0,0/N")?;
    check_page(c, db, &set, "the board set up by clicks").await?;
    assert!(notice.is_empty(), "{notice:?}");

    // 6. Flip sides: the rows, the captured seeds and the side to move
    // exchanged; the worth the same.
    click(c, "#flip").await?;
    let mut flipped = set;
    flipped.pits.rotate_left(6);
    flipped.captured.swap(0, 1);
    flipped.to_move = flipped.to_move.other();
    check_page(c, db, &flipped, "after Flip sides").await?;

    // 7. A random lost and pinned position of layer 10.
    c.find(Locator::Id("random-seeds"))
        .await?
        .select_by_value("10")
        .await?;
    c.find(Locator::Id("random-result"))
        .await?
        .select_by_value("lost")
        .await?;
    c.find(Locator::Id("random-pinned"))
        .await?
        .select_by_value("true")
        .await?;
    click(c, "#random-go").await?;
    let r = url_board(c).await?;
    assert_eq!(r.seeds(), 10);
    assert!(db.score(&r.position())? < 0, "a lost position");
    assert!(db.envelope(&r.position())?.is_some_and(|e| e.pinned()));
    check_page(c, db, &r, "a random position").await?;

    // 8. Play best until the game ends; the result as the library's game
    // has it.
    let from = Board::from_notation("2,0,1,0,3,0/0,2,0,1,0,2/S")?;
    open(c, &format!("{base}/?pos={}", from.notation())).await?;
    let mut g = Game::new(from, *db.rules());
    while g.end().is_none() {
        assert!(g.moves().len() < 300, "no end after 300 moves");
        let (label, _) = best_move(db, g.board())?;
        click(c, "#best").await?;
        g.play(&label.to_string())?;
    }
    let result = text(c, "result").await?;
    assert_eq!(result, g.result().unwrap_or_default(), "the result");
    assert!(
        c.find(Locator::Id("best"))
            .await?
            .attr("disabled")
            .await?
            .is_some(),
        "Play best after the end"
    );
    assert_eq!(c.find_all(Locator::Css(".pit.playable")).await?.len(), 0);
    screenshot(c, "ended").await?;
    // The same game by "Play to the end", in one click.
    open(c, &format!("{base}/?pos={}", from.notation())).await?;
    c.find(Locator::Id("to-end")).await?.click().await?;
    let t0 = std::time::Instant::now();
    while text(c, "result").await?.is_empty() {
        assert!(
            t0.elapsed().as_secs() < 60,
            "Play to the end did not end the game"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    wait_ready(c).await?;
    assert_eq!(
        text(c, "result").await?,
        g.result().unwrap_or_default(),
        "to the end"
    );

    // 9. 380 pixels wide: nothing wider than the window, the board whole.
    c.set_window_size(380, 900).await?;
    open(c, &format!("{base}/?pos={}", start.notation())).await?;
    check_page(c, db, &start, "380 px wide").await?;
    let wide = js(
        c,
        "return document.documentElement.scrollWidth <= window.innerWidth \
         && document.getElementById('pit-F').getBoundingClientRect().right <= window.innerWidth;",
    )
    .await?;
    assert_eq!(wide, Value::Bool(true), "the page is wider than 380 px");
    screenshot(c, "narrow").await?;
    Ok(())
}

/// A folder whose largest layer is damaged (its scores cut short): the
/// first view falls back to a won position of the next layer down, says
/// why, and offers no Undo.
async fn damaged_top(c: &Client, base: &str, db: &Database) -> Res<()> {
    let top = *db.layers().iter().max().ok_or("no layer")?;
    open(c, &format!("{base}/")).await?;
    let first = url_board(c).await?;
    assert_eq!(first.seeds(), top - 1, "the first view's layer");
    assert!(db.score(&first.position())? > 0, "the first view is won");
    check_page(c, db, &first, "the first view below a damaged layer").await?;
    let notice = text(c, "notice").await?;
    let says = format!("The tables of layer {top} are damaged");
    assert!(notice.contains(&says), "the page says {notice:?}");
    for id in ["undo", "best"] {
        let off = c.find(Locator::Id(id)).await?.attr("disabled").await?;
        assert_eq!(off.is_some(), id == "undo", "#{id} disabled: {off:?}");
    }
    screenshot(c, "damaged-top").await
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
    let damaged = common::full_copy("awari-damaged-top-");
    let top = db.layers().into_iter().max().expect("a layer");
    let table = damaged.join(format!("scores.{top}"));
    std::fs::File::options()
        .write(true)
        .open(&table)
        .and_then(|f| f.set_len(1000))
        .expect("cut the top layer's scores short");
    let (_damaged_server, damaged_base) = start_server(&damaged);
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
        let r = match drive(&c, &base, &db).await {
            Ok(()) => damaged_top(&c, &damaged_base, &db).await,
            e => e,
        };
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

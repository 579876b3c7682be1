// The awari oracle's page: the board as players see it (North on top, its
// pits a..f from its own left, so f..a from South's view; South's A..F at
// the bottom). A game is a start position in the notation and the moves
// played since; /api/v1/game answers the board now, whether the rules
// ended the game, every move's worth and the line of best play, so the
// page repeats none of the rules. The position lives in the URL: ?pos=.
"use strict";

const OPENING = "4,4,4,4,4,4/4,4,4,4,4,4/S/0,0";
const PV_MOVES = 30;
let game = { start: null, moves: [] };
let view = null; // the last answer of /api/v1/game
let undoStack = [];
let editing = null; // { pits, turn } while the board is edited
let layers = []; // /api/v1/layers
let asked = 0;

const $ = (id) => document.getElementById(id);
const label = (i) => (i < 6 ? "ABCDEF"[i] : "abcdef"[i - 6]);
const kind = (v) => (v > 0 ? "won" : v < 0 ? "lost" : "drawn");
const signed = (v) => (v > 0 ? "+" + v : String(v));
const sideName = (t) => (t === "S" ? "South" : "North");
// A distance to the next capture as the API gives it: plies, or "endless".
const far = (d) =>
  d === null || d === undefined ? "" : d === "endless" ? "endless play" : d === 0 ? "game over" : "capture in " + d;
// Moves "Play to the end" makes at most.
const TO_THE_END = 1000;

function say(id, text, cls) {
  const el = $(id);
  el.textContent = text || "";
  el.className = cls || "";
}

function notationOf(pits, turn, cap) {
  let t = pits.slice(0, 6).join(",") + "/" + pits.slice(6).join(",") + "/" + turn;
  if (cap) t += "/" + cap.join(",");
  return t;
}

function largest() {
  return layers.length ? Math.max(...layers.map((l) => l.seeds)) : null;
}

// The position the URL names: ?pos=NOTATION, or an old ?pits=..&turn=..&cap=..
// link; { start } or { problem } in words; {} for no position at all.
function fromUrl() {
  const q = new URLSearchParams(location.search);
  if (q.has("pos")) return { start: q.get("pos") };
  if (!q.has("pits")) return {};
  const pits = q.get("pits").split(",").map((w) => w.trim());
  if (pits.length !== 12) {
    return { problem: "pits= needs 12 counts, A..F then a..f; this link has " + pits.length };
  }
  const turn = q.has("turn") ? q.get("turn") : "S";
  const cap = q.has("cap") ? q.get("cap").split(",") : null;
  return { start: notationOf(pits, turn, cap) };
}

function toUrl(pos) {
  window.history.replaceState(null, "", "?pos=" + pos);
}

function shown() {
  if (editing) return { pits: editing.pits, turn: editing.turn, cap: null };
  if (view) return { pits: view.pits, turn: view.to_move, cap: view.captured };
  return null;
}

function option(lbl) {
  return view && !view.end && view.options ? view.options.find((o) => o.label === lbl) : null;
}

function drawBoard() {
  const s = shown();
  for (const row of ["north", "south"]) $(row).replaceChildren();
  for (const i of [11, 10, 9, 8, 7, 6, 0, 1, 2, 3, 4, 5]) {
    const l = label(i);
    const b = document.createElement("button");
    b.type = "button";
    b.className = "pit";
    b.id = "pit-" + l;
    b.dataset.label = l;
    b.append(String(s ? s.pits[i] : ""));
    const small = document.createElement("small");
    small.textContent = l;
    b.append(small);
    const o = option(l);
    if (editing) {
      b.classList.add("editable");
      b.title = l + ": click to " + ($("edit-remove").checked ? "remove" : "add") + " a seed (keys + and -)";
      b.addEventListener("click", () => editPit(i, $("edit-remove").checked ? -1 : 1));
      b.addEventListener("keydown", (e) => {
        if (e.key === "+" || e.key === "-") {
          e.preventDefault();
          editPit(i, e.key === "+" ? 1 : -1);
        }
      });
    } else if (o && o.legal) {
      b.classList.add("playable");
      if (o.worth !== null && o.worth !== undefined) {
        b.classList.add(kind(o.worth));
        b.dataset.worth = o.worth;
        b.title = l + ": worth " + signed(o.worth) + (o.distance !== undefined && o.distance !== null ? ", " + far(o.distance) : "");
      } else {
        b.title = l + ": worth unknown";
      }
      if (view.best && view.best.includes(l)) b.classList.add("best");
      b.addEventListener("click", () => play(l));
    } else {
      b.disabled = true;
    }
    (i >= 6 ? $("north") : $("south")).append(b);
  }
  const cap = s && s.cap ? s.cap : ["–", "–"];
  $("cap-south").textContent = cap[0];
  $("cap-north").textContent = cap[1];
  $("south-side").classList.toggle("to-move", !!s && s.turn === "S");
  $("north-side").classList.toggle("to-move", !!s && s.turn === "N");
}

function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  tr.append(td);
}

function drawMoves() {
  const body = $("moves").tBodies[0];
  body.replaceChildren();
  if (!view || view.end || !view.options) return;
  for (const o of view.options) {
    const tr = document.createElement("tr");
    tr.dataset.label = o.label;
    cell(tr, o.label);
    cell(tr, String(o.seeds));
    cell(tr, o.legal ? String(o.captures) : "–");
    if (!o.legal) cell(tr, o.seeds === 0 ? "empty" : "illegal");
    else if (o.worth === null) cell(tr, "unknown");
    else {
      cell(tr, signed(o.worth), kind(o.worth));
      tr.dataset.worth = o.worth;
    }
    cell(tr, !o.legal ? "" : o.pinned === true ? "yes" : o.pinned === false ? "no" : "?");
    if (o.pinned !== undefined && o.pinned !== null) tr.dataset.pinned = o.pinned;
    cell(tr, o.legal ? far(o.distance) : "");
    if (view.best && view.best.includes(o.label)) tr.className = "best";
    body.append(tr);
  }
}

function drawPv() {
  const list = $("pv");
  list.replaceChildren();
  if (!view || !view.pv) return;
  for (const step of view.pv) {
    const li = document.createElement("li");
    li.textContent =
      step.side + " plays " + step.label +
      (step.captures > 0 ? ", capturing " + step.captures : "") +
      " (worth " + signed(step.worth) + " to " + step.side +
      (step.distance !== undefined && step.distance !== null ? ", " + far(step.distance) : "") + ")";
    list.append(li);
  }
  const end = { game_over: "the game is over", repetition: "a position repeats", limit: "…" };
  const li = document.createElement("li");
  li.textContent = end[view.pv_end] || "";
  li.className = "end";
  list.append(li);
}

function drawStats() {
  const box = $("stats-body");
  box.replaceChildren();
  const s = shown();
  const n = s ? s.pits.reduce((a, b) => a + Number(b), 0) : null;
  const l = layers.find((x) => x.seeds === n);
  const p = document.createElement("p");
  if (!l) {
    p.textContent = "Layer " + n + " is not built; the folder holds layers up to " + largest() + " seeds.";
    box.append(p);
    return;
  }
  if (l.won === undefined) {
    p.textContent = "Layer " + n + ": " + l.positions + " positions; the folder's manifest records no figures.";
    box.append(p);
    return;
  }
  const pct = (k) => ((100 * k) / l.positions).toFixed(1) + "%";
  p.textContent =
    "Layer " + n + " (" + l.positions + " positions), for the side to move: won " + pct(l.won) +
    ", drawn " + pct(l.drawn) + ", lost " + pct(l.lost) +
    (l.pinned !== null && l.pinned !== undefined ? "; pinned " + pct(l.pinned) : "") + ".";
  p.id = "stats-shares";
  box.append(p);
  const bar = document.createElement("div");
  bar.className = "share-bar";
  bar.setAttribute("aria-hidden", "true");
  for (const k of ["won", "drawn", "lost"]) {
    const d = document.createElement("span");
    d.className = k;
    d.style.width = (100 * l[k]) / l.positions + "%";
    bar.append(d);
  }
  box.append(bar);
  // The score distribution, -n..+n, as columns.
  const h = l.histogram || [];
  const top = Math.max(1, ...h);
  const plot = document.createElement("div");
  plot.className = "histogram";
  plot.title = "positions by score, -" + n + " to +" + n;
  h.forEach((c, i) => {
    const d = document.createElement("span");
    d.className = kind(i - n);
    d.style.height = Math.max(1, (100 * c) / top) + "%";
    d.title = signed(i - n) + ": " + c;
    plot.append(d);
  });
  box.append(plot);
}

function draw() {
  const s = shown();
  const sum = $("summary");
  delete sum.dataset.score;
  if (editing) {
    sum.textContent = "Editing: " + sideName(editing.turn) + " to move";
  } else if (!view) {
    sum.textContent = "";
  } else if (view.end) {
    sum.textContent = "Game over.";
  } else if (view.score !== undefined && view.score !== null) {
    // The result, from the seeds captured and the score, not the score alone.
    let text = sideName(s.turn) + " to move: " + (view.prediction ? view.prediction.text : "") +
      " (" + signed(view.score) + " for " + sideName(s.turn) + " from here on";
    if (view.distance !== undefined && view.distance !== null) text += ", " + far(view.distance);
    text += ")";
    if (view.pinned === true) text += "; pinned: the same under any cycle rule";
    if (view.pinned === false) text += "; envelope " + signed(view.lower) + ".." + signed(view.upper);
    sum.textContent = text;
    sum.dataset.score = view.score;
    if (view.prediction) sum.dataset.winner = view.prediction.winner || "draw";
  } else {
    sum.textContent = sideName(s.turn) + " to move: worth unknown";
  }
  $("result").textContent = view && view.end && !editing ? view.end.result : "";
  let note = view && view.unknown && !editing ? view.unknown : "";
  if (!note && view && !view.end && !editing && view.score !== undefined && view.score !== null &&
      (view.distance === undefined || view.distance === null)) {
    note = "These tables have no distance to the next capture (built with --no-distance): " +
      "best play by them may repeat a position before the capture its score needs.";
  }
  say("notice-layer", note, "note");
  drawBoard();
  drawMoves();
  drawPv();
  drawStats();
  $("moves").hidden = $("moves").tBodies[0].rows.length === 0;
  $("pv-title").hidden = $("pv").children.length === 0;
  $("edit-tools").hidden = !editing;
  if (editing) $("edit-turn").value = editing.turn;
  $("edit").textContent = editing ? "Done editing" : "Edit board";
  $("edit").setAttribute("aria-pressed", editing ? "true" : "false");
  $("undo").disabled = undoStack.length === 0;
  $("best").disabled = !view || !!view.end || !view.best || view.best.length === 0 || !!editing;
  $("to-end").disabled = $("best").disabled;
}

async function getJson(url) {
  const r = await fetch(url);
  return { ok: r.ok, status: r.status, body: await r.json() };
}

// Asks for the game's board now and draws it; `fromLink` says a failure is
// the link's fault. Resolves to whether it was answered.
async function ask(fromLink) {
  const mine = ++asked;
  document.body.dataset.ready = "no";
  say("status", "asking…");
  let ok = false;
  try {
    let url = "/api/v1/game?pos=" + encodeURIComponent(game.start) + "&pv=" + PV_MOVES;
    if (game.moves.length) url += "&moves=" + game.moves.join("");
    const r = await getJson(url);
    if (mine !== asked) return false;
    if (r.ok) {
      view = r.body;
      ok = true;
      say("status", "");
      toUrl(view.pos);
    } else if (r.status === 400) {
      view = null;
      say("status", "");
      say("notice", (fromLink ? "This link's position cannot be shown: " : editing ? "Not a position yet: " : "") + r.body.error + ".", "warn");
    } else {
      say("status", r.body.error || "error " + r.status, "error");
    }
  } catch (e) {
    if (mine !== asked) return false;
    say("status", "the server did not answer: " + e, "error");
  }
  draw();
  document.body.dataset.ready = "yes";
  return ok;
}

function remember() {
  undoStack.push({ game: { start: game.start, moves: game.moves.slice() }, editing: editing && { pits: editing.pits.slice(), turn: editing.turn } });
}

function startAt(pos) {
  remember();
  say("notice", "");
  game = { start: pos, moves: [] };
  return ask(false);
}

function play(l) {
  const o = option(l);
  if (!o || !o.legal) return;
  remember();
  say("notice", "");
  game.moves.push(l);
  ask(false);
}

function editPit(i, delta) {
  const n = editing.pits[i] + delta;
  if (n < 0) {
    say("notice", "Pit " + label(i) + " is already empty.", "warn");
    $("pit-" + label(i)).focus();
    return;
  }
  remember();
  say("notice", "");
  editing.pits[i] = n;
  editChanged(i);
}

function editChanged(focus) {
  game = { start: notationOf(editing.pits, editing.turn, null), moves: [] };
  ask(false).then(() => {
    if (focus !== undefined && $("pit-" + label(focus))) $("pit-" + label(focus)).focus();
  });
}

function flip() {
  const s = shown();
  if (!s) return;
  const pits = s.pits.slice(6).concat(s.pits.slice(0, 6));
  const turn = s.turn === "S" ? "N" : "S";
  if (editing) {
    remember();
    editing = { pits, turn };
    editChanged();
  } else {
    startAt(notationOf(pits, turn, [s.cap[1], s.cap[0]]));
  }
}

// A random position of a layer, shown; true, else the error's kind.
async function randomPosition(seeds, result, pinned) {
  let url = "/api/v1/random?seeds=" + seeds;
  if (result) url += "&result=" + result;
  if (pinned) url += "&pinned=" + pinned;
  try {
    const r = await getJson(url);
    if (!r.ok) {
      say("notice", r.body.error + ".", "warn");
      document.body.dataset.ready = "yes";
      return r.body.kind || "error";
    }
    editing = null;
    return (await startAt(r.body.pos)) || "error";
  } catch (e) {
    say("status", "the server did not answer: " + e, "error");
    return "error";
  }
}

function fillLayers() {
  const sel = $("random-seeds");
  sel.replaceChildren();
  for (const l of layers.slice().reverse()) {
    const o = document.createElement("option");
    o.value = l.seeds;
    o.textContent = l.seeds + " seeds";
    sel.append(o);
  }
}

// The built layers whose tables /api/v1/health finds whole, largest first,
// and those it reports damaged.
async function wholeLayers() {
  const damaged = new Set();
  try {
    for (const p of (await getJson("/api/v1/health")).body.problems || []) damaged.add(p.layer);
  } catch (e) {
    // No health: every layer is tried, and a damaged one fails its turn.
  }
  const whole = layers.map((l) => l.seeds).filter((n) => !damaged.has(n));
  return { whole: whole.sort((a, b) => b - a), damaged: [...damaged].sort((a, b) => a - b) };
}

async function firstView() {
  const url = fromUrl();
  if (url.start) {
    game = { start: url.start, moves: [] };
    if (await ask(true)) return;
  } else if (url.problem) {
    say("notice", "This link's position cannot be shown: " + url.problem + ".", "warn");
  }
  let keep = $("notice").textContent;
  if (largest() === null) {
    game = { start: OPENING, moves: [] };
    await ask(false);
    return;
  }
  // A decisive position of the largest whole layer, else any; a layer that
  // fails (damaged) gives way to the next one down.
  const { whole, damaged } = await wholeLayers();
  let shownLayer = null;
  for (const n of whole) {
    const won = await randomPosition(n, "won", "");
    const any = won === true || (await randomPosition(n, "", ""));
    if (any === true) {
      shownLayer = n;
      break;
    }
    if (won === "damaged" || any === "damaged") damaged.push(n);
  }
  undoStack = [];
  if (damaged.length) {
    const names = damaged.sort((a, b) => a - b).join(", ");
    keep = (keep ? keep + " " : "") + "The tables of layer" + (damaged.length > 1 ? "s " : " ") + names + " are damaged (see /api/v1/health).";
  }
  if (shownLayer === null) {
    // No layer gives a position to play from: the opening, unscored.
    game = { start: OPENING, moves: [] };
    await ask(false);
    undoStack = [];
    draw();
    say("notice", (keep ? keep + " " : "") + "No built layer has a position to play from; here is the opening.", "warn");
    return;
  }
  draw();
  if (keep) say("notice", keep + " Here is a random position of " + shownLayer + " seeds instead.", "warn");
}

window.addEventListener("DOMContentLoaded", async () => {
  fetch("/api/v1/rules")
    .then((r) => r.json())
    .then((r) => ($("rules-name").textContent = r.name || "?"))
    .catch(() => ($("rules-name").textContent = "?"));
  $("undo").addEventListener("click", () => {
    const last = undoStack.pop();
    if (!last) return;
    game = last.game;
    editing = last.editing;
    say("notice", "");
    ask(false);
  });
  $("best").addEventListener("click", () => {
    if (view && !view.end && view.best && view.best.length > 0) play(view.best[0]);
  });
  // Best moves for both sides until the game ends (one undo takes it all back).
  $("to-end").addEventListener("click", async () => {
    if (!view || view.end || !view.best || view.best.length === 0) return;
    remember();
    say("notice", "");
    for (let k = 0; k < TO_THE_END && view && !view.end && view.best && view.best.length > 0; k++) {
      game.moves.push(view.best[0]);
      if (!(await ask(false))) break;
    }
  });
  $("start").addEventListener("click", () => {
    editing = null;
    startAt(OPENING);
  });
  $("flip").addEventListener("click", flip);
  $("edit").addEventListener("click", () => {
    if (editing) {
      editing = null;
      draw();
      if (view) toUrl(view.pos);
      return;
    }
    const s = shown() || { pits: [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4], turn: "S" };
    editing = { pits: s.pits.slice(), turn: s.turn };
    $("edit-turn").value = s.turn;
    draw();
  });
  $("edit-clear").addEventListener("click", () => {
    remember();
    editing.pits = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    editChanged();
  });
  $("edit-turn").addEventListener("change", () => {
    remember();
    editing.turn = $("edit-turn").value;
    editChanged();
  });
  for (const id of ["edit-add", "edit-remove"]) $(id).addEventListener("change", draw);
  $("random").addEventListener("submit", (e) => {
    e.preventDefault();
    randomPosition($("random-seeds").value, $("random-result").value, $("random-pinned").value);
  });
  try {
    const r = await getJson("/api/v1/layers");
    layers = r.ok ? r.body.layers || [] : [];
    // Without the figures, the built layers as /api/v1/health lists them.
    if (!r.ok) layers = ((await getJson("/api/v1/health")).body.layers || []).map((n) => ({ seeds: n }));
  } catch (e) {
    layers = [];
  }
  fillLayers();
  $("largest").textContent = largest() === null ? "no layer" : "layers up to " + largest() + " seeds";
  await firstView();
  document.body.dataset.first = "done";
});

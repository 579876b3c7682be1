// The awari oracle's page: the board as players see it (North on top, its
// pits a..f from its own left, so f..a from South's view; South's A..F at
// the bottom), every move's exact worth from /api/v1/position, and play.
// The position lives in the URL: ?pits=A,..,F,a,..,f&turn=S|N&cap=S,N.
"use strict";

const START = [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4];
const PV_MOVES = 30;
let state = { pits: START.slice(), turn: "S", cap: [0, 0] };
let undoStack = [];
let answer = null;
let asked = 0;

const $ = (id) => document.getElementById(id);
const label = (i) => (i < 6 ? "ABCDEF"[i] : "abcdef"[i - 6]);
const moverIndex = (turn, pit) => (turn === "S" ? pit : pit + 6);
const kind = (v) => (v > 0 ? "won" : v < 0 ? "lost" : "drawn");
const signed = (v) => (v > 0 ? "+" + v : String(v));

// The board from the mover's side, as the API takes it.
function moverPits(s) {
  return s.turn === "S" ? s.pits.slice() : s.pits.slice(6).concat(s.pits.slice(0, 6));
}

function fromUrl() {
  const q = new URLSearchParams(location.search);
  const pits = (q.get("pits") || "").split(",").map((w) => Number(w.trim()));
  const cap = (q.get("cap") || "0,0").split(",").map(Number);
  if (pits.length === 12 && pits.every((n) => Number.isInteger(n) && n >= 0)) {
    state.pits = pits;
  }
  state.turn = q.get("turn") === "N" ? "N" : "S";
  if (cap.length === 2 && cap.every((n) => Number.isInteger(n) && n >= 0)) {
    state.cap = cap;
  }
}

function toUrl() {
  const q = new URLSearchParams({
    pits: state.pits.join(","),
    turn: state.turn,
    cap: state.cap.join(","),
  });
  window.history.replaceState(null, "", "?" + q.toString());
}

function status(text, error) {
  const el = $("status");
  el.textContent = text;
  el.className = error ? "error" : "";
}

function drawBoard() {
  const north = $("north");
  const south = $("south");
  north.replaceChildren();
  south.replaceChildren();
  const moves = answer ? answer.moves : null;
  for (const i of [11, 10, 9, 8, 7, 6, 0, 1, 2, 3, 4, 5]) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "pit";
    b.id = "pit-" + label(i);
    b.dataset.label = label(i);
    b.innerHTML = "";
    b.append(String(state.pits[i]));
    const small = document.createElement("small");
    small.textContent = label(i);
    b.append(small);
    const mine = state.turn === "S" ? i < 6 : i >= 6;
    const m = mine && moves ? moves[i % 6] : null;
    if (m && m.legal && m.score !== null) {
      b.classList.add("playable", kind(m.score));
      if (answer.best.includes(m.pit)) b.classList.add("best");
      b.dataset.worth = m.score;
      b.title = label(i) + ": worth " + signed(m.score);
      b.addEventListener("click", () => play(m.pit));
    } else {
      b.disabled = true;
    }
    (i >= 6 ? north : south).append(b);
  }
  $("cap-south").textContent = state.cap[0];
  $("cap-north").textContent = state.cap[1];
  $("south-side").classList.toggle("to-move", state.turn === "S");
  $("north-side").classList.toggle("to-move", state.turn === "N");
}

function drawMoves() {
  const body = $("moves").tBodies[0];
  body.replaceChildren();
  if (!answer) return;
  const mp = moverPits(state);
  for (const m of answer.moves) {
    const tr = document.createElement("tr");
    const l = label(moverIndex(state.turn, m.pit));
    tr.dataset.label = l;
    const worth = document.createElement("td");
    if (mp[m.pit] === 0) worth.textContent = "empty";
    else if (!m.legal) worth.textContent = "illegal";
    else {
      worth.textContent = signed(m.score);
      worth.className = kind(m.score);
      tr.dataset.worth = m.score;
    }
    if (answer.best.includes(m.pit)) tr.className = "best";
    for (const text of [l, String(mp[m.pit]), m.legal ? String(m.captures) : "-"]) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.append(td);
    }
    tr.append(worth);
    body.append(tr);
  }
}

function drawPv() {
  const list = $("pv");
  list.replaceChildren();
  if (!answer || !answer.pv) return;
  let turn = state.turn;
  for (const step of answer.pv) {
    const li = document.createElement("li");
    li.textContent =
      label(moverIndex(turn, step.pit)) +
      (step.captures > 0 ? " captures " + step.captures : "") +
      " (" + (turn === "S" ? "South" : "North") + " scores " + signed(step.score) + ")";
    list.append(li);
    turn = turn === "S" ? "N" : "S";
  }
  const end = { game_over: "game over", repetition: "a position repeats", limit: "…" };
  const li = document.createElement("li");
  li.textContent = end[answer.pv_end] || "";
  li.className = "end";
  list.append(li);
}

function draw() {
  const who = state.turn === "S" ? "South" : "North";
  if (answer) {
    const s = answer.score;
    let text = who + " to move: " + signed(s) + " (" + kind(s) + ")";
    if (answer.pinned === true) text += ", independent of the cycle rule";
    if (answer.pinned === false) text += ", envelope " + signed(answer.lower) + ".." + signed(answer.upper);
    if (answer.best.length === 0) text += "; game over: " + who + " has no move";
    $("summary").textContent = text;
    $("summary").dataset.score = s;
  } else {
    $("summary").textContent = who + " to move";
    delete $("summary").dataset.score;
  }
  drawBoard();
  drawMoves();
  drawPv();
  $("undo").disabled = undoStack.length === 0;
  $("best").disabled = !answer || answer.best.length === 0;
}

async function ask() {
  const mine = ++asked;
  document.body.dataset.ready = "no";
  answer = null;
  toUrl();
  draw();
  status("asking…");
  try {
    const r = await fetch("/api/v1/position?pits=" + moverPits(state).join(",") + "&pv=" + PV_MOVES);
    const body = await r.json();
    if (mine !== asked) return;
    if (!r.ok) {
      status(body.error || "error " + r.status, true);
    } else {
      answer = body;
      status("");
    }
  } catch (e) {
    if (mine !== asked) return;
    status("the server did not answer: " + e, true);
  }
  draw();
  document.body.dataset.ready = "yes";
}

function play(pit) {
  const m = answer && answer.moves[pit];
  if (!m || !m.legal || !m.child) return;
  undoStack.push(JSON.parse(JSON.stringify(state)));
  const mover = state.turn === "S" ? 0 : 1;
  const cap = state.cap.slice();
  cap[mover] += m.captures;
  const next = state.turn === "S" ? "N" : "S";
  // The child is from the new mover's side: its pits first.
  const c = m.child;
  const pits = next === "S" ? c.slice() : c.slice(6).concat(c.slice(0, 6));
  state = { pits, turn: next, cap };
  ask();
}

function setup(text, turn) {
  const words = text.split(/[\s,]+/).filter((w) => w !== "");
  const pits = words.map(Number);
  if (pits.length !== 12 || !pits.every((n) => Number.isInteger(n) && n >= 0 && n <= 48)) {
    status("give 12 whole numbers from 0 to 48, A..F then a..f", true);
    return;
  }
  undoStack.push(JSON.parse(JSON.stringify(state)));
  state = { pits, turn, cap: [0, 0] };
  ask();
}

window.addEventListener("DOMContentLoaded", () => {
  fetch("/api/v1/rules")
    .then((r) => r.json())
    .then((r) => ($("rules-name").textContent = r.name || "?"))
    .catch(() => ($("rules-name").textContent = "?"));
  $("undo").addEventListener("click", () => {
    if (undoStack.length > 0) {
      state = undoStack.pop();
      ask();
    }
  });
  $("best").addEventListener("click", () => {
    if (answer && answer.best.length > 0) play(answer.best[0]);
  });
  $("start").addEventListener("click", () => setup(START.join(" "), "S"));
  $("setup").addEventListener("submit", (e) => {
    e.preventDefault();
    setup($("setup-pits").value, $("setup-turn").value);
  });
  fromUrl();
  ask();
});

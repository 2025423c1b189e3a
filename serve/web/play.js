// play.js: the board of the position in the URL (?moves=4453, or #4453),
// each column's score from GET v1/position, and the column clicked played.
//
// A position is shown only once the server has answered for it: the URL
// (history.pushState) and the board change together, and a failed request
// leaves both as they were, with the error in #message. One request runs
// at a time; a newer one (back, new game) aborts the one running.
"use strict";

const state = {
  width: 0,     // columns, from GET v1/stats "WxH" until an answer gives columns.length
  height: 0,    // rows, from GET v1/stats "WxH"
  answer: null, // the Answer shown (serve/answer.go); null until the first
  moves: "",    // its moves, 1-based column digits
  busy: false,  // a request is running
  home: "",     // where a new game starts, and the page without ?moves=: the book's root (GET v1/stats roots)
};
let running = null; // the AbortController of the request running

const $ = (id) => document.getElementById(id);

// el returns a new element of tag with class cls and text.
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// signed writes a score as the API's number with its sign: +3, 0, -2.
const signed = (n) => (n > 0 ? "+" + n : String(n));

// stone returns a small disc of player (1 or 2).
const stone = (player) => el("span", "stone p" + player);

// APIError is a request that failed: the server's {"error": "..."}, or no
// answer. Any other error thrown is a bug of the page.
class APIError extends Error {}

// api GETs path (relative, so the page works under a prefix) and returns
// its JSON, or throws an APIError.
async function api(path, signal) {
  let res;
  try {
    res = await fetch(path, { signal, headers: { Accept: "application/json" } });
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new APIError("The server could not be reached: " + e.message);
  }
  let body;
  try {
    body = await res.json();
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new APIError(`${path}: HTTP ${res.status}, and the answer is not JSON`);
  }
  if (!res.ok) throw new APIError(body.error || `${path}: HTTP ${res.status}`);
  return body;
}

// run runs work(signal) as the one request in flight, showing it while it
// runs and its error when it fails.
async function run(work) {
  if (running) running.abort();
  const ctl = new AbortController();
  running = ctl;
  setBusy(true);
  showError("");
  try {
    await work(ctl.signal);
  } catch (e) {
    if (e.name === "AbortError") return;
    if (!(e instanceof APIError)) console.error(e); // a bug: for the console too
    showError(e.message);
  } finally {
    if (running === ctl) {
      running = null;
      setBusy(false);
    }
  }
}

function setBusy(on) {
  state.busy = on;
  document.querySelector("main").setAttribute("aria-busy", String(on));
  $("busy").hidden = !on;
  $("board").classList.toggle("busy", on);
  updateControls();
}

function updateControls() {
  const a = state.answer;
  $("undo").disabled = state.busy || state.moves === "";
  $("best-line").disabled = state.busy || !a || Boolean(a.over);
}

function showError(msg) {
  $("message").textContent = msg;
  $("message").hidden = msg === "";
}

// movesFromURL returns the moves the URL holds: #4453, else ?moves=4453,
// else (no moves in it) the book's root, state.home.
function movesFromURL() {
  let hash = location.hash.slice(1);
  try {
    hash = decodeURIComponent(hash);
  } catch (e) {
    // not percent-encoded: the server says what is wrong with it
  }
  if (hash !== "") return hash;
  const moves = new URLSearchParams(location.search).get("moves");
  return moves === null ? state.home : moves;
}

// urlOf returns the URL of this page holding moves: the page itself for
// state.home, and "?moves=" for the empty board when it is not home.
const urlOf = (moves) => location.pathname + (moves === state.home ? "" : "?moves=" + moves);

// show asks for the position moves and shows it; how is "push" (a new
// history entry), "replace" (the URL made canonical) or "keep" (back and
// forward: the URL is already the position's).
function show(moves, how) {
  return run(async (signal) => {
    const a = await api("v1/position?moves=" + encodeURIComponent(moves), signal);
    state.answer = a;
    state.moves = a.moves;
    state.width = a.columns.length;
    const here = location.pathname + location.search + location.hash;
    if (how === "push" && here !== urlOf(a.moves)) history.pushState(null, "", urlOf(a.moves));
    if (how === "replace") history.replaceState(null, "", urlOf(a.moves));
    render();
  });
}

function play(col) {
  if (state.busy || !state.answer || !state.answer.columns[col - 1]) return;
  show(state.moves + col, "push");
}

// render draws the board and the position's facts from state.
function render() {
  const a = state.answer;
  drawBoard(a);
  $("line").hidden = true;
  $("link").href = urlOf(state.moves);
  $("over").hidden = true;
  if (!a) {
    for (const id of ["moves", "to-move", "score", "source", "depth"]) $(id).textContent = "";
    updateControls();
    return;
  }
  $("moves").textContent = a.moves === "" ? "none: the empty board" : `${a.moves} (${a.stones} stones)`;
  const toMove = $("to-move");
  const score = $("score");
  score.className = a.outcome;
  if (a.over) {
    const result = a.outcome === "draw" ? "a draw" : `player ${3 - a.to_move} won`;
    $("over").textContent = `Game over: ${a.over}; ${result}.`;
    $("over").hidden = false;
    toMove.textContent = "nobody: the game is over";
    score.textContent = `${signed(a.score)} for player ${a.to_move}: ${result}`;
  } else {
    toMove.replaceChildren(stone(a.to_move), ` player ${a.to_move}`);
    score.textContent = `${signed(a.score)}: ${a.outcome} in ${a.plies_to_end} for player ${a.to_move}`;
  }
  const from = { book: "the book", solver: "the solver (beyond the book)", rule: "the rules" };
  $("source").textContent = from[a.source] || a.source;
  $("depth").textContent = `${a.book_depth} stones` + (a.stones > a.book_depth ? ": this position is beyond it" : "");
  updateControls();
}

// drawBoard draws one .column per column: its score button (for the
// player to move), then its cells top row first, stones as .p1 and .p2,
// the last one played also .last.
function drawBoard(a) {
  const stones = Array.from({ length: state.width }, () => []);
  for (let i = 0; i < state.moves.length; i++) stones[state.moves[i] - 1].push(1 + (i % 2));
  const lastCol = state.moves === "" ? -1 : state.moves[state.moves.length - 1] - 1;

  const board = $("board");
  if (a) board.dataset.moves = state.moves;
  else delete board.dataset.moves;
  const columns = [];
  for (let col = 0; col < state.width; col++) {
    const c = a && a.columns[col];
    const best = Boolean(a && a.best.includes(col + 1));
    const column = el("div", "column" + (c ? "" : " closed") + (best ? " best" : ""));
    column.dataset.col = col + 1;

    const button = el("button", "play");
    button.type = "button";
    if (c) {
      button.classList.add(c.outcome);
      button.classList.toggle("best", best);
      button.append(el("span", "num", signed(c.score)), el("span", "end", `${c.outcome} in ${c.plies_to_end}`));
      button.title = `Play column ${col + 1}: score ${signed(c.score)}, ${c.outcome} in ${c.plies_to_end} moves` +
        (best ? " (a best move)" : "") + `; from ${c.source}`;
    } else {
      button.disabled = true;
      button.append(el("span", "num", "·"));
      button.title = a && !a.over ? `Column ${col + 1} is full` : `Column ${col + 1} cannot be played`;
    }
    button.setAttribute("aria-label", button.title);

    const cells = el("div", "cells");
    for (let row = state.height - 1; row >= 0; row--) {
      const cell = el("div", "cell");
      const player = stones[col][row];
      if (player) cell.classList.add("p" + player);
      if (col === lastCol && row === stones[col].length - 1) cell.classList.add("last");
      cells.append(cell);
    }
    column.append(button, cells);
    columns.push(column);
  }
  board.replaceChildren(...columns);
}

// showLine shows the answer of GET v1/line: the moves, coloured by player.
function showLine(l) {
  const line = $("line");
  line.replaceChildren(`Best line (score ${signed(l.score)}): `);
  const moves = el("span", "moves");
  for (let i = 0; i < l.line.length; i++) {
    if (i > 0) moves.append(" ");
    moves.append(el("span", "move p" + (1 + ((l.moves.length + i) % 2)), l.line[i]));
  }
  line.append(moves);
  if (l.line === "") line.append("none: the game is over");
  if (!l.complete) {
    line.append(" ", el("span", "incomplete", "… incomplete: the server's solve-timeout ran out before the end of the game"));
  }
  if (l.line !== "") {
    const end = el("a", "", "see where it ends");
    end.href = urlOf(l.moves + l.line);
    line.append(" · ", end);
  }
  line.hidden = false;
}

// showRoots says what the book covers, the roots and depths of the jobs
// that built it (GET v1/stats roots), each a link, and makes the first
// root home when the book does not start at the empty board: a book of
// the positions under 44444433 opens there, not at a board it does not
// hold.
function showRoots(roots) {
  const out = $("roots");
  out.replaceChildren();
  if (roots.length === 0) return;
  if (!roots.some((r) => r.moves === "")) state.home = roots[0].moves;
  out.append(" · covers ");
  roots.forEach((r, i) => {
    if (i > 0) out.append(", ");
    const a = el("a", "root", r.moves === "" ? "the empty board" : r.moves);
    a.href = urlOf(r.moves);
    out.append(a, ` to ${r.depth} stones` + (r.state === "done" ? "" : ` (${r.state})`));
  });
}

async function start() {
  $("board").addEventListener("click", (e) => {
    const column = e.target.closest(".column");
    if (column) play(Number(column.dataset.col));
  });
  $("undo").addEventListener("click", () => show(state.moves.slice(0, -1), "push"));
  $("new-game").addEventListener("click", () => show(state.home, "push"));
  $("best-line").addEventListener("click", () => {
    const moves = state.moves;
    run(async (signal) => showLine(await api("v1/line?moves=" + encodeURIComponent(moves), signal)));
  });
  window.addEventListener("popstate", () => show(movesFromURL(), "keep"));
  window.addEventListener("hashchange", () => show(movesFromURL(), "replace"));

  await run(async (signal) => {
    const st = await api("v1/stats", signal);
    [state.width, state.height] = st.board.split("x").map(Number);
    const parts = [`${st.board} board`, `book depth ${st.depth}`];
    if (st.snapshot) parts.push(`a snapshot of ${new Date(st.snapshot).toLocaleString()}: a job is writing the book`);
    parts.push(st.solving ? `solving beyond the book within ${st.solve_timeout}` : "not solving beyond the book");
    $("book").textContent = parts.join(" · ");
    showRoots(st.roots || []);
    if (st.solving) $("busy").textContent = `Asking the server… (beyond the book it solves, for up to ${st.solve_timeout})`;
  });
  render(); // the empty board, or nothing if the stats failed
  if (state.height > 0) await show(movesFromURL(), "replace");
}

start();

// jericho-env web page: play, watch and replay games drawn by the server as SVG.
// The server holds every game; this page shows the view it is sent and posts moves by number.
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
const SVGNS = "http://www.w3.org/2000/svg";

let CATALOG = null;   // /api/games
let G = null;         // the current view
let path = [];        // the targets clicked so far towards a move
let busy = false;     // a request is under way
let running = false;  // a watched game runs on its own
let seenPlies = 0;    // log entries already shown (newer ones are highlighted)

async function api(method, url, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(url, opts);
  let data;
  try { data = await res.json(); } catch (e) { data = { error: `${res.status} ${res.statusText}` }; }
  if (!res.ok) {
    const err = new Error(data.error || `${res.status}`);
    err.status = res.status;
    throw err;
  }
  return data;
}

function showError(msg) {
  const box = $("#error");
  box.textContent = msg || "";
  box.hidden = !msg;
}

// ------------------------------------------------------------------ forms
function gameById(id) { return CATALOG.games.find(g => g.id === id); }

function parseValue(text) {
  const t = text.trim();
  if (t.toLowerCase() === "true") return true;
  if (t.toLowerCase() === "false") return false;
  if (/^-?\d+$/.test(t)) return parseInt(t, 10);
  return t;
}

function seatCount(form) {
  const game = gameById($("select[name=game]", form).value);
  const np = $("input[data-option=num_players]", form);
  const n = np ? parseValue(np.value) : game.players;
  return Number.isInteger(n) && n > 0 && n <= 8 ? n : game.players;
}

function agentChoices(game) {
  return [...game.agents, ...CATALOG.checkpoints];
}

function buildAgents(form, kind) {
  const game = gameById($("select[name=game]", form).value);
  const n = seatCount(form);
  const seatSel = $("select[name=seat]", form);
  let human = null;
  if (seatSel) {
    const old = seatSel.value;
    seatSel.innerHTML = "";
    for (let s = 0; s < n; s++) seatSel.add(new Option(`player_${s}${s === 0 ? " (moves first)" : ""}`, String(s)));
    if (old && Number(old) < n) seatSel.value = old;
    human = Number(seatSel.value);
  }
  const box = $(".agents", form);
  const keep = $$("select", box).map(s => s.value);
  box.innerHTML = "";
  for (let s = 0; s < n; s++) {
    const label = document.createElement("label");
    label.textContent = `player_${s} `;
    if (s === human) {
      const you = document.createElement("b");
      you.textContent = "you";
      label.append(you);
    } else {
      const sel = document.createElement("select");
      sel.name = `agent-${s}`;
      for (const a of agentChoices(game)) sel.add(new Option(a, a));
      sel.value = keep[s] && agentChoices(game).includes(keep[s]) ? keep[s] : (game.agents.includes("greedy") ? "greedy" : "random");
      label.append(sel);
    }
    box.append(label);
  }
}

function buildForm(form, kind) {
  const gameSel = $("select[name=game]", form);
  gameSel.innerHTML = "";
  for (const g of CATALOG.games) gameSel.add(new Option(g.id, g.id));
  const refresh = () => {
    const game = gameById(gameSel.value);
    const box = $(".options", form);
    box.innerHTML = "";
    for (const o of game.options) {
      const label = document.createElement("label");
      label.textContent = `${o.name} `;
      label.title = `${o.doc} (${o.allowed})`;
      const input = document.createElement("input");
      input.dataset.option = o.name;
      input.value = String(o.default);
      input.addEventListener("change", () => buildAgents(form, kind));
      label.append(input);
      box.append(label);
    }
    buildAgents(form, kind);
  };
  gameSel.addEventListener("change", refresh);
  const seatSel = $("select[name=seat]", form);
  if (seatSel) seatSel.addEventListener("change", () => buildAgents(form, kind));
  refresh();
}

function formRequest(form) {
  const options = {};
  for (const input of $$("input[data-option]", form)) options[input.dataset.option] = parseValue(input.value);
  const n = seatCount(form);
  const agents = [];
  for (let s = 0; s < n; s++) {
    const sel = $(`select[name=agent-${s}]`, form);
    agents.push(sel ? sel.value : null);
  }
  const body = { game: $("select[name=game]", form).value, options, agents };
  const seatSel = $("select[name=seat]", form);
  if (seatSel) body.seat = Number(seatSel.value);
  return body;
}

// ------------------------------------------------------------------ replays
async function loadReplays() {
  const data = await api("GET", "/api/replays");
  const list = $("#replay-list");
  list.innerHTML = "";
  const filter = $("#replay-filter").value.trim().toLowerCase();
  let group = null;
  let shown = 0;
  for (const r of data.replays) {
    if (r.error) {
      const p = document.createElement("p");
      p.className = "bad";
      p.textContent = `${r.file}: ${r.error}`;
      list.append(p);
      continue;
    }
    const text = `${r.game} ${r.pairing} deal ${r.deal} · ${r.seats.join(" / ")} · ${r.result} · ${r.moves} moves`;
    if (filter && !`${r.file} ${text}`.toLowerCase().includes(filter)) continue;
    const key = `${r.file} — ${r.game}: ${r.pairing}`;
    if (key !== group) {
      group = key;
      const h = document.createElement("div");
      h.className = "group";
      h.textContent = key;
      list.append(h);
    }
    const b = document.createElement("button");
    b.className = "replay";
    b.dataset.file = r.file;
    b.dataset.index = r.index;
    b.textContent = `deal ${r.deal}: ${r.seats.join(" / ")} — ${r.result} (${r.moves} moves)`;
    b.addEventListener("click", () => start("replay", { file: r.file, index: r.index }));
    list.append(b);
    shown++;
  }
  if (!shown && !list.children.length) list.textContent = "No recorded games found.";
}

// ------------------------------------------------------------------ the game view
function viewSeat() {
  const v = $("#view").value;
  return v === "all" ? "all" : Number(v);
}

function buildViewSelect(v) {
  const sel = $("#view");
  const old = sel.value;
  sel.innerHTML = "";
  sel.add(new Option("full view (hidden cards shown)", "all"));
  for (const p of v.players) sel.add(new Option(`${p.name} (${p.agent})`, String(p.seat)));
  sel.value = old && $$("option", sel).some(o => o.value === old) ? old : "all";
}

function render(v) {
  const fresh = !G || G.id !== v.id;
  G = v;
  path = [];
  document.body.dataset.kind = v.kind;
  document.body.dataset.ply = v.ply;
  document.body.dataset.plies = v.plies;
  document.body.dataset.over = v.over && v.ply === v.plies ? "true" : "false";
  document.body.dataset.yourTurn = v.your_turn ? "true" : "false";
  $("#game").hidden = false;
  const banner = $("#banner");
  if (v.full_view) {
    banner.className = "full";
    banner.textContent = "FULL VIEW: every hidden card is shown";
  } else {
    banner.className = "seat";
    const p = v.players[v.seat];
    banner.textContent = v.kind === "play"
      ? `You play ${p.name} in ${v.game}: you see only what your seat may see`
      : `Seen by ${p.name} (${p.agent}): only what that seat may see`;
  }
  $("#status").textContent = v.status;
  $("#view-control").hidden = v.kind === "play";
  $("#step-controls").hidden = v.kind === "play";
  $("#watch-controls").hidden = v.kind !== "watch";
  const slider = $("#ply-slider");
  slider.max = v.plies;
  slider.value = v.ply;
  $("#step").disabled = v.over || running;
  $("#run").textContent = running ? "Pause" : "Run";
  $("#run").disabled = v.over && !running;

  // the table and its click targets
  const board = $("#board");
  board.innerHTML = v.svg;
  const overlay = document.createElementNS(SVGNS, "svg");
  overlay.setAttribute("class", "targets");
  overlay.setAttribute("viewBox", `0 0 ${v.width} ${v.height}`);
  for (const [key, boxes] of Object.entries(v.targets)) {
    for (const [x, y, w, h] of boxes) {
      const r = document.createElementNS(SVGNS, "rect");
      r.setAttribute("class", "target");
      r.setAttribute("x", x); r.setAttribute("y", y); r.setAttribute("width", w); r.setAttribute("height", h);
      r.setAttribute("rx", 4);
      r.dataset.key = key;
      r.addEventListener("click", () => clickTarget(key));
      overlay.append(r);
    }
  }
  board.append(overlay);

  // the narration
  const log = $("#log");
  log.innerHTML = "";
  if (fresh) seenPlies = v.kind === "play" ? 0 : v.log.length;
  for (const e of v.log) {
    const li = document.createElement("li");
    li.textContent = `${e.who}: ${e.text}`;
    if (e.ply > seenPlies && !(v.kind === "play" && e.who === "you")) li.className = "new";
    if (v.kind !== "play" && e.ply === v.ply) li.classList.add("current");
    log.append(li);
  }
  seenPlies = Math.max(seenPlies, v.log.length);
  const current = $("#log li.current") || log.lastElementChild;
  if (current) current.scrollIntoView({ block: "nearest" });

  // every legal move as a list too
  const moves = $("#moves");
  moves.innerHTML = "";
  for (const m of v.moves) moves.append(moveButton(m));
  $("#moves-box").hidden = v.kind !== "play";
  refreshTargets();
}

function moveButton(m) {
  const b = document.createElement("button");
  b.className = "move";
  b.dataset.action = m.action;
  b.textContent = m.text;
  b.addEventListener("click", () => sendMove(m.action));
  return b;
}

function startsWith(keys, prefix) {
  return prefix.every((k, i) => keys[i] === k);
}

function refreshTargets() {
  const moves = G.your_turn ? G.moves : [];
  const next = new Set();
  for (const m of moves) if (m.keys.length > path.length && startsWith(m.keys, path)) next.add(m.keys[path.length]);
  for (const r of $$("#board rect.target")) {
    const key = r.dataset.key;
    r.classList.toggle("chosen", path.includes(key));
    r.classList.toggle("live", next.has(key) && !path.includes(key));
  }
  const choices = $("#choices");
  choices.innerHTML = "";
  if (!G.your_turn) return;
  const exact = path.length ? moves.filter(m => m.keys.length === path.length && startsWith(m.keys, path)) : [];
  const buttons = moves.filter(m => m.keys.length === 0);
  if (path.length) {
    const span = document.createElement("span");
    span.className = "label";
    span.textContent = exact.length ? "choose:" : "now click where it goes:";
    choices.append(span);
  } else {
    const span = document.createElement("span");
    span.className = "label";
    span.textContent = "your move: click a highlighted card";
    choices.append(span);
  }
  for (const m of [...exact, ...buttons]) choices.append(moveButton(m));
  if (path.length) {
    const cancel = document.createElement("button");
    cancel.id = "cancel";
    cancel.textContent = "cancel";
    cancel.addEventListener("click", () => { path = []; refreshTargets(); });
    choices.append(cancel);
  }
}

function clickTarget(key) {
  if (!G || !G.your_turn || busy) return;
  if (path.includes(key)) { path = path.slice(0, path.indexOf(key)); refreshTargets(); return; }
  const next = [...path, key];
  const longer = G.moves.filter(m => m.keys.length > next.length && startsWith(m.keys, next));
  const exact = G.moves.filter(m => m.keys.length === next.length && startsWith(m.keys, next));
  if (!longer.length && !exact.length) return;
  path = next;
  if (exact.length === 1 && !longer.length) sendMove(exact[0].action);
  else refreshTargets();
}

async function request(fn) {
  if (busy) return;
  busy = true;
  document.body.dataset.busy = "true";
  try {
    showError("");
    await fn();
  } catch (e) {
    showError(e.message);
    if (e.status === 409 && G) {
      try { render(await api("GET", `/api/session/${G.id}`)); } catch (e2) { /* keep the message */ }
    }
  } finally {
    busy = false;
    document.body.dataset.busy = "false";
  }
}

function sendMove(action) {
  return request(async () => render(await api("POST", `/api/session/${G.id}/move`, { action, ply: G.plies })));
}

function showPly(ply) {
  if (!G) return Promise.resolve();
  const p = Math.max(0, Math.min(G.plies, ply));
  return request(async () => render(await api("GET", `/api/session/${G.id}?seat=${viewSeat()}&ply=${p}`)));
}

function stepOnce() {
  return request(async () => render(await api("POST", `/api/session/${G.id}/step?seat=${viewSeat()}`, { ply: G.plies })));
}

const sleep = ms => new Promise(r => setTimeout(r, ms));

async function runWatch() {
  if (running) { running = false; render(G); return; }
  running = true;
  render(G);
  while (running && G && G.kind === "watch" && !G.over) {
    await stepOnce();
    if (!$("#error").hidden) break;
    await sleep(Number($("#speed").value));
  }
  running = false;
  if (G) render(G);
}

function start(kind, body) {
  running = false;
  return request(async () => {
    const v = await api("POST", `/api/${kind}`, body);
    G = null;
    buildViewSelect(v);
    render(v);
  });
}

function switchTab(tab) {
  for (const b of $$("#tabs button")) b.classList.toggle("active", b.dataset.tab === tab);
  for (const f of ["play", "watch", "replay"]) $(`#form-${f}`).hidden = f !== tab;
  if (tab === "replay") loadReplays().catch(e => showError(e.message));
}

async function init() {
  CATALOG = await api("GET", "/api/games");
  $("#runs-dir").textContent = CATALOG.runs;
  buildForm($("#form-play"), "play");
  buildForm($("#form-watch"), "watch");
  for (const b of $$("#tabs button")) b.addEventListener("click", () => switchTab(b.dataset.tab));
  $("#start-play").addEventListener("click", () => start("play", formRequest($("#form-play"))));
  $("#start-watch").addEventListener("click", () => start("watch", formRequest($("#form-watch"))));
  $("#replay-filter").addEventListener("input", () => loadReplays().catch(e => showError(e.message)));
  $("#view").addEventListener("change", () => showPly(G.ply));
  $("#first").addEventListener("click", () => showPly(0));
  $("#prev").addEventListener("click", () => showPly(G.ply - 1));
  $("#next").addEventListener("click", () => showPly(G.ply + 1));
  $("#last").addEventListener("click", () => showPly(G.plies));
  $("#ply-slider").addEventListener("change", e => showPly(Number(e.target.value)));
  $("#step").addEventListener("click", stepOnce);
  $("#run").addEventListener("click", runWatch);
  document.addEventListener("keydown", e => {
    if (!G || G.kind === "play" || e.target.tagName === "INPUT") return;
    if (e.key === "ArrowLeft") showPly(G.ply - 1);
    if (e.key === "ArrowRight") showPly(G.ply + 1);
  });
  document.body.dataset.ready = "true";
}

init().catch(e => showError(`cannot load the game list: ${e.message}`));

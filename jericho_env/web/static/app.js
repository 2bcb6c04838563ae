// jericho-env web page: play, watch and replay games drawn by the server as SVG.
// The server holds every game; this page shows the view it is sent and posts moves by number.
// Each tab (Play, Watch, Replay) keeps its own game; a game the page leaves (replaced by a new one
// in its tab, or the page closed) is deleted on the server.
// What a request is doing shows where the player is looking: a start's progress and refusal beside
// its Start button (the game area may still be hidden), a move's beside the status line. While a
// request is under way the controls that would send another are disabled, and while the agents
// answer a move the player's cards are not clickable. The move log scrolls inside its own box.
// The server draws the board for the box the page has (w, h: CSS pixels, sent with every request that
// returns a view), one board unit per CSS pixel: a phone gets a one-column board. The board's targets are
// focusable: arrow keys move between them, Enter or Space chooses; a choice that starts no move says why
// in #note (aria-live), and focus stays on the board after a move and goes there after Start.
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
const SVGNS = "http://www.w3.org/2000/svg";
const TABS = ["play", "watch", "replay"];

let CATALOG = null;   // /api/games
const GAMES = { play: null, watch: null, replay: null };  // each tab's game: the last view of it
let TAB = "play";     // the tab shown
let G = null;         // the view shown: GAMES[TAB]
let path = [];        // the targets clicked so far towards a move
let busy = false;     // a request is under way
let running = false;  // a watched game runs on its own
let seenPlies = 0;    // log entries already shown (newer ones are highlighted)
let waiting = false;  // a move of the player's was sent: the agents are answering it
const THINKING_DELAY_MS = 150;  // a sign of life for answers slower than this (quick ones do not flicker)
const MAX_SCALE = 1.5;  // a board is drawn at its own size, or larger where the window has room to spare
let focusKey = null;  // the board target that holds (or gets back) the keyboard focus
let box = null;       // the board's box the last view was drawn for: {w, h}

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
    err.field = data.field || null;
    throw err;
  }
  return data;
}

function boardBox() {
  // the width (and height left below it in the window) the board has: measured where it will stand
  const game = $("#game"), welcome = $("#welcome");
  const hidden = game.hidden, welcomeHidden = welcome.hidden, kind = document.body.dataset.kind;
  if (hidden) {  // laid out as it will be: the game shown (the form folded on a phone), its rows of this tab's kind
    game.hidden = false;
    welcome.hidden = true;
    document.body.classList.add("has-game");
    document.body.dataset.kind = TAB;
  }
  const wrap = $("#board-wrap");
  const w = Math.floor(wrap.clientWidth);
  const top = wrap.getBoundingClientRect().top + window.scrollY;
  if (hidden) {
    game.hidden = true;
    welcome.hidden = welcomeHidden;
    document.body.classList.toggle("has-game", !!G);
    if (kind === undefined) delete document.body.dataset.kind; else document.body.dataset.kind = kind;
  }
  return { w: Math.max(240, w), h: Math.max(300, Math.floor(window.innerHeight - top - 10)) };
}

function withBox(url) {
  box = boardBox();
  return `${url}${url.includes("?") ? "&" : "?"}w=${box.w}&h=${box.h}`;
}

function forget(v) {
  // the page leaves this game: the server need not keep it (keepalive: also while the page closes)
  if (v) fetch(`/api/session/${v.id}`, { method: "DELETE", keepalive: true }).catch(() => {});
}

function showError(msg) {
  const box = $("#error");
  box.textContent = msg || "";
  box.hidden = !msg;
}

function formOf(tab) { return $(`#form-${tab}`); }

function markField(form, field) {
  for (const el of $$(".invalid", form)) el.classList.remove("invalid");
  if (!field) return;
  const sel = field.startsWith("option:") ? `[data-option="${field.slice(7)}"]`
    : field === "seat" ? "select[name=seat]" : `select[name="${field}"]`;
  const el = $(sel, form);
  if (el) el.classList.add("invalid");
}

function showStartError(tab, msg, field) {
  // a refused start says why beside its Start button, whether or not a game is shown
  const form = formOf(tab);
  const box = $(".start-error", form);
  box.textContent = msg || "";
  box.hidden = !msg;
  markField(form, msg ? field : null);
}

let thinkingTimer = null;
function showThinking(text, where) {
  // shown only if the answer takes a moment (an agent searching, a network loading), so quick ones do not flicker
  clearTimeout(thinkingTimer);
  const boxes = [$("#thinking"), ...$$(".start-thinking")];
  if (!text) {
    for (const b of boxes) b.hidden = true;
    delete document.body.dataset.thinking;
    return;
  }
  const box = where === "game" ? $("#thinking") : $(".start-thinking", formOf(TAB));
  const label = where === "game" ? $("#thinking-text") : $(".text", box);
  thinkingTimer = setTimeout(() => {
    label.textContent = text;
    box.hidden = false;
    document.body.dataset.thinking = "true";
  }, THINKING_DELAY_MS);
}

function updateControls() {
  // while a request is under way, whatever would send another is disabled (Pause stays: it sends nothing)
  for (const b of $$("button.start, #step-controls button, #choices button, #moves button, #replay-list button")) {
    b.disabled = busy;
  }
  $("#ply-slider").disabled = busy;
  if (G) {
    $("#step").disabled = busy || G.over || running;
    $("#run").disabled = G.over && !running;
  }
  document.body.dataset.waiting = waiting ? "true" : "false";
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

function valueWords(v) { return v === true ? "yes" : v === false ? "no" : String(v); }

function optionBlock(o) {
  // the option in the game's words: its label, the field (checkbox, select, number with bounds, text), a help line
  const block = document.createElement("div");
  block.className = "option";
  block.dataset.name = o.name;
  const label = document.createElement("label");
  let field;
  if (o.kind === "bool") {
    block.classList.add("check");
    field = document.createElement("input");
    field.type = "checkbox";
    field.checked = o.default === true;
    label.append(field, ` ${o.label}`);
  } else {
    if (o.kind === "number") {
      field = document.createElement("input");
      field.type = "number";
      field.min = o.min; field.max = o.max; field.step = o.step;
      field.value = String(o.default);
      field.inputMode = "numeric";
    } else if (o.kind === "choice") {
      field = document.createElement("select");
      for (const v of o.values) field.add(new Option(valueWords(v), JSON.stringify(v)));
      field.value = JSON.stringify(o.default);
    } else {
      field = document.createElement("input");
      field.value = String(o.default);
      field.placeholder = o.allowed;
    }
    label.append(`${o.label} `, field);
  }
  field.dataset.option = o.name;
  field.dataset.kind = o.kind;
  label.title = `${o.name}: ${o.doc} (${o.allowed}; default ${valueWords(o.default)})`;
  const help = document.createElement("span");
  help.className = "help";
  help.textContent = o.kind === "number" ? `${o.help} (${o.rule})` : o.help;
  block.append(label, help);
  return block;
}

function optionValue(field) {
  if (field.type === "checkbox") return field.checked;
  if (field.tagName === "SELECT") return JSON.parse(field.value);
  if (field.type === "number") return /^-?\d+$/.test(field.value.trim()) ? parseInt(field.value, 10) : field.value;
  return parseValue(field.value);
}

function formOptions(form) {
  const options = {};
  for (const field of $$("[data-option]", form)) options[field.dataset.option] = optionValue(field);
  return options;
}

function formProblem(form) {
  // a number out of its bounds is named before anything is sent
  const game = gameById($("select[name=game]", form).value);
  for (const field of $$("input[data-kind=number]", form)) {
    const o = game.options.find(x => x.name === field.dataset.option);
    const v = optionValue(field);
    if (!Number.isInteger(v) || v < o.min || v > o.max || (v - o.min) % o.step !== 0) {
      return { message: `${o.label} must be ${o.rule}; ${field.value.trim() === "" ? "it is empty" : `not ${field.value.trim()}`}.`,
               field: `option:${o.name}` };
    }
  }
  return null;
}

function seatCount(form) {
  const game = gameById($("select[name=game]", form).value);
  const np = $("[data-option=num_players]", form);
  const n = np ? optionValue(np) : game.players;
  return Number.isInteger(n) && n > 0 && n <= 8 ? n : game.players;
}

function optionLabel(game, name) {
  const o = game.options.find(x => x.name === name);
  return o ? o.label : name;
}

function agentRefusal(game, name, options) {
  // why `name` does not play these options (the options it plays only: a network's training), or null
  const checkpoint = (game.checkpoints || []).find(c => c.value === name);
  const needs = checkpoint ? checkpoint.options : (game.agent_options || {})[name];
  if (!needs) return null;
  const differ = Object.entries(needs).filter(([k, v]) => options[k] !== v);
  if (!differ.length) return null;
  return `${game.id} only with ` + differ.map(([k, v]) => `${optionLabel(game, k)} set to ${valueWords(v)}`).join(" and ");
}

function defaultAgent(game, refused) {
  for (const a of ["greedy", "random", ...game.agents]) if (game.agents.includes(a) && !refused[a]) return a;
  return "random";
}

function agentSelect(game, seat, keep, refused) {
  // the agent plugins' names for this game (those that cannot play these options greyed out), then the checkpoints
  const sel = document.createElement("select");
  sel.name = `agent-${seat}`;
  const named = document.createElement("optgroup");
  named.label = "agents";
  for (const a of game.agents) {
    const opt = new Option(refused[a] ? `${a} (not for these options)` : a, a);
    if (refused[a]) { opt.disabled = true; opt.title = `${a} plays ${refused[a]}`; }
    named.append(opt);
  }
  sel.append(named);
  // the checkpoints trained for this game, each offered for the options it was trained with
  const checkpoints = game.checkpoints || [];
  if (checkpoints.length) {
    const files = document.createElement("optgroup");
    files.label = `checkpoints in ${CATALOG.runs}`;
    for (const c of checkpoints) {
      const why = refused[c.value];
      const opt = new Option(why ? `${c.label} (not for these options)` : c.label, c.value);
      if (why) { opt.disabled = true; opt.title = `it plays ${why}`; }
      files.append(opt);
    }
    sel.append(files);
  }
  const all = [...game.agents, ...checkpoints.map(c => c.value)].filter(a => !refused[a]);
  sel.value = keep && all.includes(keep) ? keep : defaultAgent(game, refused);
  sel.addEventListener("change", () => markField(sel.closest("form, section"), null));
  return sel;
}

function buildAgents(form) {
  const game = gameById($("select[name=game]", form).value);
  const n = seatCount(form);
  const first = game.first_player;
  $(".first-player", form).textContent = first === null
    ? "Who moves first is drawn for each game."
    : `player_${first} moves first.`;
  const seatSel = $("select[name=seat]", form);
  let human = null;
  if (seatSel) {
    const old = seatSel.value;
    seatSel.innerHTML = "";
    for (let s = 0; s < n; s++) seatSel.add(new Option(`player_${s}${s === first ? " (moves first)" : ""}`, String(s)));
    if (old && Number(old) < n) seatSel.value = old;
    human = Number(seatSel.value);
  }
  const options = formOptions(form);
  const refused = {};
  for (const a of [...game.agents, ...(game.checkpoints || []).map(c => c.value)]) {
    const why = agentRefusal(game, a, options);
    if (why) refused[a] = why;
  }
  const note = $(".agents-note", form);
  const byReason = {};  // agents refused for the same reason are named together (checkpoints only in their list)
  for (const [a, why] of Object.entries(refused)) if (game.agents.includes(a)) (byReason[why] = byReason[why] || []).push(a);
  note.textContent = Object.entries(byReason).map(([why, names]) => names.length === 1
    ? `${names[0]} is not offered here: it plays ${why}.`
    : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]} are not offered here: they play ${why}.`).join(" ");
  note.hidden = !Object.keys(byReason).length;
  const box = $(".agents", form);
  const keep = {};
  for (const s of $$("select", box)) keep[s.name] = s.value;
  box.innerHTML = "";
  for (let s = 0; s < n; s++) {
    const label = document.createElement("label");
    label.textContent = `player_${s} `;
    if (s === human) {
      const you = document.createElement("b");
      you.textContent = "you";
      label.append(you);
    } else {
      label.append(agentSelect(game, s, keep[`agent-${s}`], refused));
    }
    box.append(label);
  }
}

function rulesText(box, text) {
  // the game's "Rules in short": paragraphs, **bold** and *italics* kept, `code` marks dropped
  box.innerHTML = "";
  for (const para of text.split(/\n\s*\n/)) {
    const p = document.createElement("p");
    const flat = para.replace(/`+/g, "").replace(/\s*\n\s*/g, " ");
    let at = 0;
    for (const m of flat.matchAll(/\*\*(.+?)\*\*|\*([^*\s][^*]*?)\*/g)) {
      p.append(flat.slice(at, m.index));
      const el = document.createElement(m[1] !== undefined ? "b" : "i");
      el.textContent = m[1] !== undefined ? m[1] : m[2];
      p.append(el);
      at = m.index + m[0].length;
    }
    p.append(flat.slice(at));
    box.append(p);
  }
}

function buildForm(form) {
  const gameSel = $("select[name=game]", form);
  gameSel.innerHTML = "";
  for (const g of CATALOG.games) gameSel.add(new Option(g.id, g.id));
  const refresh = () => {
    const game = gameById(gameSel.value);
    const box = $(".options", form);
    box.innerHTML = "";
    for (const o of game.options) {
      const block = optionBlock(o);
      const field = $("[data-option]", block);
      // typed numbers count as they are typed: the agents offered follow before Start is clicked
      field.addEventListener(field.tagName === "INPUT" && field.type !== "checkbox" ? "input" : "change",
        () => { markField(form, null); buildAgents(form); });
      box.append(block);
    }
    rulesText($(".rules-text", form), game.rules);
    $(".rules summary", form).textContent = `Rules of ${game.id} in short`;
    $(".rules-link", form).href = `/rules/${game.id}`;
    buildAgents(form);
  };
  gameSel.addEventListener("change", () => { showStartError(form.id.replace("form-", ""), ""); refresh(); });
  const seatSel = $("select[name=seat]", form);
  if (seatSel) seatSel.addEventListener("change", () => buildAgents(form));
  refresh();
}

function formRequest(form) {
  const options = formOptions(form);
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
  sel.innerHTML = "";
  sel.add(new Option("full view (hidden cards shown)", "all"));
  for (const p of v.players) sel.add(new Option(`${p.name} (${p.agent})`, String(p.seat)));
}

function stepsShown(v) {
  // watched and replayed games step at any time; a played game once it is over
  return v.kind !== "play" || v.finished;
}

function clearGame() {
  // the tab has no game: nothing of another tab's game stays on the page
  $("#game").hidden = true;
  document.body.classList.remove("has-game", "side-open");
  $("#welcome").hidden = TAB === "replay";
  for (const id of ["#board", "#choices", "#moves", "#log", "#players"]) $(id).innerHTML = "";
  $("#status").textContent = "";
  $("#result").hidden = true;
  for (const k of ["kind", "ply", "plies", "over", "yourTurn", "first"]) delete document.body.dataset[k];
}

function render(v, keepPath = false) {
  // keepPath: the same position drawn again (for another box): a card chosen stays chosen
  const fresh = !G || G.id !== v.id;
  G = v;
  GAMES[TAB] = v;
  if (fresh || !keepPath) path = [];
  document.body.classList.add("has-game");
  document.body.dataset.kind = v.kind;
  document.body.dataset.ply = v.ply;
  document.body.dataset.plies = v.plies;
  document.body.dataset.over = v.over && v.ply === v.plies ? "true" : "false";
  document.body.dataset.yourTurn = v.your_turn ? "true" : "false";
  document.body.dataset.first = v.first;
  $("#game").hidden = false;
  $("#welcome").hidden = true;
  if (fresh) buildViewSelect(v);
  $("#view").value = v.full_view ? "all" : String(v.seat);
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
  const players = $("#players");
  players.innerHTML = "";
  for (const p of v.players) {
    const span = document.createElement("span");
    span.className = "player" + (p.first ? " first" : "");
    span.dataset.seat = p.seat;
    span.textContent = `${p.name}: ${p.you ? "you" : p.agent}${p.first ? " (moves first)" : ""}`;
    players.append(span);
  }
  $("#status").textContent = v.status;
  showResult(v);
  $("#game-rules").href = `/rules/${v.game}`;
  $("#game-rules").textContent = `rules of ${v.game}`;
  $("#view-control").hidden = v.kind === "play";
  $("#step-controls").hidden = !stepsShown(v);
  $("#watch-controls").hidden = v.kind !== "watch";
  const slider = $("#ply-slider");
  slider.max = v.plies;
  slider.value = v.ply;
  $("#run").textContent = running ? "Pause" : "Run";

  // the table and its targets
  const hadFocus = boardHasFocus();
  drawBoard(v);
  // the log is as tall as the table beside it (at least 300 px), and scrolls inside
  const height = Math.max(300, Math.round($("#board").getBoundingClientRect().height));
  $("#table-row").style.setProperty("--board-height", `${height}px`);

  // the narration
  const log = $("#log");
  log.innerHTML = "";
  if (fresh) seenPlies = v.kind === "play" ? 0 : v.log.length;
  for (const e of v.log) {
    const li = document.createElement("li");
    li.textContent = `${e.who}: ${e.text}`;
    if (e.ply > seenPlies && !(v.kind === "play" && e.who === "you")) li.className = "new";
    if (stepsShown(v) && e.ply === v.ply) li.classList.add("current");
    log.append(li);
  }
  seenPlies = Math.max(seenPlies, v.log.length);
  followLog();

  // every legal move as a list too (only while there are moves to make)
  const moves = $("#moves");
  moves.innerHTML = "";
  for (const m of v.moves) moves.append(moveButton(m));
  $("#moves-box").hidden = v.kind !== "play" || !v.moves.length;
  if (fresh || !keepPath) say("");
  refreshTargets();
  updateControls();
  if (hadFocus) focusBoard();
}

function drawBoard(v) {
  // the server's SVG at its own size (larger where the window has room), the targets laid over it
  const board = $("#board");
  board.innerHTML = v.svg;
  const svg = $("svg.table", board);
  const wide = !window.matchMedia("(max-width: 760px)").matches;
  const wrap = $("#board-wrap");
  const roomH = window.innerHeight - (wrap.getBoundingClientRect().top + window.scrollY) - 10;
  let scale = Math.min(MAX_SCALE, wrap.clientWidth / v.width, wide ? roomH / v.height : MAX_SCALE);
  scale = Math.max(1, scale);
  svg.setAttribute("width", Math.round(v.width * scale));
  svg.setAttribute("height", Math.round(v.height * scale));
  board.dataset.scale = scale.toFixed(3);
  const overlay = document.createElementNS(SVGNS, "svg");
  overlay.setAttribute("class", "targets");
  overlay.setAttribute("viewBox", `0 0 ${v.width} ${v.height}`);
  overlay.setAttribute("role", "group");
  overlay.setAttribute("aria-label", "the table: arrow keys move between your cards and places, Enter or Space chooses");
  overlay.addEventListener("keydown", boardKey);
  const seen = new Map();  // a box drawn for two names (walls: your wall is also a wall of its colour): one focus stop
  const rects = [];
  for (const [key, boxes] of Object.entries(v.targets)) {
    boxes.forEach(([x, y, w, h], i) => {
      const r = document.createElementNS(SVGNS, "rect");
      r.setAttribute("class", "target");
      r.setAttribute("x", x); r.setAttribute("y", y); r.setAttribute("width", w); r.setAttribute("height", h);
      r.setAttribute("rx", 4);
      r.setAttribute("role", "button");
      r.dataset.key = key;
      r.dataset.label = ((v.labels || {})[key] || [])[i] || key;
      const where = `${x},${y},${w},${h}`;
      if (seen.has(where)) r.classList.add("dup");
      else seen.set(where, r);
      r.addEventListener("click", () => activate(r));
      r.addEventListener("focus", () => { focusKey = r.dataset.key; roving(r); });
      rects.push(r);
    });
  }
  // reading order (top to bottom, then left to right): the order of Tab and of the arrow keys' fallback
  rects.sort((a, b) => (num(a, "y") - num(b, "y")) || (num(a, "x") - num(b, "x")));
  for (const r of rects) overlay.append(r);
  board.append(overlay);
}

function num(r, attr) { return Number(r.getAttribute(attr)); }

function stops() { return $$("#board rect.target:not(.dup)"); }

function boardHasFocus() {
  const a = document.activeElement;
  return !!a && (a.closest("#board") !== null || a.closest("#choices") !== null || a.closest("#moves") !== null);
}

function roving(r) {
  // one tab stop on the board: the target last focused
  for (const x of stops()) x.setAttribute("tabindex", x === r ? "0" : "-1");
}

function bestStop() {
  // where focus goes on the board: the target focused before if it still plays, else the first that plays
  const all = stops();
  const live = all.filter(r => sameBox(r).some(x => x.classList.contains("live")));
  const before = all.find(r => r.dataset.key === focusKey);
  if (before && live.includes(before)) return before;
  return live[0] || before || all[0] || null;
}

function focusBoard(scroll = false) {
  const r = bestStop();
  if (r) { roving(r); r.focus({ preventScroll: !scroll }); }
  else $("#board").focus({ preventScroll: !scroll });
}

function afterStart() {
  // focus on the board once a game is shown; on a phone the form folds away and the game comes into view
  document.body.classList.remove("side-open");
  $("#side-toggle").setAttribute("aria-expanded", "false");
  const top = $("#game").getBoundingClientRect().top;
  if (top < 0 || top > window.innerHeight * 0.5) $("#game").scrollIntoView({ block: "start" });
  focusBoard();
}

function sameBox(r) {
  // the targets drawn on the box of `r` (one, or two where a place has two names)
  const where = ["x", "y", "width", "height"].map(a => r.getAttribute(a)).join(",");
  return $$("#board rect.target").filter(x => ["x", "y", "width", "height"].map(a => x.getAttribute(a)).join(",") === where);
}

function boardKey(e) {
  const r = e.target.closest("rect.target");
  if (!r) return;
  const all = stops();
  const at = all.indexOf(r.classList.contains("dup") ? sameBox(r)[0] : r);
  let next = null;
  if (e.key === "Enter" || e.key === " ") { e.preventDefault(); activate(r); return; }
  if (e.key === "Escape") { e.preventDefault(); if (path.length) { path = []; refreshTargets(); say("choice undone"); } return; }
  if (e.key === "Home") next = all[0];
  else if (e.key === "End") next = all[all.length - 1];
  else if (e.key === "ArrowRight") next = all[Math.min(all.length - 1, at + 1)];
  else if (e.key === "ArrowLeft") next = all[Math.max(0, at - 1)];
  else if (e.key === "ArrowUp" || e.key === "ArrowDown") next = nearest(r, all, e.key === "ArrowUp" ? -1 : 1);
  else return;
  e.preventDefault();
  e.stopPropagation();
  if (next && next !== r) { roving(next); next.focus(); }
}

function nearest(r, all, dir) {
  // the target above (dir -1) or below (+1) whose middle is closest, sideways counting double
  const c = rectCentre(r);
  let best = null, bestScore = Infinity;
  for (const x of all) {
    const d = rectCentre(x);
    const dy = (d.y - c.y) * dir;
    if (dy <= 4) continue;
    const score = dy + 2 * Math.abs(d.x - c.x);
    if (score < bestScore) { best = x; bestScore = score; }
  }
  return best;
}

function rectCentre(r) {
  return { x: num(r, "x") + num(r, "width") / 2, y: num(r, "y") + num(r, "height") / 2 };
}

function say(text, refused = false) {
  // one line under the choices, read out by screen readers (aria-live): a refusal, or what to choose next
  const note = $("#note");
  note.textContent = text;
  note.classList.toggle("refused", refused && !!text);
}

function followLog() {
  // the log follows the game inside its own box (scrollIntoView would scroll the window too)
  const log = $("#log");
  const current = $("#log li.current");
  if (!current) { log.scrollTop = log.scrollHeight; return; }
  const top = current.offsetTop, bottom = top + current.offsetHeight;
  if (top < log.scrollTop) log.scrollTop = top;
  else if (bottom > log.scrollTop + log.clientHeight) log.scrollTop = bottom - log.clientHeight;
}

function showResult(v) {
  // at the end: the game's own result (points, the tie-break that decided) beside the reward the env pays
  const box = $("#result");
  box.hidden = !(v.over && v.result);
  if (box.hidden) return;
  $("#result-text").textContent = `Result: ${v.result.text}.`;
  const rule = v.result.reward_rule ? ` (${v.result.reward_rule})` : "";
  $("#reward-text").textContent = `Reward the environment pays, not the game's points: ${v.result.reward}${rule}.`;
}

function show(v, tab) {
  // a view of the game of `tab` arrived: kept for that tab, drawn if that tab is shown
  GAMES[tab] = v;
  if (tab === TAB) render(v);
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
  const moves = G.your_turn && !waiting ? G.moves : [];
  const next = new Set();
  for (const m of moves) if (m.keys.length > path.length && startsWith(m.keys, path)) next.add(m.keys[path.length]);
  for (const r of $$("#board rect.target")) {
    const key = r.dataset.key;
    const chosen = path.includes(key);
    const live = next.has(key) && !chosen;
    r.classList.toggle("chosen", chosen);
    r.classList.toggle("live", live);
    r.setAttribute("aria-label", `${r.dataset.label}${chosen ? ", chosen" : live ? "" : ", not a move now"}`);
    r.setAttribute("aria-disabled", live || chosen ? "false" : "true");
  }
  for (const r of stops()) if (!r.hasAttribute("tabindex")) r.setAttribute("tabindex", "-1");
  const first = bestStop();
  if (first && !stops().some(r => r.getAttribute("tabindex") === "0")) roving(first);
  const choices = $("#choices");
  choices.innerHTML = "";
  if (!G.your_turn || waiting) return;
  const exact = path.length ? moves.filter(m => m.keys.length === path.length && startsWith(m.keys, path)) : [];
  const buttons = moves.filter(m => m.keys.length === 0);
  const span = document.createElement("span");
  span.className = "label";
  span.textContent = path.length ? (exact.length ? "choose:" : "now choose where it goes:")
    : next.size ? "choose a highlighted card" : "choose a move:";
  choices.append(span);
  for (const m of [...exact, ...buttons]) choices.append(moveButton(m));
  if (path.length) {
    const cancel = document.createElement("button");
    cancel.id = "cancel";
    cancel.textContent = "cancel";
    cancel.addEventListener("click", () => { path = []; refreshTargets(); say("choice undone"); });
    choices.append(cancel);
  }
}

function labelOf(key) {
  const r = $$("#board rect.target").find(x => x.dataset.key === key);
  return r ? r.dataset.label : key;
}

function activate(r) {
  // a target chosen by click, tap, Enter or Space: where two names share its box, the one that plays now
  const keys = sameBox(r).map(x => x.dataset.key);
  const live = sameBox(r).find(x => x.classList.contains("live") || x.classList.contains("chosen"));
  choose(live ? live.dataset.key : r.dataset.key);
}

function choose(key) {
  if (!G || G.kind !== "play") return;
  if (G.over) { say("the game is over: step back through it, or start a new one", true); return; }
  if (waiting || busy) { say(thinkingOf(G), true); return; }
  if (!G.your_turn) { say(`it is not your turn: ${G.status}`, true); return; }
  if (path.includes(key)) {
    path = path.slice(0, path.indexOf(key));
    refreshTargets();
    say(`${labelOf(key)}: choice undone`);
    return;
  }
  const fits = keys => ({
    longer: G.moves.filter(m => m.keys.length > keys.length && startsWith(m.keys, keys)),
    exact: G.moves.filter(m => m.keys.length === keys.length && startsWith(m.keys, keys)),
  });
  let next = [...path, key];
  let f = fits(next);
  if (!f.longer.length && !f.exact.length && path.length) {
    const again = fits([key]);  // another card instead of a place: start again from it
    if (again.longer.length || again.exact.length) { next = [key]; f = again; }
  }
  if (!f.longer.length && !f.exact.length) {
    const why = path.length ? (G.hints || {})[path[0]] : (G.refusals || {})[key];
    say(why || "that is not a move now: choose a highlighted card or place", true);
    return;
  }
  path = next;
  if (f.exact.length === 1 && !f.longer.length) { sendMove(f.exact[0].action); return; }
  refreshTargets();
  say(f.longer.length ? `${labelOf(key)} chosen: now where it goes` : `${labelOf(key)} chosen: how many? (buttons above)`);
  const live = stops().find(r => sameBox(r).some(x => x.classList.contains("live")));
  if (live && boardHasFocus()) { roving(live); live.focus({ preventScroll: true }); }
}

function viewUrl(v, ply) {
  const seat = v.kind === "play" ? "" : `seat=${v.full_view ? "all" : v.seat}&`;
  return withBox(`/api/session/${v.id}?${seat}ply=${ply === undefined ? v.plies : ply}`);
}

async function request(fn, thinking, where = "game") {
  // one request at a time; its answer goes to the tab that asked, even if another tab is shown by then.
  // `where`: "form" for starts (progress and refusal beside Start), "game" for moves and steps
  if (busy) return;
  busy = true;
  const tab = TAB;
  document.body.dataset.busy = "true";
  updateControls();
  showThinking(thinking || "", where);
  try {
    if (where === "form") showStartError(tab, ""); else showError("");
    await fn(tab);
  } catch (e) {
    if (where === "form") showStartError(tab, e.message, e.field);
    else if (tab === TAB) showError(e.message);
    if (waiting) { waiting = false; if (G) { $("#status").textContent = G.status; refreshTargets(); } }
    if (e.status === 409 && GAMES[tab]) {
      try { show(await api("GET", viewUrl(GAMES[tab])), tab); } catch (e2) { /* keep the message */ }
    }
  } finally {
    showThinking("");
    busy = false;
    waiting = false;
    document.body.dataset.busy = "false";
    updateControls();
  }
}

function thinkingOf(v) {
  const others = v.players.filter(p => !p.you);
  if (others.length === 1) return `${others[0].name} (${others[0].agent}) is thinking…`;
  const names = [...new Set(others.map(p => p.agent))];
  return `the others (${names.join(", ")}) are thinking…`;
}

function sendMove(action) {
  const v = G;
  if (busy || waiting) return Promise.resolve();
  // from now until the answer: the status says the agents are thinking and the cards are not clickable
  const a = document.activeElement;
  if (a && (a.closest("#choices") || a.closest("#moves"))) $("#board").focus({ preventScroll: true });  // its button goes
  waiting = true;
  path = [];
  $("#status").textContent = thinkingOf(v);
  refreshTargets();
  updateControls();
  return request(async tab => {
    const next = await api("POST", withBox(`/api/session/${v.id}/move`), { action, ply: v.plies });
    waiting = false;
    show(next, tab);
  }, thinkingOf(v));
}

function showPly(ply) {
  if (!G || !stepsShown(G)) return Promise.resolve();
  const v = G;
  const p = Math.max(0, Math.min(v.plies, ply));
  const url = withBox(v.kind === "play" ? `/api/session/${v.id}?ply=${p}` : `/api/session/${v.id}?seat=${viewSeat()}&ply=${p}`);
  return request(async tab => show(await api("GET", url), tab));
}

function stepOnce() {
  const v = G;
  const mover = v.players[v.to_move];
  return request(async tab => show(await api("POST", withBox(`/api/session/${v.id}/step?seat=${viewSeat()}`), { ply: v.plies }), tab),
    mover ? `${mover.name} (${mover.agent}) is thinking…` : "");
}

const sleep = ms => new Promise(r => setTimeout(r, ms));

async function runWatch() {
  if (running) { running = false; render(G); return; }
  running = true;
  render(G);
  while (running && TAB === "watch" && G && !G.over) {
    await stepOnce();
    if (!$("#error").hidden) break;
    await sleep(Number($("#speed").value));
  }
  running = false;
  if (TAB === "watch" && G) render(G);
}

async function redrawForBox() {
  if (!G || busy || !box) return;
  const now = boardBox();
  if (Math.abs(now.w - box.w) < 8 && Math.abs(now.h - box.h) < 40) return;
  const v = G, tab = TAB;
  try {
    const again = await api("GET", viewUrl(v, v.ply));
    if (GAMES[tab] === v && TAB === tab && !busy) { GAMES[tab] = again; render(again, true); }
  } catch (e) { /* the next move draws it again */ }
}

function startingText(kind, body) {
  if (kind === "replay") return "opening the recorded game…";
  const agents = [...new Set((body.agents || []).filter(a => a))];
  return `starting: dealing, and getting ${agents.join(", ")} ready…`;
}

function start(kind, body) {
  running = false;
  return request(async tab => {
    const v = await api("POST", withBox(`/api/${kind}`), body);
    const old = GAMES[tab];
    if (old && old.id !== v.id) forget(old);  // the new game replaces it in this tab
    if (tab === TAB) G = null;
    show(v, tab);
    if (tab === TAB) afterStart();
  }, startingText(kind, body), "form");
}

function startForm(kind) {
  const form = formOf(kind);
  const problem = formProblem(form);
  if (problem) { showStartError(kind, problem.message, problem.field); return Promise.resolve(); }
  return start(kind, formRequest(form));
}

function switchTab(tab) {
  if (tab === TAB) return;
  running = false;
  TAB = tab;
  for (const b of $$("#tabs button")) b.classList.toggle("active", b.dataset.tab === tab);
  for (const f of TABS) $(`#form-${f}`).hidden = f !== tab;
  showError("");
  path = [];
  G = null;
  if (GAMES[tab]) render(GAMES[tab]);
  else clearGame();
  if (tab === "replay") loadReplays().catch(e => showStartError("replay", e.message));
}

async function init() {
  CATALOG = await api("GET", "/api/games");
  $("#runs-dir").textContent = CATALOG.runs;
  buildForm($("#form-play"));
  buildForm($("#form-watch"));
  for (const b of $$("#tabs button")) b.addEventListener("click", () => switchTab(b.dataset.tab));
  $("#start-play").addEventListener("click", () => startForm("play"));
  $("#start-watch").addEventListener("click", () => startForm("watch"));
  $("#replay-filter").addEventListener("input", () => loadReplays().catch(e => showStartError("replay", e.message)));
  $("#view").addEventListener("change", () => showPly(G.ply));
  $("#first").addEventListener("click", () => showPly(0));
  $("#prev").addEventListener("click", () => showPly(G.ply - 1));
  $("#next").addEventListener("click", () => showPly(G.ply + 1));
  $("#last").addEventListener("click", () => showPly(G.plies));
  $("#ply-slider").addEventListener("change", e => showPly(Number(e.target.value)));
  $("#step").addEventListener("click", stepOnce);
  $("#side-toggle").addEventListener("click", () => {
    const open = document.body.classList.toggle("side-open");
    $("#side-toggle").setAttribute("aria-expanded", open ? "true" : "false");
  });
  let resizing = null;
  window.addEventListener("resize", () => {
    // the board is drawn again for its new box (a phone turned, a window resized), the choice in hand kept
    clearTimeout(resizing);
    resizing = setTimeout(redrawForBox, 250);
  });
  $("#run").addEventListener("click", runWatch);
  document.addEventListener("keydown", e => {
    if (!G || !stepsShown(G) || ["INPUT", "SELECT"].includes(e.target.tagName) || e.target.closest("#board")) return;
    if (e.key === "ArrowLeft") showPly(G.ply - 1);
    if (e.key === "ArrowRight") showPly(G.ply + 1);
  });
  window.addEventListener("pagehide", () => { for (const t of TABS) forget(GAMES[t]); });
  document.body.dataset.ready = "true";
}

init().catch(e => showStartError("play", `cannot load the game list: ${e.message}; reload the page`));

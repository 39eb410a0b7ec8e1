// The page of `yahtzee serve`. It only shows the server's state and sends intents; the
// server (yahtzee_env/web) checks every move with the engine and computes every score.
// Names and other text from the server are always set with textContent, never as markup.
"use strict";

const BOXES = ["aces", "twos", "threes", "fours", "fives", "sixes", "three_of_a_kind",
  "four_of_a_kind", "full_house", "small_straight", "large_straight", "yahtzee", "chance"];
const LABELS = ["Aces", "Twos", "Threes", "Fours", "Fives", "Sixes", "3 of a kind",
  "4 of a kind", "Full house", "Sm. straight", "Lg. straight", "Yahtzee", "Chance"];
const params = new URLSearchParams(location.search);
const PACE = params.has("pace") ? Math.max(0, Number(params.get("pace")) || 0) : 650;
const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, text) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = String(text);
  return node;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------ browser storage
const store = {
  get(key, fallback) {
    try { return JSON.parse(localStorage.getItem(key)) ?? fallback; } catch { return fallback; }
  },
  set(key, value) { localStorage.setItem(key, JSON.stringify(value)); },
};
const myTables = () => store.get("yz.tables", {});
function rememberTable(code, tokens) {
  const tables = myTables();
  const entry = tables[code] || { tokens: {} };
  Object.assign(entry.tokens, tokens);
  entry.updated = Date.now();
  tables[code] = entry;
  store.set("yz.tables", tables);
}

// Every request of the page goes through `api`: a timeout, retries of requests that are
// safe to repeat (reads, and moves: the server refuses a move made from a state it has left,
// code "stale_seq"), and errors that carry the server's machine `code`.
const FETCH_TIMEOUT_MS = 10000;
class ApiError extends Error {
  constructor(message, status, code) { super(message); this.status = status; this.code = code; }
}
async function api(path, body, { retries = 2, timeout = FETCH_TIMEOUT_MS } = {}) {
  const opts = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  for (let attempt = 0; ; attempt++) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeout);
    let response, data;
    try {
      response = await fetch(path, { ...opts, signal: abort.signal });
      try { data = await response.json(); } catch { data = { error: `server error ${response.status}` }; }
    } catch {
      clearTimeout(timer);
      if (attempt < retries) { await sleep(500 * 2 ** attempt); continue; }
      setConnection("reconnecting");
      throw new ApiError("no answer from the server: check your connection (retrying)", 0, "network");
    }
    clearTimeout(timer);
    if (response.status === 503 && attempt < retries) { await sleep(500 * 2 ** attempt); continue; }
    if (T.netError) { T.netError = false; setError(""); }  // the server answers again
    if (!response.ok) throw new ApiError(data.error || `server error ${response.status}`, response.status, data.code);
    return data;
  }
}

// The banner over the page while live updates are down: "reconnecting" while the socket
// is (a retry is on its way), "polling" when the server refused it (the page asks for the
// table's state every few seconds instead).
function setConnection(state, text) {
  const banner = $("connection");
  if (!banner) return;
  banner.dataset.state = state;
  banner.hidden = state === "online";
  banner.textContent = text || (state === "reconnecting" ? "Connection lost: reconnecting…" : "");
}

// The second press of a double click or double tap (the browser counts them in
// `event.detail`) is not a second intent, even when the first already has its answer.
function pressOnce(work) {
  return (event) => { if (!(event && event.detail > 1)) work(); };
}

// Buttons that start a request stay disabled until it has its answer (no double submits).
async function whileBusy(ids, work) {
  const buttons = ids.map((id) => $(id)).filter((b) => b && !b.disabled);
  if (buttons.length < ids.length) return;
  buttons.forEach((b) => { b.disabled = true; });
  try { await work(); } finally { buttons.forEach((b) => { b.disabled = false; }); }
}

async function ensurePlayer(name) {
  let player = store.get("yz.player", null);
  if (!player) {
    player = await api("/api/players", { name: name || "You" }, { retries: 0 });
    store.set("yz.player", player);
  }
  return player;
}

// ------------------------------------------------------------------ lobby
let config = { levels: ["easy", "medium", "hard"], rules: ["official"] };

function seatOptions(i) {
  if (i === 0) return [["human", "You"]];
  return [["friend", "A friend (online)"], ["human", "Another player here"],
    ...config.levels.map((lv) => [lv, `Computer: ${lv}`])];
}

function renderSeatKinds() {
  const box = $("seat-kinds");
  const previous = [...box.querySelectorAll("select")].map((s) => s.value);
  box.querySelectorAll(".row").forEach((r) => r.remove());
  const defaults = ["human", "medium", "easy", "hard"];
  for (let i = 0; i < Number($("seats").value); i++) {
    const row = el("div", { class: "row" });
    const id = `seat-kind-${i}`;
    row.append(el("label", { for: id }, `Seat ${i + 1}`));
    const select = el("select", { id, "data-testid": id });
    for (const [value, label] of seatOptions(i)) select.append(el("option", { value }, label));
    select.value = previous[i] || (config.levels.includes(defaults[i]) ? defaults[i] : select.options[0].value);
    if (i === 0) select.disabled = true;
    row.append(select);
    box.append(row);
  }
}

function lobbyChoices(online) {
  const seats = [...$("seat-kinds").querySelectorAll("select")].map((s) => s.value);
  return {
    name: $("name").value, seats, online, rules: $("rules").value, fill: $("fill").value,
    match: $("match").checked, coach: $("coach").checked,
  };
}

async function createTable(online) {
  $("lobby-error").textContent = "";
  try {
    const choices = lobbyChoices(online);
    if (!online && choices.seats.includes("friend")) {
      throw new Error("friends join online tables: press Create online table, or pick the computer for their seats");
    }
    const player = await ensurePlayer(choices.name);
    const reply = await api("/api/tables", { ...choices, player: player.token }, { retries: 0 });
    rememberTable(reply.code, reply.tokens);
    go(`/t/${reply.code}`);
  } catch (err) {
    $("lobby-error").textContent = err.message;
  }
}

async function joinTable() {
  $("lobby-error").textContent = "";
  try {
    const code = $("join-code").value.trim().toUpperCase().replace(/[\s-]/g, "");
    if (!code) throw new Error("type the table code first");
    const mine = myTables()[code];
    if (mine && Object.keys(mine.tokens).length) { go(`/t/${code}`); return; }
    const player = await ensurePlayer($("name").value);
    const reply = await api(`/api/tables/${encodeURIComponent(code)}/join`, { name: $("name").value, player: player.token }, { retries: 0 });
    rememberTable(code, { [reply.seat]: reply.token });
    go(`/t/${code}`);
  } catch (err) {
    $("lobby-error").textContent = err.message;
  }
}

function renderMyTables() {
  const list = $("my-tables");
  list.replaceChildren();
  const entries = Object.entries(myTables()).sort((a, b) => b[1].updated - a[1].updated).slice(0, 10);
  if (!entries.length) list.append(el("li", {}, "none yet"));
  for (const [code] of entries) {
    const li = el("li");
    li.append(el("a", { href: `/t/${code}` }, code));
    list.append(li);
  }
}

async function showLobby() {
  const player = store.get("yz.player", null);
  if (player) $("name").value = player.name;
  try { config = await api("/api/config"); } catch { /* keep the defaults */ }
  const rules = $("rules"), fill = $("fill");
  rules.replaceChildren(...config.rules.map((r) => el("option", { value: r }, r)));
  fill.replaceChildren(...config.levels.map((lv) => el("option", { value: lv }, lv)));
  fill.value = config.levels.includes("medium") ? "medium" : config.levels[0];
  renderSeatKinds();
  renderMyTables();
  const join = params.get("join");
  if (join) $("join-code").value = join;
}

// ------------------------------------------------------------------ the table
const T = {
  code: null, state: null, version: [-1, -1], held: new Set(), selected: null,
  queue: Promise.resolve(), animating: false, socket: null, retry: 0, hint: null,
  busy: false, netError: false, poll: null,
};
const mySeats = () => Object.keys((myTables()[T.code] || { tokens: {} }).tokens).map(Number);
const tokenOf = (seat) => (myTables()[T.code] || { tokens: {} }).tokens[seat];
const isMine = (seat) => mySeats().includes(seat);
const myTurn = () => T.state && T.state.started && !T.state.over && isMine(T.state.current) && !T.animating && !T.busy;
const newer = (a, b) => a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1]);

function setStatus(text) { $("status").textContent = text; }
function setError(text) { $("error").textContent = text || ""; }
function showFailure(err) {  // a network failure clears itself once the server answers again
  T.netError = err.code === "network";
  setError(err.message);
}

function showDice(dice, held, kept) {
  for (let i = 0; i < 5; i++) {
    const die = document.querySelector(`[data-testid="die-${i}"]`);
    const value = dice && dice.length ? String(dice[i]) : "";
    die.dataset.value = value;
    die.textContent = value ? "⚀⚁⚂⚃⚄⚅"[dice[i] - 1] : "";
    die.dataset.held = String(held.has(i));
    die.classList.toggle("kept", Boolean(kept && kept.includes(i)));
    const state = held.has(i) ? "held" : "not held";
    die.setAttribute("aria-label", value ? `die ${i + 1}: ${value}, ${state}` : `die ${i + 1}: not rolled`);
    die.setAttribute("aria-pressed", String(held.has(i)));
  }
}

function rollDice(positions) {
  for (const i of positions) {
    const die = document.querySelector(`[data-testid="die-${i}"]`);
    die.classList.remove("rolling"); void die.offsetWidth; die.classList.add("rolling");
  }
}

// One animated move of someone else (a CPU or another player).
async function animate(event, state) {
  if (PACE === 0) { setStatus(event.text); return; }
  if (event.type === "roll") {
    showDice(event.dice_before, new Set(), event.kept);
    setStatus(event.text.split(":")[0]);
    await sleep(PACE);
    showDice(event.dice, new Set(), event.kept);
    rollDice([0, 1, 2, 3, 4].filter((i) => !event.kept.includes(i)));
    setStatus(event.text);
    await sleep(PACE);
  } else {
    showDice(event.dice_before, new Set(), []);
    const cell = document.querySelector(`[data-testid="box-${event.seat}-${event.box}"]`);
    setStatus(event.text);
    if (cell) { cell.textContent = event.points; cell.classList.add("scored-now"); }
    await sleep(PACE * 1.2);
  }
}

function receive(state) {
  T.queue = T.queue.then(() => apply(state)).catch((err) => setError(err.message));
  return T.queue;
}

async function apply(state) {
  if (state.code !== T.code || !newer(state.version, T.version)) return;
  const previous = T.state;
  const sameGame = previous && previous.game === state.game;
  const fresh = (state.events || []).filter((e) => !sameGame || e.seq >= previous.seq);
  const others = fresh.filter((e) => !isMine(e.seat));
  if (previous && others.length && PACE > 0) {
    T.animating = true;
    render(previous, { lock: true });
    for (const event of fresh) {
      if (isMine(event.seat)) { setStatus(event.text); continue; }
      await animate(event, state);
    }
    T.animating = false;
  }
  T.version = state.version;
  const newTurn = !previous || previous.current !== state.current || previous.game !== state.game ||
    previous.seq !== state.seq;
  if (newTurn) { T.held = new Set(state.held || []); T.selected = null; T.hint = null; }
  T.state = state;
  render(state);
  $("table").dataset.version = state.version.join(":");  // for test scripts: a new state
  if (fresh.length) setStatus(fresh[fresh.length - 1].text);
  else if (!previous) setStatus(describeTurn(state));
  if (fresh.length && state.started && !state.over && isMine(state.current)) {
    setStatus(`${fresh[fresh.length - 1].text}. ${describeTurn(state)}`);
  }
}

function describeTurn(state) {
  if (!state.started) return "Waiting for players…";
  if (state.over) return state.result.text;
  const name = state.seats[state.current].name;
  if (isMine(state.current)) {
    return `${mySeats().length > 1 ? name + ", your" : "Your"} turn: roll ${3 - state.rolls_left} of 3`;
  }
  return `${name} to move`;
}

function render(state, { lock = false } = {}) {
  $("table-code").textContent = state.code;
  const link = `${location.origin}/?join=${state.code}`;  // friends open it to take a seat
  $("table-link").replaceChildren(el("a", { href: link, "data-testid": "table-link" }, link));
  $("waiting").hidden = state.started;
  $("board").hidden = !state.started;
  if (!state.started) { renderWaiting(state); return; }
  const playing = !state.over;
  const mine = playing && isMine(state.current) && !lock;
  const live = mine && !T.busy;  // no second intent while one is in flight
  const turn = $("turn");
  turn.dataset.seat = playing ? String(state.current) : "";
  turn.textContent = playing ? `To move: ${state.seats[state.current].name}` : "Game over";
  if (!T.animating) showDice(playing ? state.dice : [], mine ? T.held : new Set(state.held || []), null);
  for (let i = 0; i < 5; i++) {
    document.querySelector(`[data-testid="die-${i}"]`).disabled = !(live && state.rolls_left > 0);
  }
  const roll = $("roll");
  roll.disabled = !(live && state.rolls_left > 0 && T.held.size < 5);
  roll.textContent = playing ? `Roll (${state.rolls_left} left)` : "Roll";
  $("score").disabled = !(live && T.selected);
  $("hint-button").hidden = !state.coach;
  $("hint-button").disabled = !live;
  renderCard(state, mine);
  renderCoach(state);
  renderResult(state);
}

function renderWaiting(state) {
  const list = $("waiting-seats");
  list.replaceChildren(...state.seats.map((s) => {
    if (s.kind === "friend") return el("li", {}, `Seat ${s.seat + 1}: free, waiting for a friend`);
    const what = s.kind === "cpu" ? "computer" : "joined";
    return el("li", {}, `Seat ${s.seat + 1}: ${s.name} (${what})`);
  }));
  $("start").hidden = !isMine(0);
  const free = state.seats.some((s) => s.kind === "friend" && !s.taken);
  $("join-here").hidden = !(free && !mySeats().length);
  $("turn").textContent = "Waiting for players";
  $("turn").dataset.seat = "";
}

function renderCard(state, mine) {
  const table = $("card");
  const head = el("tr");
  head.append(el("th", { scope: "col" }, "Box"));
  state.seats.forEach((s, i) => {
    const th = el("th", { scope: "col" }, s.name + (isMine(i) && mySeats().length === 1 && s.name !== "You" ? " (you)" : ""));
    if (!state.over && state.current === i) th.classList.add("mover");
    head.append(th);
  });
  table.tHead.replaceChildren(head);
  const rows = [];
  BOXES.forEach((box, b) => {
    const tr = el("tr");
    tr.append(el("th", { scope: "row" }, LABELS[b]));
    state.seats.forEach((_, seat) => {
      const score = state.cards[seat].scores[box];
      const open = score === null;
      const mover = !state.over && seat === state.current;
      const potential = mover && open && box in state.options ? state.options[box] : null;
      const attrs = {
        "data-testid": `box-${seat}-${box}`, "data-open": String(open),
        "data-points": open ? (potential === null ? "" : String(potential)) : String(score),
      };
      const td = el("td");
      if (mine && mover && potential !== null) {
        const button = el("button", { ...attrs, type: "button", class: "box",
          "aria-label": `${LABELS[b]}: ${potential} points${T.selected === box ? ", selected: press again to score" : ""}` },
          potential);
        if (T.selected === box) button.classList.add("selected");
        button.disabled = T.busy;
        button.addEventListener("click", () => chooseBox(box));
        td.append(button);
      } else {
        Object.entries(attrs).forEach(([k, v]) => td.setAttribute(k, v));
        td.textContent = open ? (potential === null ? "" : potential) : score;
        if (open && potential !== null) td.classList.add("potential");
      }
      tr.append(td);
    });
    rows.push(tr);
    if (b === 5) {
      rows.push(sumRow(state, "Upper total", (c) => `${c.upper_total}`, "upper"));
      rows.push(sumRow(state, "Upper bonus", (c) => c.upper_bonus, "bonus"));
    }
  });
  rows.push(sumRow(state, "Yahtzee bonus", (c) => c.yahtzee_bonus, "ybonus"));
  const total = sumRow(state, "Total", (c) => c.total, "total");
  total.classList.add("total");
  rows.push(total);
  table.tBodies[0].replaceChildren(...rows);
}

function sumRow(state, label, value, id) {
  const tr = el("tr", { class: "sum" });
  tr.append(el("th", { scope: "row" }, label));
  state.cards.forEach((c, seat) => tr.append(el("td", { "data-testid": `${id}-${seat}` }, value(c))));
  return tr;
}

function renderCoach(state) {
  const box = $("regret");
  box.replaceChildren();
  if (!state.coach) { $("hint").replaceChildren(); return; }
  const seats = mySeats().filter((s) => String(s) in (state.regret || {}));
  for (const seat of seats) {
    const mine = (state.events || []).filter((e) => e.seat === seat && e.regret !== undefined);
    const last = mine[mine.length - 1];
    const who = mySeats().length > 1 ? `${state.seats[seat].name}: ` : "";
    let text = `${who}regret so far ${state.regret[seat].toFixed(2)} points`;
    if (last) text += last.regret > 0.005 ? ` · last move gave up ${last.regret.toFixed(2)}` : " · last move was the best";
    box.append(el("p", { "data-testid": `regret-${seat}` }, text));
  }
  if (T.hint && myTurn()) renderHint(T.hint); else $("hint").replaceChildren();
}

function renderHint(hint) {
  const node = $("hint");
  node.replaceChildren(el("strong", {}, "Coach: "));
  const list = el("ol");
  for (const o of hint.options) {
    list.append(el("li", {}, `${o.label} — expected final score ${o.expected_total.toFixed(1)}`));
  }
  node.append(list);
}

function renderResult(state) {
  const box = $("result");
  box.hidden = !state.over;
  if (!state.over) { box.replaceChildren(); return; }
  const parts = [el("h2", {}, state.result.text)];
  const totals = el("p");
  totals.textContent = state.seats.map((s, i) => `${s.name} ${state.result.totals[i]}`).join(" · ");
  parts.push(totals);
  const match = state.match_state;
  let again = "Play again";
  if (match) {
    const wins = match.wins ? state.seats.map((s, i) => `${s.name} ${match.wins[i]}`).join(", ") : "";
    parts.push(el("p", { "data-testid": "match" }, match.decided ? match.text : `Best of five — game wins: ${wins}`));
    if (!match.decided) again = "Next game";
  }
  if (state.review) {
    for (const seat of mySeats()) {
      const review = state.review[seat];
      if (!review) continue;
      const div = el("div", { "data-testid": `review-${seat}` });
      div.append(el("p", {}, `Coach: you gave up ${review.total_regret.toFixed(2)} expected points against optimal play over ${review.decisions} decisions.`));
      if (review.costliest.length) {
        const list = el("ol");
        review.costliest.forEach((d) => list.append(el("li", {}, d.text)));
        div.append(el("p", {}, "Your three costliest decisions:"), list);
      }
      parts.push(div);
    }
  }
  if (mySeats().length) {
    const button = el("button", { type: "button", class: "primary", "data-testid": "play-again" }, again);
    button.disabled = T.busy;
    button.addEventListener("click", pressOnce(() => act({ type: "next" })));
    parts.push(button);
  }
  box.replaceChildren(...parts);
}

// ------------------------------------------------------------------ intents
// One intent at a time, stamped with the state it was made from: a repeat (double click,
// a retry after a lost answer) is refused by the server as "stale_seq" and changes nothing.
async function act(action) {
  if (T.busy || !T.state) return;
  const seat = action.type === "next" ? mySeats()[0] : T.state.current;
  const { seq, game } = T.state;
  T.busy = true;
  render(T.state);
  setError("");
  try {
    const state = await api(`/api/tables/${T.code}/act`, { seat, token: tokenOf(seat), seq, game, action });
    T.busy = false;
    await receive(state);
  } catch (err) {
    T.busy = false;
    if (err.code === "stale_seq") await resync(); else showFailure(err);
  } finally {
    T.busy = false;
    if (T.state) render(T.state);
  }
}

async function resync() {
  try { await receive(await api(`/api/tables/${T.code}`)); } catch (err) { showFailure(err); }
}

function toggleDie(i) {
  if (!myTurn() || T.state.rolls_left === 0) return;
  if (T.held.has(i)) T.held.delete(i); else T.held.add(i);
  render(T.state);
  const die = document.querySelector(`[data-testid="die-${i}"]`);
  die.focus();
  setStatus(T.held.size ? `Holding ${[...T.held].sort().map((p) => T.state.dice[p]).join(" ")}` : "Holding nothing");
}

function rollNow() {
  if (!myTurn() || T.state.rolls_left === 0) return;
  if (T.held.size === 5) { setError("all five dice are held: release one or score a box"); return; }
  rollDice([0, 1, 2, 3, 4].filter((i) => !T.held.has(i)));
  act({ type: "roll", hold: [...T.held].sort() });
}

function chooseBox(box) {
  if (!myTurn()) return;
  if (T.selected === box) { scoreNow(); return; }
  T.selected = box;
  render(T.state);
  const button = document.querySelector(`button[data-testid="box-${T.state.current}-${box}"]`);
  if (button) button.focus();
  setStatus(`${LABELS[BOXES.indexOf(box)]} for ${T.state.options[box]} points: press again or Score`);
}

function scoreNow() {
  if (!myTurn() || !T.selected) return;
  const box = T.selected;
  T.selected = null;
  act({ type: "score", box });
}

async function askHint() {
  if (!myTurn() || T.hintPending) return;
  const node = $("hint");
  T.hintPending = true;
  node.dataset.state = "computing";  // the coach may first have to load its table
  node.replaceChildren(el("p", { class: "thinking", "data-testid": "hint-progress" }, "The coach is thinking…"));
  $("hint-button").disabled = true;
  try {
    const seat = T.state.current;
    T.hint = await api(`/api/tables/${T.code}/hint`, { seat, token: tokenOf(seat) }, { timeout: 60000 });
    node.dataset.state = "ready";
    renderHint(T.hint);
  } catch (err) {
    node.dataset.state = "";
    node.replaceChildren();
    showFailure(err);
  } finally {
    T.hintPending = false;
    if (T.state) render(T.state);
  }
}

// Live updates: a socket per table; a seated page says which seat it is ("hello"), so
// that it gets in even when the watchers' slots are full. Close codes from the server
// (yahtzee_env/web/hub.py): 4404/4410 no such table, 4429 refused for lack of slots,
// 4409 replaced by a newer page of the same seat, 4403 refused origin.
const SOCKET_REFUSED = new Set([4403, 4409, 4429]);
const SOCKET_FINAL = new Set([4404, 4410]);
function connect() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${proto}://${location.host}/ws/${T.code}`);
  T.socket = socket;
  socket.onmessage = (msg) => {
    const data = JSON.parse(msg.data);
    if (data.type === "state") {
      receive(data.state);
      if (T.netError) { T.netError = false; setError(""); }  // back in sync
    } else if (data.type === "error" && data.status === 404) setError(data.error);
  };
  socket.onopen = () => {
    T.retry = 0;
    const seat = mySeats()[0];
    if (seat !== undefined) socket.send(JSON.stringify({ type: "hello", seat, token: tokenOf(seat) }));
    setConnection("online");
  };
  socket.onclose = (event) => {
    if (T.socket !== socket) return;
    if (SOCKET_FINAL.has(event.code)) { setConnection("online"); return; }
    if (SOCKET_REFUSED.has(event.code)) { startPolling(event.reason); return; }
    setConnection("reconnecting");
    T.retry = Math.min(T.retry + 1, 4);
    setTimeout(() => { if (T.socket === socket) connect(); }, 250 * 2 ** T.retry);
  };
}

const POLL_MS = 3000;
function startPolling(reason) {
  T.socket = null;
  setConnection("polling", `Live updates refused${reason ? ` (${reason})` : ""}: checking for moves every ${POLL_MS / 1000} s.`);
  if (T.poll) return;
  T.poll = setInterval(async () => {
    try { await receive(await api(`/api/tables/${T.code}`, undefined, { retries: 0 })); } catch { /* next time */ }
  }, POLL_MS);
}
function stopPolling() {
  if (T.poll) { clearInterval(T.poll); T.poll = null; }
}

async function showTable(code) {
  T.code = code.toUpperCase();
  T.state = null; T.version = [-1, -1];
  if (myTables()[T.code]) rememberTable(T.code, {});
  try {
    await receive(await api(`/api/tables/${T.code}`));
    connect();
  } catch (err) {
    showFailure(err);
    $("board").hidden = true;
    $("table-code").textContent = T.code;
  }
}

// ------------------------------------------------------------------ statistics
function pct(x) { return x === null ? "–" : `${(100 * x).toFixed(1)}%`; }

function statsRow(label, s) {
  const tr = el("tr");
  tr.append(el("th", { scope: "row" }, label));
  for (const v of [s.games, s.wins, s.draws, s.losses, s.mean_score ?? "–", s.best_score ?? "–", s.yahtzees, pct(s.upper_bonus_rate)]) {
    tr.append(el("td", {}, v));
  }
  return tr;
}

function statsTable(caption, rows) {
  const table = el("table", { class: "stats" });
  table.append(el("caption", {}, caption));
  const head = el("tr");
  for (const h of ["", "games", "wins", "draws", "losses", "mean", "best", "Yahtzees", "upper bonus"]) head.append(el("th", { scope: "col" }, h));
  table.append(head, ...rows);
  return table;
}

function chart(history) {
  const ns = "http://www.w3.org/2000/svg";
  const w = 480, h = 160, pad = 24;
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.setAttribute("id", "chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `Score history: ${history.map((g) => g.score).join(", ")}`);
  const max = Math.max(300, ...history.map((g) => g.score));
  const x = (i) => pad + (history.length > 1 ? i * (w - 2 * pad) / (history.length - 1) : (w - 2 * pad) / 2);
  const y = (v) => h - pad - v * (h - 2 * pad) / max;
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", history.map((g, i) => `${x(i)},${y(g.score)}`).join(" "));
  line.setAttribute("fill", "none"); line.setAttribute("stroke", "#14603d"); line.setAttribute("stroke-width", "2");
  svg.append(line);
  history.forEach((g, i) => {
    const dot = document.createElementNS(ns, "circle");
    dot.setAttribute("cx", x(i)); dot.setAttribute("cy", y(g.score)); dot.setAttribute("r", 4);
    dot.setAttribute("fill", g.outcome === "win" ? "#14603d" : g.outcome === "draw" ? "#f2c230" : "#c8102e");
    svg.append(dot);
  });
  for (const v of [0, 100, 200, 300]) {
    const t = document.createElementNS(ns, "text");
    t.setAttribute("x", 2); t.setAttribute("y", y(v) + 4); t.setAttribute("font-size", "10");
    t.textContent = v; svg.append(t);
  }
  return svg;
}

async function showStats() {
  const body = $("stats-body");
  const player = store.get("yz.player", null);
  if (!player) { body.replaceChildren(el("p", {}, "No games yet: play one from the lobby.")); return; }
  try {
    const s = await api("/api/stats", { player: player.token });
    const o = s.overall;
    const grid = el("div", { class: "stat-grid" });
    for (const [label, value] of [["games", o.games], ["wins", o.wins], ["draws", o.draws],
      ["mean score", o.mean_score ?? "–"], ["best score", o.best_score ?? "–"], ["Yahtzees", o.yahtzees],
      ["upper bonus", pct(o.upper_bonus_rate)]]) {
      const card = el("div", { class: "stat", "data-testid": `stat-${label.replace(" ", "-")}` });
      card.append(el("b", {}, value), document.createTextNode(label));
      grid.append(card);
    }
    body.replaceChildren(el("p", {}, `Player: ${s.name}`), grid,
      statsTable("By opponents", Object.entries(s.by_opponents).map(([k, v]) => statsRow(k, v))),
      statsTable("Online and solo", [statsRow("solo", s.by_mode.solo), statsRow("online", s.by_mode.online)]),
      el("h2", {}, "Score history"),
      s.history.length ? chart(s.history) : el("p", {}, "No finished games yet."));
  } catch (err) { body.replaceChildren(el("p", { class: "error" }, err.message)); }
}

// ------------------------------------------------------------------ routing, keys
function go(path) {
  const url = new URL(path, location.origin);
  if (params.has("pace")) url.searchParams.set("pace", params.get("pace"));
  history.pushState({}, "", url.pathname + url.search);
  params.delete("join");
  new URLSearchParams(url.search).forEach((v, k) => params.set(k, v));
  route();
}

function route() {
  const path = location.pathname;
  for (const id of ["lobby", "table", "stats"]) $(id).hidden = true;
  if (T.socket) { const s = T.socket; T.socket = null; s.close(); }
  stopPolling();
  setConnection("online");
  const match = path.match(/^\/t\/([A-Za-z0-9]+)$/);
  if (match) { $("table").hidden = false; showTable(match[1]); }
  else if (path === "/stats") { $("stats").hidden = false; showStats(); }
  else { $("lobby").hidden = false; showLobby(); }
}

document.addEventListener("DOMContentLoaded", () => {
  for (const form of ["lobby-form", "join-form"]) $(form).addEventListener("submit", (e) => e.preventDefault());
  $("seats").addEventListener("change", renderSeatKinds);
  const lobbyButtons = ["play", "create-online", "join"];
  $("play").addEventListener("click", () => whileBusy(lobbyButtons, () => createTable(false)));
  $("create-online").addEventListener("click", () => whileBusy(lobbyButtons, () => createTable(true)));
  $("join").addEventListener("click", () => whileBusy(lobbyButtons, joinTable));
  $("join-code").addEventListener("keydown", (e) => { if (e.key === "Enter") whileBusy(lobbyButtons, joinTable); });
  $("roll").addEventListener("click", pressOnce(rollNow));
  $("score").addEventListener("click", pressOnce(scoreNow));
  $("hint-button").addEventListener("click", pressOnce(askHint));
  $("join-here").addEventListener("click", () => go(`/?join=${T.code}`));
  $("start").addEventListener("click", () => whileBusy(["start"], async () => {
    try { await receive(await api(`/api/tables/${T.code}/start`, { seat: 0, token: tokenOf(0) })); }
    catch (err) { if (err.status === 409) await resync(); else showFailure(err); }
  }));
  for (let i = 0; i < 5; i++) {
    document.querySelector(`[data-testid="die-${i}"]`).addEventListener("click", () => toggleDie(i));
  }
  document.addEventListener("keydown", (e) => {
    if ($("table").hidden || e.target.matches("input, select, textarea") || e.ctrlKey || e.metaKey || e.altKey) return;
    if (/^[1-5]$/.test(e.key)) toggleDie(Number(e.key) - 1);
    else if (e.key === "r" || e.key === "R") rollNow();
    else if (e.key === "s" || e.key === "S") scoreNow();
    else if (e.key === "h" || e.key === "H") askHint();
    else if (e.key === "Enter" && T.selected && !e.target.matches("button")) scoreNow();
  });
  window.addEventListener("popstate", route);
  route();
});

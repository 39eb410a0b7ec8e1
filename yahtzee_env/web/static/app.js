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
// Seats belong to the session (an HttpOnly cookie the page cannot read): the server says
// which seats are ours (`mine`), and no seat token is kept in the browser any more.
try { localStorage.removeItem("yz.tables"); localStorage.removeItem("yz.player"); } catch { /* */ }

// Words the page shows about people at online tables (issue 18), in one place.
const WORDS = {
  "people.away.timeout": "away: the computer is playing",
  "people.away.host": "away: the computer is playing",
  "people.away.left": "left: the computer is playing",
  "people.offline": "not connected",
  "people.you": "you",
  "people.me_away.timeout": "Your time ran out: the computer is playing for you.",
  "people.me_away.host": "The host gave your seat to the computer while you were away.",
  "people.me_away.left": "You left this table: the computer is playing for you.",
  "people.to_move": "To move: {name}",
  "people.cpu_for": "{name} (the computer is playing)",
  "people.offline_mover": "{name} (not connected)",
  "people.game_over": "Game over",
  "people.time_left": "{s} s",
  "people.hand": "Let the computer play",
  "people.remove": "Remove",
  "end.you_won": "You won",
  "end.you_lost": "You lost to {name} by {n}",
  "end.draw_plain": "Draw",
  "end.you_drew": "Draw with {names}",
  "end.wins": "{name} wins",
  "end.place": "{place}. {name}",
  "end.play_again": "Play again",
  "end.next_game": "Next game",
  "end.lobby": "Back to the lobby",
  "end.waiting": "Waiting for {names} to confirm…",
  "end.voted": "You confirmed: the next game starts when everyone has.",
  "lobby.more_levels": "More levels",
  "lobby.need_name": "Tell us your name first: it is shown at your tables.",
  "lobby.tables_none": "none yet",
  "lobby.tables_away": "the computer is playing for you",
  "lobby.tables_waiting": "waiting to start",
  "level.easy": "Easy", "level.medium": "Medium", "level.hard": "Hard", "level.expert": "Expert",
  "level.optimal": "Optimal", "level.heuristic": "Heuristic", "level.greedy": "Greedy",
  "level.random": "Random",
};
function word(key, vars = {}) {
  const text = WORDS[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
}
const levelWord = (level) => WORDS[`level.${level}`] ?? level;
// A seat's name as the page shows it: a CPU by its level, numbered when several share it.
function seatName(seat) {
  if (!seat) return "";
  if (seat.kind === "cpu") return levelWord(seat.level) + (seat.number ? ` ${seat.number}` : "");
  return seat.name;
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

// The session: a guest profile or an account, behind an HttpOnly cookie.
const ME = { player: null, account: null, loaded: false };
async function loadSession() {
  try { Object.assign(ME, await api("/api/session"), { loaded: true }); } catch { /* offline */ }
  return ME;
}
async function ensurePlayer(name) {
  name = (name || "").trim();
  if (!ME.loaded) await loadSession();
  if (!ME.player || (name && name !== ME.player.name)) {
    if (!name) { $("name").focus(); throw new Error(word("lobby.need_name")); }
    Object.assign(ME, await api("/api/session", { name }, { retries: 0 }));
  }
  return ME.player;
}

// ------------------------------------------------------------------ lobby
let config = { levels: ["easy", "medium", "hard"], rules: ["official"] };

function seatOptions(i) {
  if (i === 0) return [["human", "You"]];
  return [["friend", "A friend (online)"], ["human", "Another player here"],
    ...mainLevels().map((lv) => [lv, `Computer: ${levelWord(lv)}`])];
}
// The seed's three levels first; the others under "more".
const mainLevels = () => config.main_levels || config.levels.filter((lv) => ["easy", "medium", "hard"].includes(lv));
const moreLevels = () => config.levels.filter((lv) => !mainLevels().includes(lv));
function levelOptions(select, prefix = "") {
  for (const lv of mainLevels()) select.append(el("option", { value: lv }, prefix + levelWord(lv)));
  const more = moreLevels();
  if (more.length) {
    const group = el("optgroup", { label: word("lobby.more_levels") });
    for (const lv of more) group.append(el("option", { value: lv }, prefix + levelWord(lv)));
    select.append(group);
  }
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
    if (i > 0) {
      const more = moreLevels();
      if (more.length) {
        const group = el("optgroup", { label: word("lobby.more_levels") });
        for (const lv of more) group.append(el("option", { value: lv }, `Computer: ${levelWord(lv)}`));
        select.append(group);
      }
    }
    select.value = previous[i] || (config.levels.includes(defaults[i]) ? defaults[i] : select.options[0].value);
    if (i === 0) select.disabled = true;
    row.append(select);
    box.append(row);
  }
}

function lobbyChoices(online) {
  const seats = [...$("seat-kinds").querySelectorAll("select")].map((s) => s.value);
  const choices = {
    name: $("name").value, seats, online, rules: $("rules").value, fill: $("fill").value,
    match: $("match").checked, coach: $("coach").checked,
  };
  if (online) choices.turn_timer = Math.max(0, Math.round(Number($("turn-timer").value) || 0));
  return choices;
}

async function createTable(online) {
  $("lobby-error").textContent = "";
  try {
    const choices = lobbyChoices(online);
    if (!online && choices.seats.includes("friend")) {
      throw new Error("friends join online tables: press Create online table, or pick the computer for their seats");
    }
    await ensurePlayer(choices.name);
    const reply = await api("/api/tables", choices, { retries: 0 });
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
    const player = await ensurePlayer($("name").value);
    try {
      await api(`/api/tables/${encodeURIComponent(code)}/join`, { name: player.name }, { retries: 0 });
    } catch (err) {
      if (err.code !== "already_seated") throw err;  // our seat already: just go there
    }
    go(`/t/${code}`);
  } catch (err) {
    $("lobby-error").textContent = err.message;
  }
}

// "Your open tables": the session's, from the server (so on every device once signed in).
async function renderMyTables() {
  const list = $("my-tables");
  let tables = [];
  try { tables = (await api("/api/me/tables")).tables; } catch { /* offline: none shown */ }
  list.replaceChildren();
  if (!tables.length) list.append(el("li", {}, word("lobby.tables_none")));
  for (const table of tables.slice(0, 10)) {
    const li = el("li", { "data-testid": `my-table-${table.code}` });
    li.append(el("a", { href: `/t/${table.code}` }, table.code));
    const notes = [];
    if (!table.started) notes.push(word("lobby.tables_waiting"));
    if (table.away.length) notes.push(word("lobby.tables_away"));
    if (notes.length) li.append(document.createTextNode(` (${notes.join("; ")})`));
    list.append(li);
  }
}

function renderAccount() {
  const signedIn = Boolean(ME.account);
  $("signed-in").hidden = !signedIn;
  $("signed-out").hidden = signedIn;
  $("account-name").textContent = ME.account || "";
}

async function accountAction(what, body) {
  $("account-error").textContent = "";
  try {
    const reply = await api(`/api/account/${what}`, body, { retries: 0 });
    Object.assign(ME, reply, { loaded: true });
    if (ME.player) $("name").value = ME.player.name;
    renderAccount();
    renderMyTables();
  } catch (err) {
    $("account-error").textContent = err.message;
  }
}

async function signUp() {
  // a guest profile first (the name field), so that its games come along
  if (!ME.player && $("name").value.trim()) {
    try { await ensurePlayer($("name").value); } catch (err) { $("account-error").textContent = err.message; return; }
  }
  await accountAction("signup", { username: $("signup-name").value, password: $("signup-password").value, name: $("name").value || undefined });
  $("signup-password").value = "";
}

async function signIn() {
  await accountAction("signin", { username: $("signin-name").value, password: $("signin-password").value });
  $("signin-password").value = "";
}

async function showLobby() {
  await loadSession();
  if (ME.player) $("name").value = ME.player.name;
  renderAccount();
  try { config = await api("/api/config"); } catch { /* keep the defaults */ }
  const rules = $("rules"), fill = $("fill");
  rules.replaceChildren(...config.rules.map((r) => el("option", { value: r }, r)));
  fill.replaceChildren();
  levelOptions(fill);
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
  busy: false, netError: false, poll: null, mine: [], presence: null, ended: null,
  voted: false, deadlineAt: null, ticker: null,
};
const mySeats = () => T.mine;
const isMine = (seat) => T.mine.includes(seat);
const myTurn = () => T.state && T.state.started && !T.state.over && isMine(T.state.current) && !T.animating && !T.busy;
const amHost = () => isMine(0);
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

// The header and the highlighted column follow the seat that is moving.
function showMover(seat, state) {
  const turn = $("turn");
  turn.dataset.seat = seat === null ? "" : String(seat);
  if (seat === null) { turn.textContent = word("people.game_over"); }
  else {
    const s = state.seats[seat];
    let text = seatName(s);
    if (s.kind !== "cpu" && s.away) text = word("people.cpu_for", { name: text });
    else if (s.kind === "human" && state.online && !s.connected && !isMine(seat)) text = word("people.offline_mover", { name: text });
    const who = el("span", { class: "who", title: seatName(s) }, text);
    turn.replaceChildren(document.createTextNode(word("people.to_move", { name: "" })), who);
  }
  document.querySelectorAll("#card thead th[data-seat]").forEach((th) => {
    th.classList.toggle("mover", th.dataset.seat === String(seat));
  });
}

// One animated move of someone else (a CPU or another player).
async function animate(event, state) {
  showMover(event.seat, state);
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
  if (previous && sameGame && others.length && PACE > 0) {
    T.animating = true;
    // our own move shows at once (the box filled, the total updated); the others' after
    const shown = { ...previous, cards: previous.cards.map((c, i) => (isMine(i) ? state.cards[i] : c)) };
    render(shown, { lock: true });
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
  if (state.over) return resultWords(state);
  const name = seatName(state.seats[state.current]);
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
  $("waiting-seats").replaceChildren();  // its seat-status hooks now live in the card
  const playing = !state.over;
  const mine = playing && isMine(state.current) && !lock;
  const live = mine && !T.busy;  // no second intent while one is in flight
  $("leave").hidden = !mySeats().length;
  renderAway(state);
  renderTimer(state);
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
  showMover(playing ? state.current : null, state);
  renderCoach(state);
  renderResult(state);
}

// "The computer is playing for you", and the button that takes the seat back.
function renderAway(state) {
  const away = mySeats().map((i) => state.seats[i]).find((s) => s && s.away);
  $("away-banner").hidden = !away;
  if (away) $("away-text").textContent = word(`people.me_away.${away.away}`);
}

// The turn timer's countdown (the server holds the deadline; this only shows it).
function renderTimer(state) {
  const node = $("timer");
  T.deadlineAt = state.time_left !== undefined && state.time_left !== null ? performance.now() + 1000 * state.time_left : null;
  const tick = () => {
    if (T.deadlineAt === null) { node.hidden = true; return; }
    const left = Math.max(0, Math.ceil((T.deadlineAt - performance.now()) / 1000));
    node.hidden = false;
    node.textContent = word("people.time_left", { s: left });
  };
  tick();
  if (!T.ticker) T.ticker = setInterval(() => { if (!$("table").hidden) tick(); }, 500);
}

function renderWaiting(state) {
  const list = $("waiting-seats");
  list.replaceChildren(...state.seats.map((s) => {
    const li = el("li");
    if (s.kind !== "cpu") li.append(seatStatus(s));
    if (s.kind === "friend") li.append(document.createTextNode(`Seat ${s.seat + 1}: free, waiting for a friend`));
    else {
      const what = s.kind === "cpu" ? "computer" : "joined";
      li.append(document.createTextNode(`Seat ${s.seat + 1}: `), el("span", { class: "seat-name", title: seatName(s) }, seatName(s)),
        document.createTextNode(` (${what})`));
    }
    if (amHost() && s.seat > 0 && s.kind !== "cpu" && !s.connected && !isMine(s.seat)) {
      li.append(" ", hostButton("hand", s.seat), " ", hostButton("remove", s.seat));
    }
    return li;
  }));
  $("leave").hidden = !mySeats().length || amHost();
  $("away-banner").hidden = true;
  $("timer").hidden = true;
  $("start").hidden = !isMine(0);
  const free = state.seats.some((s) => s.kind === "friend" && !s.taken);
  $("join-here").hidden = !(free && !mySeats().length);
  $("turn").textContent = "Waiting for players";
  $("turn").dataset.seat = "";
}

// A seat's live presence: data-connected says whether its player has the table open.
function seatStatus(s) {
  const connected = s.kind === "cpu" || Boolean(s.connected);
  const dot = el("span", { class: "seat-status", "data-testid": `seat-status-${s.seat}`,
    "data-connected": String(connected), role: "img",
    "aria-label": connected ? "connected" : word("people.offline"), title: connected ? "connected" : word("people.offline") });
  return dot;
}

// The host's controls for an absent seat: the computer plays it; before the start, remove it.
function hostButton(what, seat) {
  const id = what === "hand" ? `hand-to-cpu-${seat}` : `remove-seat-${seat}`;
  const button = el("button", { type: "button", "data-testid": id }, word(what === "hand" ? "people.hand" : "people.remove"));
  button.addEventListener("click", pressOnce(() => people(what, { target: seat })));
  return button;
}

async function people(what, body = {}) {
  setError("");
  try {
    const state = await api(`/api/tables/${T.code}/${what}`, body, { retries: 0 });
    await receive(state);
    return state;
  } catch (err) {
    if (err.status === 409) await resync();
    showFailure(err);
    return null;
  }
}

function renderCard(state, mine) {
  const table = $("card");
  const head = el("tr");
  head.append(el("th", { scope: "col" }, "Box"));
  state.seats.forEach((s, i) => {
    const th = el("th", { scope: "col", "data-seat": String(i) });
    if (s.kind !== "cpu") th.append(seatStatus(s));
    const name = seatName(s) + (isMine(i) && mySeats().length === 1 ? ` (${word("people.you")})` : "");
    th.append(el("span", { class: "seat-name", title: name }, name));
    if (s.kind !== "cpu" && s.away) th.append(el("span", { class: "seat-away", "data-testid": `seat-away-${i}` }, word(`people.away.${s.away}`)));
    else if (s.kind === "human" && !s.connected && state.online && !isMine(i)) th.append(el("span", { class: "seat-away" }, word("people.offline")));
    if (amHost() && i > 0 && s.kind === "human" && !s.away && !s.connected && !isMine(i) && !state.over) th.append(hostButton("hand", i));
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

// The result in words, for the player of this page: "You won", "You lost to hard by 34"...
function resultWords(state) {
  const { totals, winners, draw } = state.result;
  const names = (seats) => seats.map((i) => seatName(state.seats[i])).join(" and ");
  if (mySeats().length !== 1) return draw ? word("end.draw_plain") : word("end.wins", { name: names(winners) });
  const me = mySeats()[0];
  if (winners.includes(me)) {
    if (!draw) return word("end.you_won");
    const others = winners.filter((i) => i !== me);
    return others.length ? word("end.you_drew", { names: names(others) }) : word("end.draw_plain");
  }
  return word("end.you_lost", { name: names(winners), n: totals[winners[0]] - totals[me] });
}

// The end of a game: an overlay, which stays for this player until they leave it (Play
// again, Back to the lobby), even if the others start the next game meanwhile.
function renderResult(state) {
  const box = $("result");
  if (state.over) {
    if (!T.ended || T.ended.game !== state.game) T.voted = false;
    T.ended = state;
  } else if (T.ended && (T.voted || T.ended.code !== state.code)) { T.ended = null; T.voted = false; }
  const ended = T.ended;
  const opening = box.hidden && Boolean(ended);
  box.hidden = !ended;
  $("result-backdrop").hidden = !ended;
  if (!ended) { box.replaceChildren(); return; }
  state = ended;
  const parts = [el("h2", { id: "result-title", "data-testid": "result-words" }, resultWords(state))];
  const ranking = el("ol", { class: "ranking", "data-testid": "ranking" });
  for (const r of state.result.ranking) {
    const li = el("li", { class: isMine(r.seat) ? "me" : "" });
    li.append(el("span", { class: "seat-name", title: seatName(state.seats[r.seat]) }, `${r.place}. ${seatName(state.seats[r.seat])}`),
      el("strong", { "data-testid": `rank-total-${r.seat}` }, r.total));
    ranking.append(li);
  }
  parts.push(ranking);
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
  const live = T.state && T.state.code === state.code ? T.state : state;
  if (live.over && live.online && live.votes && live.votes.length) {
    const waiting = (live.voters || []).filter((i) => !live.votes.includes(i) && !isMine(i));
    const text = waiting.length ? word("end.waiting", { names: waiting.map((i) => seatName(live.seats[i])).join(", ") }) : "";
    if (live.votes.some(isMine) || text) parts.push(el("p", { class: "votes", "data-testid": "votes" }, live.votes.some(isMine) ? `${word("end.voted")} ${text}` : text));
  }
  const buttons = el("div", { class: "buttons" });
  if (mySeats().length) {
    const label = again === "Next game" ? word("end.next_game") : word("end.play_again");
    const button = el("button", { type: "button", class: "primary", "data-testid": "play-again" }, label);
    const votedAlready = live.over && (live.votes || []).some(isMine);
    button.disabled = T.busy || votedAlready;
    button.addEventListener("click", pressOnce(playAgain));
    buttons.append(button);
  }
  const lobby = el("button", { type: "button", "data-testid": "back-to-lobby" }, word("end.lobby"));
  lobby.addEventListener("click", () => { T.ended = null; go("/"); });
  buttons.append(lobby);
  parts.push(buttons);
  box.replaceChildren(...parts);
  if (opening) (box.querySelector("[data-testid=play-again]") || lobby).focus();
}

async function playAgain() {
  if (T.state && !T.state.over) { T.voted = true; T.ended = null; render(T.state); return; }  // it started meanwhile
  T.voted = true;
  await act({ type: "next" });
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
    const state = await api(`/api/tables/${T.code}/act`, { seat, seq, game, action });
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
    T.hint = await api(`/api/tables/${T.code}/hint`, { seat }, { timeout: 60000 });
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
    } else if (data.type === "presence") {
      T.queue = T.queue.then(() => showPresence(data.connected));
    } else if (data.type === "hello") {
      T.mine = data.seats || [data.seat];
    } else if (data.type === "error" && data.status === 404) setError(data.error);
  };
  socket.onopen = () => {
    T.retry = 0;
    if (mySeats().length) socket.send(JSON.stringify({ type: "hello" }));  // the cookie says who
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

// Presence changed (a socket opened or closed): redraw who is connected.
function showPresence(connected) {
  if (!T.state) return;
  for (const s of T.state.seats) s.connected = s.kind === "cpu" || connected.includes(s.seat);
  if (!T.animating) render(T.state);
  else for (const s of T.state.seats) {
    const dot = document.querySelector(`[data-testid="seat-status-${s.seat}"]`);
    if (dot) dot.dataset.connected = String(s.connected);
  }
}

async function showTable(code) {
  T.code = code.toUpperCase();
  T.state = null; T.version = [-1, -1]; T.mine = []; T.ended = null; T.voted = false;
  try {
    await loadSession();
    const state = await api(`/api/tables/${T.code}`);
    T.mine = state.mine || [];
    await receive(state);
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
  await loadSession();
  if (!ME.player) { body.replaceChildren(el("p", {}, "No games yet: play one from the lobby.")); return; }
  try {
    const s = await api("/api/stats", {});
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
  $("leave").addEventListener("click", pressOnce(async () => { if (await people("leave")) { T.ended = null; go("/"); } }));
  $("take-back").addEventListener("click", pressOnce(() => people("back")));
  for (const form of ["signup-form", "signin-form"]) $(form).addEventListener("submit", (e) => e.preventDefault());
  $("signup").addEventListener("click", () => whileBusy(["signup", "signin"], signUp));
  $("signin").addEventListener("click", () => whileBusy(["signup", "signin"], signIn));
  $("signout").addEventListener("click", () => whileBusy(["signout"], () => accountAction("signout", {})));
  $("signout-everywhere").addEventListener("click", () => whileBusy(["signout-everywhere"], () => accountAction("signout", { everywhere: true })));
  $("start").addEventListener("click", () => whileBusy(["start"], async () => {
    try { await receive(await api(`/api/tables/${T.code}/start`, { seat: 0 })); }
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

// The page of `yahtzee serve`. It only shows the server's state and sends intents; the
// server (yahtzee_env/web) checks every move with the engine and computes every score.
// Names and other text from the server are always set with textContent, never as markup.
// Every word shown comes from the catalogue /static/i18n/<lang>.json through t(): the
// server sends narration and errors as keys and values (event.msg, error.code).
"use strict";

const BOXES = ["aces", "twos", "threes", "fours", "fives", "sixes", "three_of_a_kind",
  "four_of_a_kind", "full_house", "small_straight", "large_straight", "yahtzee", "chance"];
const PACES = { slow: 1100, normal: 650, fast: 250, instant: 0 };
const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, text) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = String(text);
  return node;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dieNode = (i) => document.querySelector(`[data-testid="die-${i}"]`);

// ------------------------------------------------------------------ browser storage
const store = {
  get(key, fallback) {
    try { return JSON.parse(localStorage.getItem(key)) ?? fallback; } catch { return fallback; }
  },
  set(key, value) { try { localStorage.setItem(key, JSON.stringify(value)); } catch { /* private mode */ } },
};
// Seats belong to the session (an HttpOnly cookie the page cannot read): the server says
// which seats are ours (`mine`); no player or seat token is kept in the browser any more.
try { localStorage.removeItem("yz.tables"); localStorage.removeItem("yz.player"); } catch { /* private mode */ }

// ------------------------------------------------------------------ words (i18n)
const I18N = { lang: "en", cat: {}, base: {}, languages: [], plural: null };

// The catalogue's text for `key` with {placeholders} filled from `vars`; `fallback` (or the
// key) when no catalogue has it.
function t(key, vars = {}, fallback) {
  const text = I18N.cat[key] ?? I18N.base[key] ?? fallback ?? key;
  return text.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
}
// Plural forms: `key.one`, `key.other` (and whatever Intl.PluralRules names for a language).
function tn(key, n, vars = {}) {
  const form = I18N.plural ? I18N.plural.select(n) : (n === 1 ? "one" : "other");
  const full = `${key}.${form}` in I18N.cat ? `${key}.${form}` : `${key}.other`;
  return t(full, { n, ...vars });
}
const has = (key) => key in I18N.cat || key in I18N.base;
const boxName = (box) => t(`box.${box}`, {}, box);
const levelName = (level) => t(`level.${level}`, {}, level);
const ruleName = (rules) => t(`rules.${rules}`, {}, rules);
const diceText = (dice) => dice.join(" ");
const num = (x, digits = 2) => new Intl.NumberFormat(I18N.lang, { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(x);
const joinNames = (names) => names.join(t("list.and"));

async function fetchJSON(path) {
  const response = await fetch(path);
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  return response.json();
}

function pickLanguage(codes) {
  const asked = params.get("lang");
  if (asked && codes.includes(asked)) { store.set("yz.lang", asked); return asked; }
  const saved = store.get("yz.lang", null);
  if (saved && codes.includes(saved)) return saved;
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    const code = String(tag).toLowerCase().split("-")[0];
    if (codes.includes(code)) return code;
  }
  return codes.includes("en") ? "en" : codes[0];
}

async function setLanguage(lang) {
  I18N.cat = lang === "en" ? I18N.base : await fetchJSON(`/static/i18n/${lang}.json`);
  I18N.lang = lang;
  I18N.plural = new Intl.PluralRules(lang);
  document.documentElement.lang = lang;
  translatePage();
}

function translatePage() {
  document.title = t("app.title");
  for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll("[data-i18n-aria]")) node.setAttribute("aria-label", t(node.dataset.i18nAria));
  const select = $("lang");
  select.replaceChildren(...I18N.languages.map((l) => el("option", { value: l.code, lang: l.code }, l.name)));
  select.value = I18N.lang;
}

// Switching language redraws the view from the state the page already has: no reload.
async function switchLanguage(lang) {
  store.set("yz.lang", lang);
  await setLanguage(lang);
  const view = currentView();
  if (view === "lobby") { renderLobbyWords(); renderMyTables(); }
  else if (view === "table" && T.state) {
    render(T.state, { lock: T.animating });
    setStatus(T.lastStatus ? T.lastStatus() : "");
    if (T.hint && myTurn()) renderHint(T.hint);
  }
  else if (view === "stats" && S.data) renderStats(S.data);
  else if (view === "review" && R.data) renderReview(R.data);
}

// ------------------------------------------------------------------ settings (per device)
const settings = Object.assign({ pace: "normal", sound: false, theme: "auto", motion: "auto" },
  store.get("yz.settings", {}));
function saveSettings() { store.set("yz.settings", settings); applySettings(); }
function applySettings() {
  const root = document.documentElement;
  if (settings.theme === "auto") delete root.dataset.theme; else root.dataset.theme = settings.theme;
  root.classList.toggle("reduce-motion", settings.motion === "reduce");
  root.classList.toggle("full-motion", settings.motion === "full");
  $("pace").value = settings.pace; $("theme").value = settings.theme;
  $("motion").value = settings.motion; $("sound").checked = settings.sound;
}
// ?pace=<ms> (tests, demos) or ?pace=fast overrides the setting for this visit.
function pace() {
  if (params.has("pace")) {
    const p = params.get("pace");
    return p in PACES ? PACES[p] : Math.max(0, Number(p) || 0);
  }
  return PACES[settings.pace] ?? PACES.normal;
}
function reducedMotion() {
  if (settings.motion !== "auto") return settings.motion === "reduce";
  return window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}

// Sound effects, synthesised with WebAudio (no files): off unless the player turns them on.
const sound = {
  ctx: null,
  play(kind) {
    if (!settings.sound) return;
    try {
      this.ctx = this.ctx || new (window.AudioContext || window.webkitAudioContext)();
      const ctx = this.ctx, now = ctx.currentTime;
      const tone = (freq, start, length, type = "sine", gain = 0.12) => {
        const osc = ctx.createOscillator(), amp = ctx.createGain();
        osc.type = type; osc.frequency.value = freq;
        amp.gain.setValueAtTime(gain, now + start);
        amp.gain.exponentialRampToValueAtTime(0.0001, now + start + length);
        osc.connect(amp).connect(ctx.destination);
        osc.start(now + start); osc.stop(now + start + length + 0.02);
      };
      if (kind === "roll") for (let i = 0; i < 6; i++) tone(180 + Math.random() * 260, i * 0.045, 0.05, "square", 0.05);
      else if (kind === "score") { tone(660, 0, 0.12); tone(880, 0.1, 0.16); }
      else if (kind === "yatzy") [523, 659, 784, 1047].forEach((f, i) => tone(f, i * 0.1, 0.22, "triangle", 0.14));
    } catch { /* no audio: stay silent */ }
  },
};

// ------------------------------------------------------------------ the network (one place)
class ApiError extends Error {
  constructor(message, code = "generic", params = {}, status = 0) {
    super(message); this.code = code; this.params = params; this.status = status;
  }
}

// Every request of the page goes through `api`: a timeout, retries of requests that are
// safe to repeat (reads, and moves: the server refuses a move made from a state it has left,
// code "stale_seq"), and errors that carry the server's machine `code` (and its `params`).
const FETCH_TIMEOUT_MS = 10000;
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
      throw new ApiError("no answer from the server", "network", {}, 0);
    }
    clearTimeout(timer);
    if (response.status === 503 && attempt < retries) { await sleep(500 * 2 ** attempt); continue; }
    if (T.netError) { T.netError = false; setError(null); }  // the server answers again
    if (!response.ok) {
      throw new ApiError(data.error || `server error ${response.status}`, data.code || "generic", data.params || {}, response.status);
    }
    return data;
  }
}

// The banner over the page while live updates are down: "reconnecting" while the socket
// is (a retry is on its way), "polling" when the server refused it (the page asks for the
// table's state every few seconds instead).
function setConnection(state, reason = "") {
  const banner = $("connection");
  if (!banner) return;
  banner.dataset.state = state;
  banner.hidden = state === "online";
  const words = { reconnecting: () => t("conn.reconnecting"),
    polling: () => t(reason ? "conn.polling_why" : "conn.polling", { reason, s: POLL_MS / 1000 }) };
  banner.dataset.reason = reason;
  banner.textContent = words[state] ? words[state]() : "";
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

// An error as the player reads it: the catalogue's err.<code>, else the server's words.
function errorText(err) {
  const code = err && err.code;
  if (code && code !== "generic" && has(`err.${code}`)) {
    const p = { ...(err.params || {}) };
    if (p.box) p.box = boxName(p.box);
    if (p.seat !== undefined && T.state) p.name = seatName(T.state, p.seat);
    return t(`err.${code}`, p);
  }
  return t("err.generic", { message: err && err.message ? err.message : String(err) });
}

// The session: a guest profile or an account, behind an HttpOnly cookie. The first visit
// asks for a name (no "You" by default).
const ME = { player: null, account: null, loaded: false };
async function loadSession() {
  try { Object.assign(ME, await api("/api/session"), { loaded: true }); } catch { /* offline */ }
  return ME;
}
async function ensurePlayer(name) {
  name = (name || "").trim();
  if (!ME.loaded) await loadSession();
  if (!ME.player || (name && name !== ME.player.name)) {
    if (!name) { $("name").focus(); throw new ApiError("no name", "need_name"); }
    Object.assign(ME, await api("/api/session", { name }, { retries: 0 }));
  }
  return ME.player;
}

// ------------------------------------------------------------------ names of seats
function seatName(state, seat) {
  const s = state.seats[seat];
  if (!s) return "";
  if (s.kind === "cpu") return levelName(s.level) + (s.number ? ` ${s.number}` : "");
  if (s.kind === "friend" && !s.taken) return t("seat.free", { n: seat + 1 });
  const player = s.name.match(/^Player (\d+)$/);
  if (player) return t("seat.player", { n: player[1] });
  return s.name;
}

// ------------------------------------------------------------------ lobby
let config = { levels: ["easy", "medium", "hard"], rules: ["official"], languages: [] };

function seatOptions(i) {
  if (i === 0) return [["human", t("lobby.you")]];
  return [["friend", t("lobby.friend")], ["human", t("lobby.human")],
    ...mainLevels().map((lv) => [lv, t("lobby.cpu", { level: levelName(lv) })])];
}
// The seed's three levels first; the others under "more levels".
const mainLevels = () => config.main_levels || config.levels.filter((lv) => ["easy", "medium", "hard"].includes(lv));
const moreLevels = () => config.levels.filter((lv) => !mainLevels().includes(lv));
function moreGroup(label) {
  const more = moreLevels();
  if (!more.length) return [];
  const group = el("optgroup", { label: t("lobby.more_levels") });
  for (const lv of more) group.append(el("option", { value: lv }, label(lv)));
  return [group];
}

function renderSeatKinds() {
  const box = $("seat-kinds");
  const previous = [...box.querySelectorAll("select")].map((s) => s.value);
  box.querySelectorAll(".row").forEach((r) => r.remove());
  const defaults = ["human", "medium", "easy", "hard"];
  for (let i = 0; i < Number($("seats").value); i++) {
    const row = el("div", { class: "row" });
    const id = `seat-kind-${i}`;
    row.append(el("label", { for: id }, t("lobby.seat", { n: i + 1 })));
    const select = el("select", { id, "data-testid": id });
    for (const [value, label] of seatOptions(i)) select.append(el("option", { value }, label));
    if (i > 0) select.append(...moreGroup((lv) => t("lobby.cpu", { level: levelName(lv) })));
    select.value = previous[i] || (config.levels.includes(defaults[i]) ? defaults[i] : select.options[0].value);
    if (i === 0) select.disabled = true;
    row.append(select);
    box.append(row);
  }
}

function renderLobbyWords() {
  const rules = $("rules"), fill = $("fill");
  const r = rules.value, f = fill.value;
  rules.replaceChildren(...config.rules.map((x) => el("option", { value: x }, ruleName(x))));
  fill.replaceChildren(...mainLevels().map((lv) => el("option", { value: lv }, levelName(lv))), ...moreGroup(levelName));
  rules.value = r && config.rules.includes(r) ? r : config.rules[0];
  fill.value = f && config.levels.includes(f) ? f : (config.levels.includes("medium") ? "medium" : config.levels[0]);
  renderSeatKinds();
  $("name").placeholder = t("lobby.name_placeholder");
}

function lobbyChoices(online) {
  const seats = [...$("seat-kinds").querySelectorAll("select")].map((s) => s.value);
  const choices = {
    name: $("name").value, seats, online, rules: $("rules").value, fill: $("fill").value,
    match: $("match").checked, coach: $("coach").checked, public: $("public").checked,
  };
  if (online) choices.turn_timer = Math.max(0, Math.round(Number($("turn-timer").value) || 0));
  return choices;
}

async function createTable(online) {
  $("lobby-error").textContent = "";
  try {
    const choices = lobbyChoices(online);
    if (!online && choices.seats.includes("friend")) throw new ApiError("friends", "friends_online");
    await ensurePlayer(choices.name);
    const reply = await api("/api/tables", choices, { retries: 0 });
    go(`/t/${reply.code}`);
  } catch (err) {
    $("lobby-error").textContent = errorText(err);
  }
}

async function joinTable() {
  $("lobby-error").textContent = "";
  try {
    const code = $("join-code").value.trim().toUpperCase().replace(/[\s-]/g, "");
    if (!code) throw new ApiError("no code", "no_code");
    const player = await ensurePlayer($("name").value);
    try {
      await api(`/api/tables/${encodeURIComponent(code)}/join`, { name: player.name }, { retries: 0 });
    } catch (err) {
      if (err.code !== "already_seated") throw err;  // our seat already: just go there
    }
    go(`/t/${code}`);
  } catch (err) {
    $("lobby-error").textContent = errorText(err);
  }
}

// "Your open tables": each remembered table's opponents, turn and mover, with Resume.
const L = { states: {}, tables: [] };  // the session's open tables, from the server
const roundOf = (state) => {
  if (!state.cards || state.current === undefined) return 13;
  return Object.values(state.cards[state.current].scores).filter((v) => v !== null).length + 1;
};

async function loadMyTables() {
  try { L.tables = (await api("/api/me/tables")).tables.slice(0, 8); } catch { L.tables = []; }
  const entries = L.tables.map((entry) => [entry.code, entry]);
  await Promise.all(entries.map(async ([code]) => {
    try { L.states[code] = await api(`/api/tables/${code}`); } catch { L.states[code] = null; }
  }));
  renderMyTables();
}

function tableSummary(code, state) {
  const entry = L.tables.find((x) => x.code === code);
  const mine = entry ? entry.seats : [];
  const opponents = state.seats.filter((s) => !mine.includes(s.seat)).map((s) => seatName(state, s.seat));
  let status;
  let who = "";
  if (!state.started) status = t("lobby.table_waiting");
  else if (state.over) status = t("lobby.table_over");
  else {
    who = mine.includes(state.current) ? t("lobby.your_move") : t("lobby.their_move", { name: seatName(state, state.current) });
    status = t("lobby.table_turn", { round: roundOf(state), who });
  }
  if (entry && entry.away.length) status += ` · ${t("lobby.tables_away")}`;
  return { line: t("lobby.table_line", { code, opponents: joinNames(opponents) }), status, who, mine };
}

function renderMyTables() {
  const list = $("my-tables");
  list.replaceChildren();
  const entries = L.tables.map((entry) => [entry.code, entry]);
  if (!entries.length) list.append(el("li", {}, t("lobby.none")));
  let latest = null;
  for (const [code] of entries) {
    const state = L.states[code];
    const li = el("li", { "data-testid": `open-table-${code}` });
    if (state === undefined) { li.append(el("a", { href: `/t/${code}` }, code)); list.append(li); continue; }
    if (state === null) { li.append(el("span", {}, t("lobby.unavailable", { code }))); list.append(li); continue; }
    const info = tableSummary(code, state);
    const text = el("span", { class: "info" });
    text.append(el("span", {}, info.line), el("small", {}, info.status));
    li.append(text);
    if (state.over && state.result && state.result.game_id) {
      li.append(el("a", { href: `/games/${state.result.game_id}`, class: "button-link", "data-testid": "review-link" }, t("lobby.review")));
    }
    const resume = el("a", { href: `/t/${code}`, class: "button-link primary", "data-testid": `resume-${code}` }, t("lobby.resume"));
    resume.addEventListener("click", (e) => { e.preventDefault(); go(`/t/${code}`); });
    li.append(resume);
    list.append(li);
    if (!latest && state.started && !state.over) latest = { code, state, info };
  }
  const banner = $("resume-latest");
  banner.hidden = !latest;
  banner.replaceChildren();
  if (latest) {
    banner.append(el("p", {}, t("lobby.resume_latest", { code: latest.code, round: roundOf(latest.state), who: latest.info.who })));
    const button = el("button", { type: "button", class: "primary", "data-testid": "resume-latest-button" }, t("lobby.resume"));
    button.addEventListener("click", () => go(`/t/${latest.code}`));
    banner.append(button);
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
    Object.assign(ME, await api(`/api/account/${what}`, body, { retries: 0 }), { loaded: true });
    if (ME.player) $("name").value = ME.player.name;
    renderAccount();
    loadMyTables();
  } catch (err) {
    $("account-error").textContent = errorText(err);
  }
}

async function signUp() {
  // a guest profile first (the name field), so that its games come along
  if (!ME.player && $("name").value.trim()) {
    try { await ensurePlayer($("name").value); } catch (err) { $("account-error").textContent = errorText(err); return; }
  }
  await accountAction("signup", { username: $("signup-name").value, password: $("signup-password").value, name: $("name").value.trim() || undefined });
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
  renderLobbyWords();
  renderMyTables();
  loadMyTables();
}

// ------------------------------------------------------------------ the table
const T = {
  code: null, state: null, version: [-1, -1], held: new Set(), selected: null,
  queue: Promise.resolve(), animating: false, socket: null, retry: 0, hint: null,
  slots: [0, 1, 2, 3, 4], lastStatus: null, focusAfter: null,
  busy: false, netError: false, poll: null, hintPending: false,
  mine: [], ended: null, voted: false, deadlineAt: null, ticker: null,
};
const mySeats = () => T.mine;
const isMine = (seat) => T.mine.includes(seat);
const amHost = () => isMine(0);
const myTurn = () => T.state && T.state.started && !T.state.over && isMine(T.state.current) && !T.animating && !T.busy;
const newer = (a, b) => a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1]);

// The status line is kept as a function, so that a language switch can redraw it.
function setStatus(text) { $("status").textContent = text; }
function say(fn) { T.lastStatus = fn; setStatus(fn()); }
function setError(err) { $("error").textContent = err ? errorText(err) : ""; }
function showFailure(err) {  // a network failure clears itself once the server answers again
  T.netError = err.code === "network";
  setError(err);
}

function narrate(event) {
  const m = event.msg;
  if (!m || !T.state) return event.text || "";
  const name = seatName(T.state, event.seat);
  if (m.key === "narr.keep") return tn("narr.keep", m.n, { name, kept: diceText(m.kept), dice: diceText(m.dice) });
  if (m.key === "narr.reroll_all") return t(m.key, { name, dice: diceText(m.dice) });
  if (m.key === "narr.keep_all") return t(m.key, { name });
  if (m.key === "narr.score" || m.key === "narr.score_bonus") {
    return t(m.key, { name, points: m.points, box: boxName(m.box), extra: m.extra });
  }
  return event.text || "";
}

// Screen places of the dice. The server keeps dice sorted; the page keeps each held die in
// its place while the others roll: slots[k] is the die (server position) shown in place k.
function nextSlots(slots, before, keptPositions, after) {
  const keptFaces = keptPositions.map((p) => before[p]);
  const free = [0, 1, 2, 3, 4];
  const held = [];
  for (const face of keptFaces) {  // where the kept dice are after the roll (as the server's positions_of)
    const spot = free.find((i) => after[i] === face && !held.includes(i));
    held.push(spot);
  }
  const out = new Array(5).fill(null);
  const used = new Set();
  slots.forEach((pos, k) => {
    const idx = keptPositions.indexOf(pos);
    if (idx >= 0) { out[k] = held[idx]; used.add(held[idx]); }
  });
  const rest = [0, 1, 2, 3, 4].filter((p) => !used.has(p));
  for (let k = 0; k < 5; k++) if (out[k] === null) out[k] = rest.shift();
  return out;
}

function placeDice(slots) {
  const tray = $("dice");
  const order = [...tray.children].map((n) => Number(n.dataset.testid.slice(4)));
  if (order.join() === slots.join()) return;
  const focused = document.activeElement;
  for (const pos of slots) tray.append(dieNode(pos));
  if (focused && tray.contains(focused)) focused.focus();
}

function showDice(dice, held, kept) {
  placeDice(T.slots);
  T.slots.forEach((pos, k) => {
    const die = dieNode(pos);
    const value = dice && dice.length ? String(dice[pos]) : "";
    die.dataset.value = value;
    die.dataset.face = value;
    die.dataset.held = String(held.has(pos));
    die.dataset.tag = t("die.tag");
    die.classList.toggle("kept", Boolean(kept && kept.includes(pos)));
    const state = held.has(pos) || (kept && kept.includes(pos)) ? t("die.held") : t("die.free");
    die.setAttribute("aria-label", value ? t("die.label", { n: k + 1, face: t(`face.${value}`), state }) : t("die.unrolled", { n: k + 1 }));
    die.setAttribute("aria-pressed", String(held.has(pos)));
  });
}

// Tumble, then settle: the dice that roll spin and flicker through faces, then show their
// value. Without motion (the setting or the device's), they just change.
async function tumble(positions, ms) {
  if (reducedMotion() || !positions.length) return;
  sound.play("roll");
  const nodes = positions.map(dieNode);
  for (const die of nodes) { die.classList.remove("rolling"); void die.offsetWidth; die.classList.add("rolling"); }
  const end = Date.now() + ms;
  while (Date.now() < end) {
    for (const die of nodes) die.dataset.face = String(1 + Math.floor(Math.random() * 6));
    await sleep(70);
  }
  for (const die of nodes) die.dataset.face = die.dataset.value;
}

// The header and the highlighted column follow the seat that is moving (a CPU's too, while
// its turn is animated).
function showMover(seat, state) {
  const turn = $("turn");
  turn.dataset.seat = seat === null ? "" : String(seat);
  if (seat === null) turn.textContent = t("turn.over");
  else {
    const s = state.seats[seat];
    let name = seatName(state, seat);
    if (s.kind !== "cpu" && s.away) name = t("people.cpu_for", { name });
    else if (s.kind === "human" && state.online && !s.connected && !isMine(seat)) name = t("people.offline_mover", { name });
    turn.replaceChildren(el("span", { class: "who", title: seatName(state, seat) }, t("turn.to_move", { name })));
  }
  document.querySelectorAll("#card thead th[data-seat]").forEach((th) => {
    th.classList.toggle("mover", th.dataset.seat === String(seat));
  });
}

// One animated move of someone else (a CPU or another player).
async function animate(event) {
  showMover(event.seat, T.state);
  const p = pace();
  if (event.type === "roll") {
    showDice(event.dice_before, new Set(), event.kept);
    say(() => t("narr.rolling", { name: seatName(T.state, event.seat) }));
    await sleep(p * 0.6);
    T.slots = nextSlots(T.slots, event.dice_before, event.kept, event.dice);
    const kept = [];
    const keptFaces = event.kept.map((i) => event.dice_before[i]);
    for (const face of keptFaces) kept.push([0, 1, 2, 3, 4].find((i) => event.dice[i] === face && !kept.includes(i)));
    showDice(event.dice, new Set(), kept);
    const rolled = [0, 1, 2, 3, 4].filter((i) => !kept.includes(i));
    await tumble(rolled, Math.min(600, p));
    say(() => narrate(event));
    await sleep(p);
  } else {
    showDice(event.dice_before, new Set(), []);
    const cell = document.querySelector(`[data-testid="box-${event.seat}-${event.box}"]`);
    say(() => narrate(event));
    if (cell) { cell.textContent = event.points; cell.classList.add("scored-now"); }
    sound.play(event.box === "yahtzee" && event.points > 0 ? "yatzy" : "score");
    await sleep(p * 1.2);
    T.slots = [0, 1, 2, 3, 4];
  }
}

function receive(state) {
  T.queue = T.queue.then(() => apply(state)).catch((err) => setError(err));
  return T.queue;
}

async function apply(state) {
  if (state.code !== T.code || !newer(state.version, T.version)) return;
  const previous = T.state;
  const sameGame = previous && previous.game === state.game;
  const fresh = (state.events || []).filter((e) => !sameGame || e.seq >= previous.seq);
  const others = fresh.filter((e) => !isMine(e.seat));
  if (previous && others.length && pace() > 0) {
    T.animating = true;
    // our own move shows at once (the box filled, the total updated), the others' after
    const cards = previous.cards && sameGame ? previous.cards.map((c, i) => (isMine(i) ? state.cards[i] : c)) : previous.cards;
    T.state = { ...previous, seats: state.seats, cards };
    render(T.state, { lock: true });
    for (const event of fresh) {
      if (isMine(event.seat)) {
        say(() => narrate(event));
        if (event.type === "roll") T.slots = nextSlots(T.slots, event.dice_before, event.kept, event.dice);
        else {
          T.slots = [0, 1, 2, 3, 4];
          const cell = document.querySelector(`[data-testid="box-${event.seat}-${event.box}"]`);
          if (cell) { cell.textContent = event.points; cell.classList.add("scored-now"); }
        }
        continue;
      }
      await animate(event);
    }
    T.animating = false;
  } else if (previous && sameGame) {
    for (const event of fresh) {
      if (event.type === "roll") T.slots = nextSlots(T.slots, event.dice_before, event.kept, event.dice);
      else T.slots = [0, 1, 2, 3, 4];
      if (event.type === "score" && isMine(event.seat)) sound.play(event.box === "yahtzee" && event.points > 0 ? "yatzy" : "score");
    }
  } else {
    T.slots = [0, 1, 2, 3, 4];
  }
  T.version = state.version;
  const newTurn = !previous || previous.current !== state.current || previous.game !== state.game ||
    previous.seq !== state.seq;
  if (newTurn) { T.held = new Set(state.held || []); T.selected = null; T.hint = null; }
  T.state = state;
  render(state);
  $("table").dataset.version = state.version.join(":");  // for test scripts: a new state
  const last = fresh[fresh.length - 1];
  if (last && state.started && !state.over && isMine(state.current)) {
    say(() => t("status.then", { last: narrate(last), next: describeTurn(T.state) }));
  } else if (last) say(() => narrate(last));
  else if (!previous) say(() => describeTurn(T.state));
  moveFocus(state, previous);
}

// Focus goes to the next sensible control after every action.
function moveFocus(state, previous) {
  if (T.busy) return;  // the socket's copy of the state came first: wait for the answer
  const want = T.focusAfter;
  T.focusAfter = null;
  if (!state.started) return;
  if (state.over) {
    const again = document.querySelector('[data-testid="play-again"]');
    if (again && (want || !previous || !previous.over)) again.focus();
    return;
  }
  if (!isMine(state.current)) return;
  const justArrived = !previous || !isMine(previous.current) || previous.current !== state.current || previous.game !== state.game;
  if (want === "roll" || justArrived || want === "turn") {
    if (state.rolls_left > 0) $("roll").focus();
    else {
      const first = document.querySelector(`button[data-testid^="box-${state.current}-"]`);
      if (first) first.focus();
    }
  }
}

function describeTurn(state) {
  if (!state.started) return t("turn.waiting_long");
  if (state.over) return resultText(state);
  const name = seatName(state, state.current);
  const roll = 3 - state.rolls_left;
  if (isMine(state.current)) return mySeats().length > 1 ? t("turn.named", { name, roll }) : t("turn.yours", { roll });
  return t("turn.other", { name });
}

function resultText(state) {
  const r = state.result;
  if (!r) return "";
  const names = r.winners.map((s) => seatName(state, s));
  if (r.draw) return t("result.draw", { names: joinNames(names), points: r.totals[r.winners[0]] });
  if (mySeats().length === 1 && isMine(r.winners[0])) return t("result.you_win", { points: r.totals[r.winners[0]] });
  return t("result.win", { name: names[0], points: r.totals[r.winners[0]] });
}

// Redrawing replaces the card's buttons: the focus stays on the control with the same test
// id (a box, a die, Play again) when there is one.
function render(state, options = {}) {
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.testid : null;
  draw(state, options);
  const active = document.activeElement;
  if (focused && (!active || active === document.body || !active.isConnected)) {
    const again = document.querySelector(`[data-testid="${focused}"]`);
    if (again && !again.disabled && again.offsetParent !== null) again.focus();
  }
}

function draw(state, { lock = false } = {}) {
  $("table-code").textContent = state.code;
  const link = `${location.origin}/?join=${state.code}`;  // friends open it to take a seat
  $("table-link").replaceChildren(...(state.online ? [el("a", { href: link, "data-testid": "table-link" }, link)] : []));
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
  for (let i = 0; i < 5; i++) dieNode(i).disabled = !(live && state.rolls_left > 0);
  const roll = $("roll");
  roll.disabled = !(live && state.rolls_left > 0 && T.held.size < 5);
  roll.textContent = playing ? tn("roll.left", state.rolls_left) : t("roll.button");
  $("score").disabled = !(live && T.selected);
  $("hint-button").hidden = !state.coach;
  $("hint-button").disabled = !live || T.hintPending;
  $("tray").hidden = !playing;
  renderCard(state, mine, lock);
  if (!T.animating) showMover(playing ? state.current : null, state);
  const notes = state.seats.filter((s) => s.kind === "cpu" && s.trained_for)
    .map((s) => t("seat.trained_for", { name: seatName(state, s.seat), rules: ruleName(s.trained_for) }));
  $("seat-notes").replaceChildren(...notes.map((n) => el("p", {}, n)));
  renderCoach(state);
  renderResult(state);
}

function renderWaiting(state) {
  const list = $("waiting-seats");
  list.replaceChildren(...state.seats.map((s) => {
    const li = el("li");
    if (s.kind !== "cpu") li.append(seatStatus(s));
    const key = s.kind === "friend" ? "table.waiting_seat_free" : s.kind === "cpu" ? "table.waiting_seat_cpu" : "table.waiting_seat_joined";
    li.append(el("span", { class: "nm", title: seatName(state, s.seat) }, t(key, { n: s.seat + 1, name: seatName(state, s.seat) })));
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
  $("turn").textContent = t("turn.waiting");
  $("turn").dataset.seat = "";
}

// "The computer is playing for you", and the button that takes the seat back.
function renderAway(state) {
  const away = mySeats().map((i) => state.seats[i]).find((s) => s && s.away);
  $("away-banner").hidden = !away;
  if (away) $("away-text").textContent = t(`people.me_away.${away.away}`);
}

// The turn timer's countdown (the server holds the deadline; this only shows it).
function renderTimer(state) {
  const node = $("timer");
  T.deadlineAt = state.time_left !== undefined && state.time_left !== null ? performance.now() + 1000 * state.time_left : null;
  const tick = () => {
    if (T.deadlineAt === null) { node.hidden = true; return; }
    node.hidden = false;
    node.textContent = t("people.time_left", { s: Math.max(0, Math.ceil((T.deadlineAt - performance.now()) / 1000)) });
  };
  tick();
  if (!T.ticker) T.ticker = setInterval(() => { if (!$("table").hidden) tick(); }, 500);
}

// A seat's live presence: data-connected says whether its player has the table open.
function seatStatus(s) {
  const connected = s.kind === "cpu" || Boolean(s.connected);
  const words = t(connected ? "people.connected" : "people.offline");
  return el("span", { class: "seat-status", "data-testid": `seat-status-${s.seat}`,
    "data-connected": String(connected), role: "img", "aria-label": words, title: words });
}

// The host's controls for an absent seat: the computer plays it; before the start, remove it.
function hostButton(what, seat) {
  const id = what === "hand" ? `hand-to-cpu-${seat}` : `remove-seat-${seat}`;
  const button = el("button", { type: "button", "data-testid": id }, t(what === "hand" ? "people.hand" : "people.remove"));
  button.addEventListener("click", pressOnce(() => people(what, { target: seat })));
  return button;
}

async function people(what, body = {}) {
  setError(null);
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

function renderCard(state, mine, lock = false) {
  const table = $("card");
  table.className = `card seats-${state.seats.length}`;
  const head = el("tr");
  head.append(el("th", { scope: "col" }, t("card.box")));
  state.seats.forEach((s, i) => {
    const name = seatName(state, i);
    // "Ada (you)": the mark is its own span, which a narrow four-seat head hides visually
    // (a screen reader still reads it) so that the name is not cut
    const mark = isMine(i) && mySeats().length === 1 && !["You", "Tu", t("lobby.default_name")].includes(name)
      ? t("seat.you_mark") : "";
    const th = el("th", { scope: "col", title: mark ? `${name} ${mark}` : name, "data-seat": String(i) });
    if (s.kind !== "cpu") th.append(seatStatus(s));
    const nm = el("span", { class: "nm" }, name);
    if (mark) nm.append(el("span", { class: "you" }, ` ${mark}`));
    th.append(nm);
    if (s.kind !== "cpu" && s.away) th.append(el("span", { class: "seat-away", "data-testid": `seat-away-${i}` }, t(`people.away.${s.away}`)));
    else if (s.kind === "human" && !s.connected && state.online && !isMine(i)) th.append(el("span", { class: "seat-away" }, t("people.offline")));
    if (amHost() && i > 0 && s.kind === "human" && !s.away && !s.connected && !isMine(i) && !state.over) th.append(hostButton("hand", i));
    if (!state.over && state.current === i) th.classList.add("mover");
    head.append(th);
  });
  table.tHead.replaceChildren(head);
  const rows = [];
  BOXES.forEach((box, b) => {
    const tr = el("tr");
    tr.append(el("th", { scope: "row" }, boxName(box)));
    state.seats.forEach((_, seat) => {
      const score = state.cards[seat].scores[box];
      const open = score === null;
      const mover = !state.over && seat === state.current && !lock;  // no stale potentials while animating
      const potential = mover && open && box in state.options ? state.options[box] : null;
      const attrs = {
        "data-testid": `box-${seat}-${box}`, "data-open": String(open),
        "data-points": open ? (potential === null ? "" : String(potential)) : String(score),
      };
      const td = el("td");
      if (mine && mover && potential !== null) {
        const key = T.selected === box ? "card.option_selected" : "card.option";
        const button = el("button", { ...attrs, type: "button", class: "box",
          "aria-label": t(key, { box: boxName(box), points: potential }) }, potential);
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
      rows.push(sumRow(state, t("card.upper_total"), (c) => `${c.upper_total}`, "upper"));
      rows.push(sumRow(state, t("card.upper_bonus"), (c) => c.upper_bonus, "bonus"));
    }
  });
  rows.push(sumRow(state, t("card.yahtzee_bonus"), (c) => c.yahtzee_bonus, "ybonus"));
  const total = sumRow(state, t("card.total"), (c) => c.total, "total");
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

// A move as words, from its action id: < 32 a hold mask over the dice, else a box.
function describeMove(dice, action) {
  if (action >= 32) return t("move.score", { box: boxName(BOXES[action - 32]) });
  const kept = dice.filter((_, i) => action >> i & 1);
  if (!kept.length) return t("move.reroll_all");
  if (kept.length === 5) return t("move.keep_all");
  return tn("move.keep", 5 - kept.length, { kept: diceText(kept) });
}

function decisionText(d) {
  const roll = 3 - d.rolls_left;
  const move = describeMove(d.dice, d.action);
  if (d.regret <= 1e-6) return t("coach.decision_best", { dice: diceText(d.dice), roll, move });
  return t("coach.decision", { dice: diceText(d.dice), roll, move, loss: num(d.regret), best: describeMove(d.dice, d.best_action) });
}

function renderCoach(state) {
  const box = $("regret");
  box.replaceChildren();
  if (!state.coach) { $("hint").replaceChildren(); return; }
  const seats = mySeats().filter((s) => String(s) in (state.regret || {}));
  for (const seat of seats) {
    const mine = (state.events || []).filter((e) => e.seat === seat && e.regret !== undefined);
    const last = mine[mine.length - 1];
    const regret = num(state.regret[seat]);
    let text = mySeats().length > 1 ? t("coach.regret_named", { name: seatName(state, seat), regret }) : t("coach.regret", { regret });
    if (last) text += last.regret > 0.005 ? t("coach.last_lost", { loss: num(last.regret) }) : t("coach.last_best");
    box.append(el("p", { "data-testid": `regret-${seat}` }, text));
  }
  if (T.hint && myTurn()) renderHint(T.hint); else $("hint").replaceChildren();
}

function renderHint(hint) {
  const node = $("hint");
  node.replaceChildren(el("strong", {}, t("coach.label")));
  const list = el("ol");
  for (const o of hint.options) {
    list.append(el("li", {}, t("coach.option", { move: describeMove(hint.dice, o.action), total: num(o.expected_total, 1) })));
  }
  node.append(list);
}

// The result in words, for the player of this page: "You won", "You lost to Hard by 34"...
function resultWords(state) {
  const { totals, winners, draw } = state.result;
  const names = (seats) => joinNames(seats.map((i) => seatName(state, i)));
  if (mySeats().length !== 1) return draw ? t("end.draw_plain") : t("end.wins", { name: names(winners) });
  const me = mySeats()[0];
  if (winners.includes(me)) {
    if (!draw) return t("end.you_won");
    const others = winners.filter((i) => i !== me);
    return others.length ? t("end.you_drew", { names: names(others) }) : t("end.draw_plain");
  }
  return t("end.you_lost", { name: names(winners), n: totals[winners[0]] - totals[me] });
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
  const live = T.state && T.state.code === ended.code ? T.state : ended;
  state = ended;
  const parts = [el("h2", { id: "result-title", "data-testid": "result-words" }, resultWords(state))];
  const ranking = el("ol", { class: "ranking", "data-testid": "ranking" });
  for (const r of state.result.ranking) {
    const li = el("li", { class: isMine(r.seat) ? "me" : "" });
    li.append(el("span", { class: "nm", title: seatName(state, r.seat) }, t("end.place", { place: r.place, name: seatName(state, r.seat) })),
      el("strong", { "data-testid": `rank-total-${r.seat}` }, r.total));
    ranking.append(li);
  }
  parts.push(ranking);
  const match = state.match_state;
  let again = t("end.play_again");
  if (match) {
    let text;
    if (match.decided && match.msg) {
      const names = match.msg.seats.map((s) => seatName(state, s));
      text = tn("match.won", names.length, { names: joinNames(names), wins: match.msg.wins });
    } else {
      const wins = match.wins ? state.seats.map((s, i) => `${seatName(state, i)} ${match.wins[i]}`).join(", ") : "";
      text = t("match.progress", { wins });
    }
    parts.push(el("p", { "data-testid": "match" }, text));
    if (!match.decided) again = t("end.next_game");
  }
  if (state.review) {
    for (const seat of mySeats()) {
      const review = state.review[seat];
      if (!review) continue;
      const div = el("div", { "data-testid": `review-${seat}` });
      div.append(el("p", {}, t("coach.summary", { regret: num(review.total_regret), n: review.decisions })));
      if (review.costliest.length) {
        const list = el("ol");
        review.costliest.forEach((d) => list.append(el("li", {}, decisionText(d))));
        div.append(el("p", {}, t("coach.costliest")), list);
      }
      parts.push(div);
    }
  }
  const votedAlready = live.over && (live.votes || []).some(isMine);
  if (live.over && live.online && live.votes && live.votes.length) {
    const waiting = (live.voters || []).filter((i) => !live.votes.includes(i) && !isMine(i));
    const text = waiting.length ? t("end.waiting", { names: joinNames(waiting.map((i) => seatName(live, i))) }) : "";
    if (votedAlready || text) parts.push(el("p", { class: "votes", "data-testid": "votes" }, votedAlready ? `${t("end.voted")} ${text}` : text));
  }
  const buttons = el("div", { class: "buttons" });
  if (mySeats().length) {
    const button = el("button", { type: "button", class: "primary", "data-testid": "play-again" }, again);
    button.disabled = T.busy || votedAlready;
    button.addEventListener("click", pressOnce(playAgain));
    buttons.append(button);
  }
  if (state.result.game_id) {
    buttons.append(el("a", { href: `/games/${state.result.game_id}`, class: "button-link", "data-testid": "review-link" }, t("end.review")));
  }
  const lobby = el("button", { type: "button", "data-testid": "back-to-lobby" }, t("end.lobby"));
  lobby.addEventListener("click", () => { T.ended = null; go("/"); });
  buttons.append(lobby);
  parts.push(buttons);
  box.replaceChildren(...parts);
  if (opening) (box.querySelector("[data-testid=play-again]") || lobby).focus();
}

async function playAgain() {
  T.voted = true;
  if (T.state && !T.state.over) { T.ended = null; render(T.state); return; }  // it started meanwhile
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
  setError(null);
  try {
    const state = await api(`/api/tables/${T.code}/act`, { seat, seq, game, action });
    T.busy = false;
    await receive(state);
  } catch (err) {
    T.busy = false;
    if (err.code === "stale_seq") await resync(); else showFailure(err);
  } finally {
    T.busy = false;
    if (T.state) {
      render(T.state, { lock: T.animating });
      // the socket's copy came first (moveFocus waited for the answer): the focus moves now
      if (T.focusAfter && !T.animating) moveFocus(T.state, T.state);
    }
  }
}

async function resync() {
  try { await receive(await api(`/api/tables/${T.code}`)); } catch (err) { showFailure(err); }
}

function slotOf(pos) { return T.slots.indexOf(pos); }

function toggleDie(i) {
  if (!myTurn() || T.state.rolls_left === 0) return;
  if (T.held.has(i)) T.held.delete(i); else T.held.add(i);
  render(T.state);
  dieNode(i).focus();
  const held = [...T.held].sort((a, b) => slotOf(a) - slotOf(b)).map((p) => T.state.dice[p]);
  say(() => (held.length ? t("status.holding", { dice: diceText(held) }) : t("status.holding_none")));
}

async function rollNow() {
  if (!myTurn() || T.state.rolls_left === 0) return;
  if (T.held.size === 5) { setError(new ApiError("all held", "all_held")); return; }
  // the places (not the dice: the server renumbers them) that roll
  const places = [0, 1, 2, 3, 4].filter((k) => !T.held.has(T.slots[k]));
  const before = T.version.join(":");
  T.focusAfter = "roll";
  await act({ type: "roll", hold: [...T.held].sort() });
  if (T.version.join(":") !== before) await tumble(places.map((k) => T.slots[k]), 450);
}

function chooseBox(box) {
  if (!myTurn()) return;
  if (T.selected === box) { scoreNow(); return; }
  T.selected = box;
  render(T.state);
  const button = document.querySelector(`button[data-testid="box-${T.state.current}-${box}"]`);
  if (button) button.focus();
  say(() => t("status.selected", { box: boxName(box), points: T.state.options[box] }));
}

function scoreNow() {
  if (!myTurn() || !T.selected) return;
  const box = T.selected;
  T.selected = null;
  T.focusAfter = "turn";
  act({ type: "score", box });
}

async function askHint() {
  if (!myTurn() || T.hintPending) return;
  const node = $("hint");
  T.hintPending = true;
  node.dataset.state = "computing";  // the coach may first have to load its table
  node.replaceChildren(el("p", { class: "thinking", "data-testid": "hint-progress" }, t("coach.thinking")));
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
    if (T.state) render(T.state, { lock: T.animating });
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
      if (T.netError) { T.netError = false; setError(null); }  // back in sync
    } else if (data.type === "presence") {
      T.queue = T.queue.then(() => showPresence(data.connected));
    } else if (data.type === "hello") {
      T.mine = data.seats || [data.seat];
    } else if (data.type === "error" && data.status === 404) setError(new ApiError(data.error, data.code, data.params));
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
    // retry with backoff (0.5 s doubling to 4 s), jittered: when a server dies, its pages
    // do not all reach the next one (through the load balancer) at the same instant
    setConnection("reconnecting");
    T.retry = Math.min(T.retry + 1, 4);
    const delay = 250 * 2 ** T.retry * (0.5 + Math.random() / 2);
    setTimeout(() => { if (T.socket === socket) connect(); }, delay);
  };
}

const POLL_MS = 3000;
function startPolling(reason) {
  T.socket = null;
  setConnection("polling", reason || "");
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
  T.state = null; T.version = [-1, -1]; T.slots = [0, 1, 2, 3, 4];
  T.mine = []; T.ended = null; T.voted = false;
  try {
    await loadSession();
    const state = await api(`/api/tables/${T.code}`);
    T.mine = state.mine || [];
    await receive(state);
    connect();
  } catch (err) {
    showFailure(err);
    $("board").hidden = false;
    $("tray").hidden = false;
    $("table-code").textContent = T.code;
  }
}

// ------------------------------------------------------------------ charts (SVG, with axes)
const SVG = "http://www.w3.org/2000/svg";
function svgEl(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = String(text);
  return node;
}

// A line chart: `series` [{points: [y...], color, label}], x from 0; axes with ticks and titles.
function lineChart({ series, xLabel, yLabel, aria, xFrom = 1, dots = null, id = "" }) {
  // drawn at the width it is shown at, so that its labels keep their size on a phone
  const room = document.querySelector("main").clientWidth - 24;
  const w = Math.round(Math.min(760, Math.max(300, room))), h = w < 500 ? 220 : 260;
  const left = 52, right = 14, top = 14, bottom = 44;
  const n = Math.max(...series.map((s) => s.points.length), 1);
  const all = series.flatMap((s) => s.points);
  const max = Math.max(50, Math.ceil(Math.max(...all, 0) / 50) * 50);
  const x = (i) => left + (n > 1 ? i * (w - left - right) / (n - 1) : (w - left - right) / 2);
  const y = (v) => h - bottom - v * (h - top - bottom) / max;
  const svg = svgEl("svg", { viewBox: `0 0 ${w} ${h}`, class: "chart", role: "img", "aria-label": aria });
  if (id) svg.setAttribute("id", id);
  const step = max > 200 ? 100 : 50;
  for (let v = 0; v <= max; v += step) {
    svg.append(svgEl("line", { x1: left, x2: w - right, y1: y(v), y2: y(v), class: "grid" }));
    svg.append(svgEl("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end" }, v));
  }
  svg.append(svgEl("line", { x1: left, x2: left, y1: top, y2: h - bottom, class: "axis" }));
  svg.append(svgEl("line", { x1: left, x2: w - right, y1: h - bottom, y2: h - bottom, class: "axis" }));
  const every = Math.max(1, Math.ceil(n / Math.max(4, Math.floor((w - left) / 40))));
  for (let i = 0; i < n; i += every) {
    svg.append(svgEl("line", { x1: x(i), x2: x(i), y1: h - bottom, y2: h - bottom + 4, class: "axis" }));
    svg.append(svgEl("text", { x: x(i), y: h - bottom + 16, "text-anchor": "middle" }, i + xFrom));
  }
  svg.append(svgEl("text", { x: (left + w - right) / 2, y: h - 6, "text-anchor": "middle" }, xLabel));
  svg.append(svgEl("text", { x: 14, y: (top + h - bottom) / 2, "text-anchor": "middle",
    transform: `rotate(-90 14 ${(top + h - bottom) / 2})` }, yLabel));
  for (const s of series) {
    svg.append(svgEl("polyline", { points: s.points.map((v, i) => `${x(i)},${y(v)}`).join(" "),
      fill: "none", stroke: s.color, "stroke-width": 2.5 }));
    s.points.forEach((v, i) => {
      const color = dots ? dots(i) : s.color;
      const dot = svgEl("circle", { cx: x(i), cy: y(v), r: dots ? 4.5 : 3, fill: color });
      dot.append(svgEl("title", {}, `${s.label ? s.label + ": " : ""}${v}`));
      svg.append(dot);
    });
  }
  return svg;
}
const OUTCOME_COLOR = { win: "#14603d", draw: "#a87c00", loss: "#b00d27" };
const SEAT_COLOR = ["#14603d", "#b00d27", "#a87c00", "#2457c5"];

// ------------------------------------------------------------------ statistics
const S = { data: null };
function pct(x) { return x === null || x === undefined ? "–" : `${num(100 * x, 1)}%`; }

function statsRow(label, s) {
  const tr = el("tr");
  tr.append(el("th", { scope: "row" }, label));
  for (const v of [s.games, s.wins, s.draws, s.losses, pct(s.win_rate), s.mean_score ?? "–", s.best_score ?? "–", s.yahtzees, pct(s.upper_bonus_rate)]) {
    tr.append(el("td", {}, v));
  }
  return tr;
}

function statsTable(caption, rows, testid) {
  const wrap = el("div", { class: "scroll-x", tabindex: "0", role: "region", "aria-label": caption });
  const table = el("table", { class: "stats", "data-testid": testid });
  table.append(el("caption", {}, caption));
  const head = el("tr");
  head.append(el("th", { scope: "col" }, t("stats.opponents")));
  for (const h of ["games", "wins", "draws", "losses", "win_rate", "mean", "best", "yahtzees", "upper_bonus"]) head.append(el("th", { scope: "col" }, t(`stats.${h}`)));
  table.append(head, ...rows);
  wrap.append(table);
  return wrap;
}

const opponentsName = (key) => (key === "humans" ? t("stats.humans") : key.split("+").map(levelName).join(" + "));

function renderStats(s) {
  const body = $("stats-body");
  const o = s.overall;
  const grid = el("div", { class: "stat-grid" });
  for (const [id, label, value] of [["games", "games", o.games], ["wins", "wins", o.wins], ["draws", "draws", o.draws],
    ["win-rate", "win_rate", pct(o.win_rate)], ["mean-score", "mean", o.mean_score ?? "–"], ["best-score", "best", o.best_score ?? "–"],
    ["yahtzees", "yahtzees", o.yahtzees], ["upper-bonus", "upper_bonus", pct(o.upper_bonus_rate)]]) {
    const card = el("div", { class: "stat", "data-testid": `stat-${id}` });
    card.append(el("b", {}, value), document.createTextNode(t(`stats.${label}`)));
    grid.append(card);
  }
  const parts = [el("p", {}, t("stats.player", { name: s.name })), grid,
    statsTable(t("stats.by_opponents"), Object.entries(s.by_opponents).map(([k, v]) => statsRow(opponentsName(k), v)), "by-opponents"),
    statsTable(t("stats.by_mode"), [statsRow(t("stats.solo"), s.by_mode.solo), statsRow(t("stats.online"), s.by_mode.online)], "by-mode"),
    el("h2", {}, t("stats.history"))];
  if (s.history.length) {
    parts.push(lineChart({
      series: [{ points: s.history.map((g) => g.score), color: "#5d6670" }],
      dots: (i) => OUTCOME_COLOR[s.history[i].outcome], id: "chart",
      xLabel: t("stats.axis_game"), yLabel: t("stats.axis_score"),
      aria: `${t("stats.chart_label", { n: s.history.length })}: ${s.history.map((g) => g.score).join(", ")}`,
    }));
    const legend = el("ul", { class: "legend" });
    for (const k of ["win", "draw", "loss"]) {
      const li = el("li");
      li.append(el("span", { class: `swatch sw-${k}`, "aria-hidden": "true" }), document.createTextNode(t(`stats.${k}`)));
      legend.append(li);
    }
    parts.push(legend, el("h2", {}, t("stats.recent")));
    const list = el("ul", { class: "recent" });
    for (const g of s.history.slice(-10).reverse()) {
      const li = el("li");
      li.append(el("span", {}, t("stats.recent_line", { score: g.score, outcome: t(`stats.${g.outcome}`), opponents: opponentsName(g.opponents) })));
      if (g.game_id) li.append(el("a", { href: `/games/${g.game_id}`, class: "button-link", "data-testid": "review-link" }, t("lobby.review")));
      list.append(li);
    }
    parts.push(list);
  } else parts.push(el("p", {}, t("stats.no_history")));
  body.replaceChildren(...parts);
}

async function showStats() {
  const body = $("stats-body");
  S.data = null;
  await loadSession();
  if (!ME.player) { body.replaceChildren(el("p", {}, t("stats.none"))); return; }
  try {
    S.data = await api("/api/stats", {});
    renderStats(S.data);
  } catch (err) { body.replaceChildren(el("p", { class: "error" }, errorText(err))); }
}

// ------------------------------------------------------------------ game review
const R = { data: null, round: 1 };

function reviewSeatName(review, seat) {
  return seatName({ seats: review.seats }, seat);
}

function renderReview(r) {
  const body = $("review-body");
  const [code] = r.id.split("-");
  const parts = [el("p", {}, t("review.intro", { code, n: r.game + 1, rules: ruleName(r.rules) }))];
  const summary = el("ul", { class: "review-seats", "data-testid": "review-summary" });
  r.seats.forEach((_, seat) => {
    const li = el("li");
    li.append(el("span", { class: `swatch sw-${seat}`, "aria-hidden": "true" }),
      document.createTextNode(t("review.final", { name: reviewSeatName(r, seat), total: r.totals[seat], loss: num(r.total_loss[seat]) })));
    summary.append(li);
  });
  parts.push(summary, el("h2", {}, t("review.timeline")));
  parts.push(lineChart({
    series: r.seats.map((_, seat) => ({ points: r.timeline[seat], color: SEAT_COLOR[seat % 4], label: reviewSeatName(r, seat) })),
    xLabel: t("review.axis_turn"), yLabel: t("review.axis_expected"), xFrom: 0, id: "review-chart",
    aria: t("review.timeline_label"),
  }));
  parts.push(el("h2", {}, t("review.costliest")));
  r.seats.forEach((_, seat) => {
    parts.push(el("h3", {}, t("review.costliest_of", { name: reviewSeatName(r, seat) })));
    const costly = r.costliest[seat] || [];
    if (!costly.length) { parts.push(el("p", {}, t("review.no_mistakes"))); return; }
    const list = el("ol", { class: "costly", "data-testid": `costliest-${seat}` });
    for (const d of costly) {
      list.append(el("li", {}, t("review.costly_line", { round: d.round, roll: 3 - d.rolls_left, dice: diceText(d.dice),
        move: describeMove(d.dice, d.action), best: describeMove(d.dice, d.best_action), loss: num(d.loss) })));
    }
    parts.push(list);
  });
  parts.push(el("h2", {}, t("review.replay")), replayer(r));
  parts.push(el("h2", {}, t("review.turns")));
  r.seats.forEach((_, seat) => {
    const details = el("details", { class: "seat-turns", "data-testid": `turns-${seat}` });
    if (seat === 0) details.open = true;
    details.append(el("summary", {}, t("review.seat_turns", { name: reviewSeatName(r, seat) })));
    const wrap = el("div", { class: "scroll-x", tabindex: "0", role: "region",
      "aria-label": t("review.seat_turns", { name: reviewSeatName(r, seat) }) });
    const table = el("table", { class: "turns" });
    const head = el("tr");
    for (const h of ["turn", "roll", "dice", "choice", "best", "loss"]) head.append(el("th", { scope: "col" }, t(`review.col_${h}`)));
    table.append(head);
    for (const turn of r.turns.filter((x) => x.seat === seat)) {
      turn.decisions.forEach((d, k) => {
        const tr = el("tr", { "data-testid": "review-decision" });
        if (k === 0) tr.classList.add("turn-start");
        if (d.loss > 0.005) tr.classList.add("lost");
        tr.append(el("td", { class: "num" }, k === 0 ? turn.round : ""));
        tr.append(el("td", { class: "num" }, 3 - d.rolls_left));
        const dice = el("td");
        d.dice.forEach((v, i) => {
          const kept = d.action < 32 && (d.action >> i & 1);
          dice.append(el("span", kept ? { class: "kept-die" } : {}, v), document.createTextNode(i < 4 ? " " : ""));
        });
        tr.append(dice);
        let choice = describeMove(d.dice, d.action);
        if (d.action >= 32 && turn.box) choice = t("review.points", { box: choice, points: turn.points + (turn.bonus ? ` (+${turn.bonus})` : "") });
        tr.append(el("td", {}, choice));
        tr.append(el("td", {}, d.action === d.best_action || d.loss <= 1e-6 ? t("review.best_same") : describeMove(d.dice, d.best_action)));
        tr.append(el("td", { class: "num" }, d.loss > 0.005 ? `−${num(d.loss)}` : "0"));
        table.append(tr);
      });
    }
    wrap.append(table);
    details.append(wrap);
    parts.push(details);
  });
  const back = el("a", { href: "/", class: "button-link" }, t("review.back"));
  parts.push(el("p", {}, ""));
  parts[parts.length - 1].append(back);
  body.replaceChildren(...parts);
}

// Small dice (not buttons) for the review; the kept ones ringed.
function miniDice(dice, action) {
  const kept = action < 32 ? dice.filter((_, i) => action >> i & 1) : [];
  const label = kept.length ? t("review.dice_label", { dice: diceText(dice), kept: diceText(kept) })
    : t("review.dice_label_none", { dice: diceText(dice) });
  const row = el("span", { class: "mini-dice", role: "img", "aria-label": label });
  dice.forEach((v, i) => {
    const die = el("span", { class: "die mini", "data-face": v, "data-value": v });
    if (action < 32 && (action >> i & 1)) die.classList.add("kept");
    for (let p = 0; p < 9; p++) die.append(el("span", { class: "pip", "aria-hidden": "true" }));
    row.append(die);
  });
  return row;
}

// Turn by turn: every seat's rolls, holds and box in one turn, stepped with Previous / Next.
function replayer(r) {
  const box = el("div", { class: "replay", "data-testid": "replay" });
  const prev = el("button", { type: "button", "data-testid": "review-prev" }, t("review.prev"));
  const next = el("button", { type: "button", "data-testid": "review-next" }, t("review.next"));
  const label = el("strong", { "data-testid": "review-round", "aria-live": "polite" });
  const nav = el("div", { class: "replay-nav" });
  nav.append(prev, label, next);
  const body = el("div", { class: "replay-body" });
  box.append(nav, body);
  const show = (n) => {
    R.round = Math.min(13, Math.max(1, n));
    label.textContent = t("review.round", { n: R.round });
    prev.disabled = R.round === 1; next.disabled = R.round === 13;
    const seats = r.turns.filter((x) => x.round === R.round).map((turn) => {
      const card = el("div", { class: "replay-seat" });
      card.append(el("h3", {}, reviewSeatName(r, turn.seat)));
      const list = el("ol");
      for (const d of turn.decisions) {
        const li = el("li");
        li.append(miniDice(d.dice, d.action));
        let move = describeMove(d.dice, d.action);
        if (d.action >= 32) move = t("review.points", { box: move, points: turn.points + (turn.bonus ? ` (+${turn.bonus})` : "") });
        li.append(el("span", {}, move));
        if (d.loss > 0.005) li.append(el("span", { class: "lost" }, t("review.lost_vs", { best: describeMove(d.dice, d.best_action), loss: num(d.loss) })));
        list.append(li);
      }
      card.append(list, el("p", {}, t("review.after", { expected: num(turn.decisions[turn.decisions.length - 1].expected, 1) })));
      return card;
    });
    body.replaceChildren(...seats);
  };
  prev.addEventListener("click", () => { show(R.round - 1); (prev.disabled ? next : prev).focus(); });
  next.addEventListener("click", () => { show(R.round + 1); (next.disabled ? prev : next).focus(); });
  show(R.round || 1);
  return box;
}

async function showReview(id) {
  const body = $("review-body");
  R.data = null; R.round = 1;
  body.replaceChildren(el("p", {}, t("review.loading")));
  try {
    R.data = await api(`/api/games/${encodeURIComponent(id)}`, {});  // the session's seats
    renderReview(R.data);
  } catch (err) { body.replaceChildren(el("p", { class: "error", "data-testid": "review-error" }, errorText(err))); }
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

function currentView() {
  return ["lobby", "table", "stats", "review"].find((id) => !$(id).hidden);
}

function route() {
  const path = location.pathname;
  for (const id of ["lobby", "table", "stats", "review"]) $(id).hidden = true;
  if (T.socket) { const s = T.socket; T.socket = null; s.close(); }
  stopPolling();
  setConnection("online");
  const match = path.match(/^\/t\/([A-Za-z0-9]+)$/);
  const game = path.match(/^\/games\/([A-Za-z0-9]+-\d+)$/);
  if (match) { $("table").hidden = false; showTable(match[1]); }
  else if (game) { $("review").hidden = false; showReview(game[1]); }
  else if (path === "/stats") { $("stats").hidden = false; showStats(); }
  else { $("lobby").hidden = false; showLobby(); }
}

async function start() {
  try { config = await api("/api/config"); } catch { /* keep the defaults */ }
  I18N.languages = config.languages && config.languages.length ? config.languages : [{ code: "en", name: "English" }];
  try { I18N.base = await fetchJSON("/static/i18n/en.json"); } catch { I18N.base = {}; }
  const codes = I18N.languages.map((l) => l.code);
  try { await setLanguage(pickLanguage(codes)); } catch { await setLanguage("en"); }
  applySettings();
  route();
}

document.addEventListener("DOMContentLoaded", () => {
  for (let i = 0; i < 5; i++) {
    const die = dieNode(i);
    for (let p = 0; p < 9; p++) die.append(el("span", { class: "pip", "aria-hidden": "true" }));
    die.addEventListener("click", () => toggleDie(i));
  }
  for (const form of document.querySelectorAll("form")) form.addEventListener("submit", (e) => e.preventDefault());
  if (window.ResizeObserver) {  // the tray's height, for the CSS scroll padding around it
    new ResizeObserver(([entry]) => {
      document.documentElement.style.setProperty("--tray-h", `${Math.ceil(entry.target.getBoundingClientRect().height)}px`);
    }).observe($("tray"));
  }
  // a shared link's code is in the field from the start: a Join pressed before the lobby's
  // words have loaded joins that table (it said "no code")
  if (params.get("join")) $("join-code").value = params.get("join");
  $("seats").addEventListener("change", renderSeatKinds);
  $("name").addEventListener("input", () => { $("name").dataset.default = "false"; });
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
  $("signup").addEventListener("click", () => whileBusy(["signup", "signin"], signUp));
  $("signin").addEventListener("click", () => whileBusy(["signup", "signin"], signIn));
  $("signout").addEventListener("click", () => whileBusy(["signout"], () => accountAction("signout", {})));
  $("signout-everywhere").addEventListener("click", () => whileBusy(["signout-everywhere"], () => accountAction("signout", { everywhere: true })));
  $("start").addEventListener("click", () => whileBusy(["start"], async () => {
    try { await receive(await api(`/api/tables/${T.code}/start`, { seat: 0 })); }
    catch (err) { if (err.status === 409) await resync(); else showFailure(err); }
  }));
  $("lang").addEventListener("change", (e) => switchLanguage(e.target.value));
  for (const key of ["pace", "theme", "motion"]) {
    $(key).addEventListener("change", (e) => { settings[key] = e.target.value; saveSettings(); });
  }
  $("sound").addEventListener("change", (e) => { settings.sound = e.target.checked; saveSettings(); if (settings.sound) sound.play("score"); });
  // the settings panel closes on Escape (focus back on its button) or a click elsewhere
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && $("settings").open) { $("settings").open = false; $("settings").querySelector("summary").focus(); }
  });
  document.addEventListener("click", (e) => { if ($("settings").open && !$("settings").contains(e.target)) $("settings").open = false; });
  for (const a of document.querySelectorAll(".top a")) {
    a.addEventListener("click", (e) => { e.preventDefault(); go(a.getAttribute("href")); });
  }
  document.addEventListener("keydown", (e) => {
    if ($("table").hidden || e.target.matches("input, select, textarea, summary") || e.ctrlKey || e.metaKey || e.altKey) return;
    if (/^[1-5]$/.test(e.key)) toggleDie(T.slots[Number(e.key) - 1]);
    else if (e.key === "r" || e.key === "R") rollNow();
    else if (e.key === "s" || e.key === "S") scoreNow();
    else if (e.key === "h" || e.key === "H") askHint();
    else if (e.key === "Enter" && T.selected && !e.target.matches("button, a")) scoreNow();
  });
  window.addEventListener("popstate", route);
  start();
});

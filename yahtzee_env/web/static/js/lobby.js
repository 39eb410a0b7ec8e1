// The lobby: a new table (solo or online), joining one by its code, the session's open
// tables, and the account (sign up, sign in, sign out).
import { $, config, el, go, params, store } from "./page.js";
import { ME, ApiError, api, loadSession, whileBusy } from "./net.js";
import { rememberRename } from "./rename.js";
import { bankName, errorText, joinNames, levelName, ruleName, seatName, t, tn } from "./words.js";
import { renderYourMove } from "./notify.js";
import * as care from "./care.js";
import * as mail from "./mail.js";
import { ratingText } from "./leaderboard.js";
import * as offline from "./offline.js";
import { CLIENT_SEED } from "./fair_dice.js";
import { NEXT_SEED } from "./table/seed.js";

function seatOptions(i) {
  if (i === 0) return [["human", t("lobby.you")]];
  return [["friend", t("lobby.friend")], ["human", t("lobby.human")],
    ...mainLevels().map((lv) => [lv, t("lobby.cpu", { level: levelName(lv) })])];
}
// The seed's levels first (the server's `main_levels`); the others under "more levels".
const mainLevels = () => config.main_levels;
const moreLevels = () => config.levels.filter((lv) => !mainLevels().includes(lv));
function moreGroup(label) {
  const more = moreLevels();
  if (!more.length) return [];
  const group = el("optgroup", { label: t("lobby.more_levels") });
  for (const lv of more) group.append(el("option", { value: lv }, label(lv)));
  return [group];
}

// The lobby's choices are remembered in the browser (`yz.lobby`), and so is whether More
// options is open (`yz.more`): Play plays the last choices, or 2 seats against the server's
// fill level (medium) the first time.
const SAVED = "yz.lobby";
const saved = () => store.get(SAVED, {}) || {};
const CHECKS = { match: "match", coach: "coach", public: "public", duplicate: "duplicate", listOpen: "list-open",
  inPage: "play-in-page" };

function renderSeatKinds() {
  const box = $("seat-kinds");
  const previous = [...box.querySelectorAll("select")].map((s) => s.value);
  const kinds = previous.length ? previous : (saved().kinds || []);
  box.querySelectorAll(".row").forEach((r) => r.remove());
  // the host, then the fill level, then the other main levels
  const defaults = ["human", config.fill, ...mainLevels().filter((lv) => lv !== config.fill)];
  for (let i = 0; i < Number($("seats").value); i++) {
    const row = el("div", { class: "row" });
    const id = `seat-kind-${i}`;
    row.append(el("label", { for: id }, t("lobby.seat", { n: i + 1 })));
    const select = el("select", { id, "data-testid": id });
    for (const [value, label] of seatOptions(i)) select.append(el("option", { value }, label));
    if (i > 0) select.append(...moreGroup((lv) => t("lobby.cpu", { level: levelName(lv) })));
    const values = [...select.options].map((o) => o.value);
    const want = [kinds[i], defaults[i]].find((v) => v && values.includes(v));
    select.value = want || select.options[0].value;
    if (i === 0) select.disabled = true;
    row.append(select);
    box.append(row);
  }
  offline.applyOffline();  // offline, only the levels that play in the page
}

// The turn clock: a choice among the server's (`config.turn_timers`: off, 2 min, 1 day, 3 days).
export function clockName(seconds) {
  if (!seconds) return t("lobby.clock_off");
  if (seconds < 3600) return tn("lobby.clock_minutes", Math.round(seconds / 60));
  if (seconds < 86400) return tn("lobby.clock_hours", Math.round(seconds / 3600));
  return tn("lobby.clock_days", Math.round(seconds / 86400));
}

// The time bank (issue 62): a preset's value is "add:cap" (`config.time_banks`), "" for the
// fixed clock; its words are `bankName`'s.
const chosenBank = () => {
  const [add, cap] = ($("time-bank").value || "").split(":").map(Number);
  return add && cap ? { add, cap } : null;
};
// a bank replaces the fixed clock: its row folds away while one is chosen
const showClockRows = () => { $("turn-timer-row").hidden = Boolean(chosenBank()); };

// The choices the server takes (`config`): how many seats, the turn clock's choices. The
// remembered ones first.
const SEATS_SHOWN = 2;
function renderLobbyChoices() {
  const last = saved();
  const seats = $("seats");
  if (!seats.options.length) {
    for (let n = config.min_seats; n <= config.max_seats; n++) seats.append(el("option", { value: n }, n));
    const n = Number(last.seats) || SEATS_SHOWN;
    seats.value = String(Math.min(config.max_seats, Math.max(config.min_seats, n)));
    for (const [key, id] of Object.entries(CHECKS)) $(id).checked = last[key] === true;
  }
  const timer = $("turn-timer");
  const was = timer.value || String(last.timer ?? config.turn_timer_online);
  timer.replaceChildren(...config.turn_timers.map((s) => el("option", { value: s }, clockName(s))));
  timer.value = config.turn_timers.map(String).includes(was) ? was : String(config.turn_timer_online);
  const bank = $("time-bank");
  const wasBank = bank.options.length ? bank.value : (last.bank ?? "");
  const banks = config.time_banks.map(([add, cap]) => el("option", { value: `${add}:${cap}` }, bankName(add, cap)));
  bank.replaceChildren(el("option", { value: "" }, t("lobby.bank_off")), ...banks);
  bank.value = [...bank.options].some((o) => o.value === wasBank) ? wasBank : "";
  showClockRows();
}

function remember() {
  const kinds = [...$("seat-kinds").querySelectorAll("select")].map((s) => s.value);
  const choices = { seats: Number($("seats").value), kinds, rules: $("rules").value, fill: $("fill").value,
    timer: Number($("turn-timer").value), bank: $("time-bank").value, quickSeats: $("quick-seats").value, quickWait: $("quick-wait").value };
  for (const [key, id] of Object.entries(CHECKS)) choices[key] = $(id).checked;
  store.set(SAVED, choices);
}
export const lastChoice = (key) => saved()[key];

// The name in the field is remembered too (`yz.name`: typed, or the session's once the
// server said it), so that a reload, or a page opened while the server is out of reach,
// keeps it.
const NAME = "yz.name";
function showName(name) {
  $("name").value = name;
  store.set(NAME, name);
}

// Play in this page (issue 50): with the option on, a solo game against levels that play in
// the page, with none of the options that need the server's table (the coach, a match,
// spectators, duplicate dice), runs in the page (offline.js's loop) while online too, and
// the server only records its result. Off by default: the server's table offers the coach,
// dice anyone can check, the review and a rating, which a game in the page gives up.
function inPageNow() {
  if (!$("play-in-page").checked || offline.isOffline()) return false;
  const kinds = [...$("seat-kinds").querySelectorAll("select")].slice(1).map((s) => s.value);
  return kinds.length > 0 && kinds.every(offline.canPlayOffline)
    && !["coach", "match", "public", "duplicate"].some((id) => $(id).checked);
}

// What Play and Quick match will do, under their names; which games are rated; an open
// table with no free seat.
export function renderPlayWhat() {
  const kinds = [...$("seat-kinds").querySelectorAll("select")].slice(1).map((s) => s.value);
  const names = kinds.map((k) => (k === "friend" ? t("lobby.a_friend") : k === "human" ? t("lobby.a_player") : t("lobby.cpu_short", { level: levelName(k) })));
  const inPage = inPageNow();
  $("play-what").textContent = !names.length ? "" : t(inPage ? "in_page.play_against" : "lobby.play_against", { names: joinNames(names) });
  $("play").dataset.inPage = inPage ? "true" : "false";
  $("quick-what").textContent = t("quick.what", { n: Number($("quick-seats").value) || config.min_seats });
  const rated = inPage ? "in_page.rated" : !ME.account ? "lobby.rated_guest" : $("coach").checked ? "lobby.rated_coach" : "lobby.rated_yes";
  $("rated-note").textContent = t(rated);
  $("list-open-note").hidden = !($("list-open").checked && !kinds.includes("friend"));
}

export function renderLobbyWords() {
  renderLobbyChoices();
  const rules = $("rules"), fill = $("fill");
  const last = saved();
  const r = rules.value || last.rules, f = fill.value || last.fill;
  rules.replaceChildren(...config.rules.map((x) => el("option", { value: x }, ruleName(x))));
  fill.replaceChildren(...mainLevels().map((lv) => el("option", { value: lv }, levelName(lv))), ...moreGroup(levelName));
  rules.value = r && config.rules.includes(r) ? r : config.rules[0];
  fill.value = f && config.levels.includes(f) ? f : (config.levels.includes(config.fill) ? config.fill : config.levels[0]);
  renderSeatKinds();
  $("name").placeholder = t("lobby.name_placeholder");
  $("play-in-page-note").textContent = t("in_page.option_note", { levels: (config.offline_levels || []).map(levelName).join(", ") });
  renderPlayWhat();
}

export async function ensurePlayer(name, { timeout } = {}) {
  name = (name || "").trim();
  if (!ME.loaded) await loadSession();
  if (!ME.player || (name && name !== ME.player.name)) {
    if (!name) { $("name").focus(); throw new ApiError("no name", "need_name"); }
    Object.assign(ME, await api("/api/session", { name }, { retries: 0, timeout }));
  }
  return ME.player;
}

function lobbyChoices(online) {
  const seats = [...$("seat-kinds").querySelectorAll("select")].map((s) => s.value);
  const choices = {
    name: $("name").value, seats, online, rules: $("rules").value, fill: $("fill").value,
    match: $("match").checked, coach: $("coach").checked, public: $("public").checked,
    duplicate: $("duplicate").checked,
  };
  const bank = chosenBank();
  if (online && bank) choices.time_bank = bank;
  else if (online) choices.turn_timer = Number($("turn-timer").value) || 0;
  return choices;
}

// No server to play with (the browser offline, or the server out of reach: issue 57): a solo
// game against levels the page plays starts here at once, and the banner says so (played in
// this page, recorded when the server is back); a level that needs the server is named, and
// the strongest level the page plays is offered in its place (`lobby-offer`).
const PLAY_TIMEOUT_MS = 6000;  // a solo Play waits no longer for the server, then plays here

async function playHere(choices) {
  const away = [...new Set(choices.seats.slice(1).filter((k) => !offline.canPlayOffline(k)))];
  if (!away.length) {
    await offline.startGame({ seats: choices.seats, rules: choices.rules, name: choices.name.trim() || (ME.player && ME.player.name) });
    return;
  }
  const instead = offline.pageLevel();
  if (!instead) throw new ApiError("no level plays in the page", "offline");
  $("lobby-error").textContent = t("offline.needs_server", { levels: joinNames(away.map(levelName)), level: levelName(instead) });
  const button = el("button", { type: "button", id: "play-here-instead", class: "primary", "data-testid": "play-here-instead" },
    t("offline.play_instead", { level: levelName(instead) }));
  button.addEventListener("click", () => whileBusy(["play-here-instead"], async () => {
    for (const select of $("seat-kinds").querySelectorAll("select")) {
      if (!away.includes(select.value)) continue;
      Object.assign(select.dataset, { wanted: select.value, instead });  // back with the server
      select.value = instead;
    }
    renderPlayWhat();
    await createTable(false);
  }));
  $("lobby-offer").replaceChildren(button);
  $("lobby-offer").hidden = false;
}

// Play: a table with the last choices, solo (online when a seat is a friend's: they join
// online; with no server, in the page against the levels it plays); Create online table:
// the same, online.
async function createTable(online) {
  $("lobby-error").textContent = "";
  $("lobby-offer").hidden = true;
  $("lobby-offer").replaceChildren();
  const friends = [...$("seat-kinds").querySelectorAll("select")].some((s) => s.value === "friend");
  const solo = !online && !friends;
  const asked = lobbyChoices(false);  // read now: no answer redraws the lobby (offline.applyOffline)
  try {
    if (!online && offline.isOffline()) {
      if (friends) throw new ApiError("friends", "friends_online");
      await playHere(asked);
      return;
    }
    const timeout = solo ? PLAY_TIMEOUT_MS : undefined;
    if (!online && inPageNow()) {  // online, in the page by choice: the server records the result
      const player = await ensurePlayer(asked.name, { timeout });
      await offline.startGame({ seats: asked.seats, rules: asked.rules, name: player.name, played: "in_page" });
      return;
    }
    const choices = lobbyChoices(online || friends);
    const listed = choices.online && $("list-open").checked;
    if (listed && !friends) throw new ApiError("an open table needs a free seat", "no_free_seat");  // as the server says
    await ensurePlayer(choices.name, { timeout });
    const reply = await api("/api/tables", choices, { retries: 0, timeout });
    if (listed) await api(`/api/tables/${reply.code}/list`, { on: true }, { retries: 0 });  // the lobby's open tables
    go(`/t/${reply.code}`);
  } catch (err) {
    if (solo && err.code === "network") {  // no answer: play here (or say why not)
      try { await playHere(asked); return; } catch (again) { err = again; }
    }
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
      const reply = await api(`/api/tables/${encodeURIComponent(code)}/join`, { name: player.name }, { retries: 0 });
      rememberRename(code, reply.joined_as);  // "you play as Hostie 2" on the table's page
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
  try { L.tables = (await api("/api/me/tables")).tables.slice(0, 12); } catch { L.tables = []; }
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

export function renderMyTables() {
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
    const entry = L.tables.find((x) => x.code === code);
    if (entry && entry.rated && !state.over) text.append(el("small", { class: "tag", "data-testid": `rated-${code}` }, t("lobby.rated_tag")));
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
  renderYourMove(L.states, go);  // the tables where it is your move, soonest deadline first
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
  if (signedIn) mail.load();
  $("rating").textContent = ME.account && ME.rating ? ratingText(ME.rating) : "";
  if (config.turn_timers.length) renderPlayWhat();
}

async function accountAction(what, body) {
  $("account-error").textContent = "";
  try {
    const reply = await api(`/api/account/${what}`, body, { retries: 0 });
    Object.assign(ME, reply, { loaded: true });
    delete ME.recovery_codes;
    care.showCodes(reply.recovery_codes || null);  // at sign-up: shown once
    if (ME.player) showName(ME.player.name);
    await loadSession();  // the account's rating
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

// The client seed for the next table (More options, issue 58): kept until a table takes it
// (table/seed.js's `NEXT_SEED`, once); empty, each table gets a new one at random.
function showNextSeed() {
  const input = $("lobby-client-seed");
  const seed = store.get(NEXT_SEED, "");
  if (document.activeElement !== input) input.value = typeof seed === "string" ? seed : "";
  $("lobby-client-seed-error").textContent = "";
  input.removeAttribute("aria-invalid");
}

function takeNextSeed() {
  const input = $("lobby-client-seed");
  const seed = input.value.trim();
  const ok = !seed || CLIENT_SEED.test(seed);
  $("lobby-client-seed-error").textContent = ok ? "" : t("dice.client_seed_invalid");
  if (ok) input.removeAttribute("aria-invalid"); else input.setAttribute("aria-invalid", "true");
  store.set(NEXT_SEED, ok && seed ? seed : null);
}

export async function showLobby() {
  showNextSeed();
  const typed = store.get(NAME, "");
  const remembered = typeof typed === "string" && typed.trim() ? typed : "";
  if (remembered) $("name").value = remembered;  // at once, before the server answers (or not)
  await loadSession();
  if (!remembered && ME.player) showName(ME.player.name);
  renderAccount();
  renderLobbyWords();
  renderMyTables();
  offline.applyOffline();
  offline.renderResume();
  loadMyTables();
}

// Redraw in the page's language (after a switch).
export function redraw() { renderLobbyWords(); renderMyTables(); renderAccount(); offline.applyOffline(); offline.renderResume(); }

export function setup() {
  // a shared link's code is in the field from the start: a Join pressed before the lobby's
  // words have loaded joins that table (it said "no code")
  if (params.get("join")) $("join-code").value = params.get("join");
  $("seats").addEventListener("change", renderSeatKinds);
  $("lobby-form").addEventListener("change", () => { remember(); renderPlayWhat(); showClockRows(); });
  const more = $("more-options");
  more.open = store.get("yz.more", false) === true;
  more.addEventListener("toggle", () => store.set("yz.more", more.open));
  $("name").addEventListener("input", () => { $("name").dataset.default = "false"; store.set(NAME, $("name").value); });
  $("lobby-client-seed").addEventListener("input", takeNextSeed);
  const lobbyButtons = ["play", "create-online", "join"];
  // offline, the buttons that need the network are disabled already: Play alone is busy
  // (and after a Play that got no answer, they are disabled again: offline.applyOffline)
  $("play").addEventListener("click", async () => {
    await whileBusy(offline.isOffline() ? ["play"] : lobbyButtons, () => createTable(false));
    offline.applyOffline();
  });
  document.addEventListener("yz-offline", () => { if (!$("lobby").hidden && $("seat-kinds").children.length) renderPlayWhat(); });
  $("create-online").addEventListener("click", () => whileBusy(lobbyButtons, () => createTable(true)));
  $("join").addEventListener("click", () => whileBusy(lobbyButtons, joinTable));
  $("join-code").addEventListener("keydown", (e) => { if (e.key === "Enter") whileBusy(lobbyButtons, joinTable); });
  care.setup(async () => { renderAccount(); await loadSession(); renderAccount(); loadMyTables(); });
  mail.setup();
  $("signup").addEventListener("click", () => whileBusy(["signup", "signin"], signUp));
  $("signin").addEventListener("click", () => whileBusy(["signup", "signin"], signIn));
  $("signout").addEventListener("click", () => whileBusy(["signout"], () => accountAction("signout", {})));
  $("signout-everywhere").addEventListener("click", () => whileBusy(["signout-everywhere"], () => accountAction("signout", { everywhere: true })));
}

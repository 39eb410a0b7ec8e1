// The lobby: a new table (solo or online), joining one by its code, the session's open
// tables, and the account (sign up, sign in, sign out).
import { $, config, el, go, params } from "./page.js";
import { ME, ApiError, api, loadSession, whileBusy } from "./net.js";
import { rememberRename } from "./rename.js";
import { errorText, joinNames, levelName, ruleName, seatName, t } from "./words.js";
import { renderYourMove } from "./notify.js";
import * as care from "./care.js";
import { ratingText } from "./leaderboard.js";

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

function renderSeatKinds() {
  const box = $("seat-kinds");
  const previous = [...box.querySelectorAll("select")].map((s) => s.value);
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
    select.value = previous[i] || (config.levels.includes(defaults[i]) ? defaults[i] : select.options[0].value);
    if (i === 0) select.disabled = true;
    row.append(select);
    box.append(row);
  }
}

// The choices the server takes (`config`): how many seats, the turn timer's range, its
// default and suggestions. The lobby opens with three seats when a table may have them.
const SEATS_SHOWN = 3;
function renderLobbyChoices() {
  const seats = $("seats");
  if (!seats.options.length) {
    for (let n = config.min_seats; n <= config.max_seats; n++) seats.append(el("option", { value: n }, n));
    seats.value = String(Math.min(config.max_seats, Math.max(config.min_seats, SEATS_SHOWN)));
  }
  const timer = $("turn-timer");
  timer.min = "0";
  timer.max = String(config.turn_timer_range[1]);
  if (!timer.value) timer.value = String(config.turn_timer_online);
  $("timer-presets").replaceChildren(...config.turn_timers.map((s) => el("option", { value: s })));
}

export function renderLobbyWords() {
  renderLobbyChoices();
  const rules = $("rules"), fill = $("fill");
  const r = rules.value, f = fill.value;
  rules.replaceChildren(...config.rules.map((x) => el("option", { value: x }, ruleName(x))));
  fill.replaceChildren(...mainLevels().map((lv) => el("option", { value: lv }, levelName(lv))), ...moreGroup(levelName));
  rules.value = r && config.rules.includes(r) ? r : config.rules[0];
  fill.value = f && config.levels.includes(f) ? f : (config.levels.includes(config.fill) ? config.fill : config.levels[0]);
  renderSeatKinds();
  $("name").placeholder = t("lobby.name_placeholder");
}

export async function ensurePlayer(name) {
  name = (name || "").trim();
  if (!ME.loaded) await loadSession();
  if (!ME.player || (name && name !== ME.player.name)) {
    if (!name) { $("name").focus(); throw new ApiError("no name", "need_name"); }
    Object.assign(ME, await api("/api/session", { name }, { retries: 0 }));
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
    if (online && $("list-open").checked) {  // listed in the lobby's open tables
      await api(`/api/tables/${reply.code}/list`, { on: true }, { retries: 0 });
    }
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
  $("rating").textContent = ME.account && ME.rating ? ratingText(ME.rating) : "";
}

async function accountAction(what, body) {
  $("account-error").textContent = "";
  try {
    const reply = await api(`/api/account/${what}`, body, { retries: 0 });
    Object.assign(ME, reply, { loaded: true });
    delete ME.recovery_codes;
    care.showCodes(reply.recovery_codes || null);  // at sign-up: shown once
    if (ME.player) $("name").value = ME.player.name;
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

export async function showLobby() {
  await loadSession();
  if (ME.player) $("name").value = ME.player.name;
  renderAccount();
  renderLobbyWords();
  renderMyTables();
  loadMyTables();
}

// Redraw in the page's language (after a switch).
export function redraw() { renderLobbyWords(); renderMyTables(); renderAccount(); }

export function setup() {
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
  care.setup(async () => { renderAccount(); await loadSession(); renderAccount(); loadMyTables(); });
  $("signup").addEventListener("click", () => whileBusy(["signup", "signin"], signUp));
  $("signin").addEventListener("click", () => whileBusy(["signup", "signin"], signIn));
  $("signout").addEventListener("click", () => whileBusy(["signout"], () => accountAction("signout", {})));
  $("signout-everywhere").addEventListener("click", () => whileBusy(["signout-everywhere"], () => accountAction("signout", { everywhere: true })));
}

// Yatzy without a server (issue 50): the service worker, the offline banner, Install, and
// the local table: a game against the offline levels played in the page, answering the
// table's requests (`/api/tables/OFFLINE/...`, through net.js's `setLocal`) with states in
// the server's shape, so that table.js draws and animates it as any table. The rules are
// game/*.js and the levels policies/models.js (held equal to Python's by
// tests/web/test_offline_equality.py). An unfinished game is kept in IndexedDB and offered
// in the lobby; a finished one waits there until the server takes it (POST
// /api/offline-games: the server replays it, and it counts in My statistics as played
// offline, never rated). The same loop plays a solo game online when the player chose to
// play in the page (`played: "in_page"`, lobby.js): the server only records its result.
// "Offline" here is the browser offline or the server out of reach (net.js's `reach`, issue
// 57: a server that is down, a captive portal): the page says which in one banner, plays the
// levels it can, and sends the games played meanwhile once the server answers again.
import { $, config, el, go } from "./page.js";
import { ApiError, ME, api, drawConnection, loadSession, onReach, serverReachable, setLocal } from "./net.js";
import { levelName, t } from "./words.js";
import { BOX_ACTION_OFFSET, DiceRoller, Game } from "./game/engine.js";
import { NUM_HOLDS } from "./game/dice.js";
import { BOX_NAMES, RuleSet } from "./game/rules.js";
import { encodeSeat } from "./game/observation.js";
import { loadLevel } from "./policies/models.js";

export const LOCAL_CODE = "OFFLINE";
const PREFIX = `/api/tables/${LOCAL_CODE}`;
const L = { record: null, game: null, policies: {}, events: [], gameNo: 0, loading: null, install: null };

// ------------------------------------------------------------------ IndexedDB
// One store, "games": records {id, status: "playing" | "finished", played: "offline" |
// "in_page", rules, seats, names, draws, actions, taps, started, finished}. The draws and
// the actions are the whole game: a resumed game is replayed from them, and the server
// replays a finished one. `taps`: the player's taps on Roll that brought a turn's first roll
// out of the cup (no engine move, not sent: see `inCup`).
function db() {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open("yatzy", 1);
    open.onupgradeneeded = () => open.result.createObjectStore("games", { keyPath: "id" });
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
}

async function inStore(mode, work) {
  const conn = await db();
  try {
    return await new Promise((resolve, reject) => {
      const tx = conn.transaction("games", mode);
      const request = work(tx.objectStore("games"));
      tx.oncomplete = () => resolve(request && request.result);
      tx.onerror = () => reject(tx.error);
    });
  } finally { conn.close(); }
}
const saveRecord = (record) => inStore("readwrite", (s) => s.put(record));
const deleteRecord = (id) => inStore("readwrite", (s) => s.delete(id));
const allRecords = () => inStore("readonly", (s) => s.getAll());
export async function unfinished() {
  try { return (await allRecords()).find((r) => r.status === "playing") || null; } catch { return null; }
}

// ------------------------------------------------------------------ the local table
/** No server to play with: the browser is offline, or the server does not answer. */
export const isOffline = () => !serverReachable();
const browserOffline = () => navigator.onLine === false;
export const canPlayOffline = (kind) => (config.offline_levels || []).includes(kind);
/** The level the page offers in place of one it cannot play: its strongest (the server's
 * `offline_levels` are weakest first). */
export const pageLevel = () => (config.offline_levels || []).at(-1) || null;

async function policy(level) {
  if (!L.policies[level]) L.policies[level] = await loadLevel(level, "/levels/");
  return L.policies[level];
}

/** A new local game: `seats` is ["human", level, ...] (the offline levels only);
 * `played`: "offline" (no network) or "in_page" (online, by the player's choice). */
export async function startGame({ seats, rules, name, played = "offline" }) {
  const bad = seats.slice(1).find((kind) => !canPlayOffline(kind));
  if (seats[0] !== "human" || seats.slice(1).includes("human") || bad !== undefined) {
    throw new ApiError("offline seats", "offline_levels", { levels: (config.offline_levels || []).join(", ") });
  }
  RuleSet.fromSpec(rules);
  const names = [name || t("offline.you"), ...seats.slice(1).map((lv, i) => (seats.indexOf(lv) === i + 1 ? lv : `${lv} ${i + 1}`))];
  const record = {
    id: `${Date.now().toString(36)}-${crypto.getRandomValues(new Uint32Array(2)).join("")}`,
    status: "playing", played, rules, seats, names, draws: [], actions: [], taps: 0, started: Date.now(), finished: null,
  };
  await begin(record);
  go(`/t/${LOCAL_CODE}`);
}

async function begin(record) {
  await Promise.all(record.seats.slice(1).map(policy));
  const game = new Game(record.rules, record.seats.length);
  game.reset(new DiceRoller(globalThis.crypto, record.draws));
  for (const [seat, action] of record.actions) {  // a resumed game: replayed on its own dice
    if (seat !== game.current) throw new RangeError("saved game: a move out of turn");
    game.step(action);
  }
  L.record = record;
  L.game = game;
  L.events = [];
  await keep();
  await cpuMoves();
}

async function keep() {
  L.record.draws = L.game.roller.draws.slice();
  try { await saveRecord(L.record); } catch { /* private mode: the game still plays */ }
}

// A person's turn starts with the dice in the cup (issue 58, item 2), here as at the
// server's tables: the engine has dealt the turn's first roll, and the page shows it on the
// player's tap on Roll (`firstRoll`); the levels' turns roll by themselves. A tap is no
// engine move: the record counts the taps beside its moves (a record saved before the cup,
// with no count, has every turn rolled), and the state's `seq` counts both.
function inCup() {
  const game = L.game;
  const r = L.record;
  if (game.over || game.current !== 0) return false;
  const done = r.actions.filter(([seat, action]) => seat === 0 && action >= NUM_HOLDS).length;
  return (r.taps ?? Infinity) <= done;
}

const seqNow = () => L.record.actions.length + (L.record.taps || 0);

// The tap on Roll: the dice dealt for the turn's first roll come out (the server's
// `Table.apply` of `FIRST_ROLL`).
function firstRoll() {
  const game = L.game;
  const name = L.record.names[0];
  L.events.push({ seq: seqNow(), seat: 0, dice_before: [], type: "roll", kept: [], dice: game.dice,
    msg: { key: "narr.first_roll", name, dice: game.dice } });
  L.record.taps = (L.record.taps || 0) + 1;
  L.held = [];
}

function apply(seat, action) {
  const game = L.game;
  const name = L.record.names[seat];
  const dice = game.dice;
  const event = { seq: seqNow(), seat, dice_before: dice };
  if (action < NUM_HOLDS) {
    const kept = dice.filter((_, i) => (action >> i) & 1);
    game.step(action);
    const n = 5 - kept.length;
    const key = !kept.length ? "narr.reroll_all" : n === 0 ? "narr.keep_all" : "narr.keep";
    Object.assign(event, { type: "roll", kept: [0, 1, 2, 3, 4].filter((i) => (action >> i) & 1), dice: game.dice,
      msg: { key, name, kept, n, dice: game.dice } });
    L.held = positionsOf(game.dice, kept);
  } else {
    const box = action - BOX_ACTION_OFFSET;
    const card = game.players[seat];
    const before = card.upperBonus + card.yahtzeeBonus;
    game.step(action);
    const points = card.scores[box];
    const extra = card.upperBonus + card.yahtzeeBonus - before;
    Object.assign(event, { type: "score", box: BOX_NAMES[box], points,
      msg: { key: extra ? "narr.score_bonus" : "narr.score", name, box: BOX_NAMES[box], points, extra } });
    if (!game.over && game.current !== 0) event.next_dice = game.dice;  // (the player's: in the cup)
    L.held = [];
  }
  L.record.actions.push([seat, action]);
  L.events.push(event);
}

function positionsOf(dice, faces) {
  const free = [0, 1, 2, 3, 4];
  return faces.map((f) => free.splice(free.findIndex((i) => dice[i] === f), 1)[0]).sort();
}

async function cpuMoves() {
  const game = L.game;
  while (!game.over && game.current !== 0) {
    const level = L.record.seats[game.current];
    const action = (await policy(level)).act(encodeSeat(game), game.legalActionMask());
    apply(game.current, action);
  }
  if (game.over && L.record.status === "playing") {
    L.record.status = "finished";
    L.record.finished = Date.now();
  }
  await keep();
  if (game.over) sync();
}

function cardOf(card) {
  return {
    scores: card.asDict(), upper_total: card.upperTotal, upper_bonus: card.upperBonus,
    yahtzee_bonus: card.yahtzeeBonus, total: card.total,
  };
}

// The result as the server's `Table.result` (less its English `text`, which is for the
// API's readers: the page words it from `msg`). No game id: the server has none until the
// game is sent.
function result(game) {
  const totals = game.totals();
  const winners = game.winners();
  const order = totals.map((_, s) => s).sort((a, b) => totals[b] - totals[a] || a - b);
  const msg = { key: winners.length > 1 ? "result.draw" : "result.win", seats: winners, points: totals[winners[0]] };
  return {
    ranking: order.map((s) => ({ seat: s, place: 1 + totals.filter((x) => x > totals[s]).length, total: totals[s] })),
    totals, winners, draw: winners.length > 1, msg, game_id: null, cpu_turns: totals.map(() => 0),
  };
}

/** The rules a CPU level learned, when the table plays others (the server's
 * `tables.table.trained_for`): from the level's manifest as the server publishes it
 * (`/levels/LEVEL.json`'s `rules`, the policy's `trainedRules`). */
function trainedFor(level, rules) {
  const trained = L.policies[level] && L.policies[level].trainedRules;
  if (trained == null) return null;
  const theirs = RuleSet.fromSpec(trained);
  return theirs.equals(RuleSet.fromSpec(rules)) ? null : theirs.name;
}

/** The table's state, in the server's shape: `Table.state` (yahtzee_env/web/tables/table.py)
 * with what the server adds to it for a page (`mine`, `spectators`, each seat's
 * `connected`), and two keys of the page's own (`offline`, `in_page`). A key-set test holds
 * the two together (tests/web/test_offline_browser.py). */
function state(events = []) {
  const game = L.game;
  const r = L.record;
  const seq = seqNow();
  const numbers = {};
  const seats = r.seats.map((kind, seat) => {
    if (kind === "human") return { seat, name: r.names[seat], kind: "human", taken: true, away: null, connected: true };
    numbers[kind] = (numbers[kind] || 0) + 1;
    const view = { seat, name: r.names[seat], kind: "cpu", level: kind, trained_for: trainedFor(kind, r.rules), connected: true };
    if (r.seats.filter((k) => k === kind).length > 1) view.number = numbers[kind];  // "hard 2"
    return view;
  });
  const out = {
    code: LOCAL_CODE, rules: r.rules, online: false, match: false, coach: false, public: false, started: true,
    offline: true, in_page: r.played === "in_page", mine: [0], seats,
    fill: r.seats[1] || null, turn_timer: 0, time_bank: null, deadline: null, game: L.gameNo, seq, version: [L.gameNo, seq], first: 0,
    // the page deals its own dice: nothing to commit to, no seat's seed to mix in
    dice_commitment: null, duplicate: false,
    dice_version: null, client_seeds: null, client_seed_marks: null, client_seeds_open: false,
    client_seeds_game: null, next_dice_commitment: null,
    cards: game.players.map(cardOf), over: game.over, events,
  };
  if (game.over) out.result = result(game);  // a solo table has no votes to play again (`online`)
  else if (inCup()) {  // nothing down yet: the Roll intent rolls all five
    Object.assign(out, { current: game.current, dice: [], rolls_left: 3, held: [], options: {}, cup: true });
  } else {
    const { legal, points } = game.boxOptions();
    const options = {};
    BOX_NAMES.forEach((b, i) => { if (legal[i]) options[b] = points[i]; });
    Object.assign(out, { current: game.current, dice: game.dice, rolls_left: game.rollsLeft, held: L.held || [], options, cup: false });
  }
  return Object.assign(out, { match_state: null, spectators: 0 });
}

async function loaded() {
  if (L.game) return;
  const record = await unfinished();
  if (!record) throw new ApiError("no offline game", "not_found", {}, 404);
  await begin(record);
}

async function act(body) {
  await loaded();
  const game = L.game;
  const { action } = body || {};
  if (body.game !== L.gameNo || body.seq !== seqNow()) throw new ApiError("stale", "stale_seq", {}, 409);
  L.events = [];
  if (action && action.type === "next") {
    if (!game.over) throw new ApiError("not over", "generic", {}, 409);
    const { seats, rules, names } = L.record;
    L.gameNo += 1;
    await begin({ ...L.record, id: `${L.record.id}-${L.gameNo}`, status: "playing", seats, rules, names,
      draws: [], actions: [], taps: 0, started: Date.now(), finished: null });
    return state(L.events);
  }
  if (game.over || game.current !== 0) throw new ApiError("not your turn", "not_your_turn", {}, 409);
  const cup = inCup();
  if (action && action.type === "roll" && cup) {
    if (Array.isArray(action.hold) && action.hold.length) throw new ApiError("roll first", "roll_first", {}, 409);
    firstRoll();
    await keep();
  } else if (action && action.type === "roll") {
    const hold = Array.isArray(action.hold) ? action.hold : [];
    if (game.rollsLeft === 0 || hold.some((p) => !Number.isInteger(p) || p < 0 || p > 4)) throw new ApiError("no rolls left", "no_rolls", {}, 409);
    apply(0, hold.reduce((a, p) => a | (1 << p), 0));
    await keep();
  } else if (action && action.type === "score") {
    if (cup) throw new ApiError("roll first", "roll_first", {}, 409);
    const box = BOX_NAMES.indexOf(action.box);
    if (box < 0 || !game.boxOptions().legal[box]) throw new ApiError("illegal box", "illegal", {}, 409);
    apply(0, BOX_ACTION_OFFSET + box);
    await cpuMoves();
  } else throw new ApiError("unknown action", "generic", {}, 400);
  return state(L.events);
}

// The table's requests, answered here (net.js asks before it would use the network).
async function local(path, body) {
  if (path === PREFIX) { await loaded(); return state(L.events); }
  if (path === `${PREFIX}/act`) return act(body);
  if (path === `${PREFIX}/moves`) { await loaded(); return { game: L.gameNo, events: L.events }; }
  if (path.startsWith(`${PREFIX}/chat`)) return { messages: [] };
  if (path === `${PREFIX}/watch`) return { watch: null };
  throw new ApiError("offline table", "offline", {}, 409);
}

// ------------------------------------------------------------------ back online: sync
// One pass at a time: a call during a pass (a game ending as the server comes back) makes
// one more pass after it, never a second pass beside it (no game sent twice).
let syncing = false;
let syncAgain = false;
export async function sync() {
  if (isOffline()) return;
  if (syncing) { syncAgain = true; return; }
  syncing = true;
  syncAgain = false;
  try {
    const done = (await allRecords()).filter((r) => r.status === "finished");
    if (!done.length) return;
    await loadSession();
    if (!ME.player) Object.assign(ME, await api("/api/session", { name: done[0].names[0] }, { retries: 0 }));
    for (let i = 0; i < done.length; i += 20) {
      const games = done.slice(i, i + 20).map(({ id, played, rules, seats, draws, actions, started, finished }) =>
        ({ id, played: played || "offline", rules, seats, draws, actions, started, finished }));
      const reply = await api("/api/offline-games", { games }, { retries: 0 });
      for (const id of [...reply.stored, ...reply.refused.map((r) => r.id)]) await deleteRecord(id);
    }
  } catch { /* the next time the server answers */ } finally { syncing = false; }
  if (syncAgain) await sync();
}

// ------------------------------------------------------------------ the page offline
// What needs the network is greyed out (and says why), offline levels stay playable. One
// banner says why: the browser is offline, or the server does not answer; and on a table
// played in the page, that the game is recorded once the server is back.
const NEEDS_NETWORK = ["create-online", "join", "join-code", "signup", "signin", "signout", "coach", "match", "public",
  "quick-match", "quick-seats", "quick-wait", "list-open", "turn-timer", "time-bank"];

// The server's own tables (`/t/CODE`, `/w/ID`) have the connection banner for a server
// out of reach ("reconnecting"); this one says so there only when the browser is offline.
const onServerTable = () => /^\/[tw]\//.test(location.pathname) && location.pathname !== `/t/${LOCAL_CODE}`;

function bannerWords() {
  const browser = browserOffline();
  if (location.pathname === `/t/${LOCAL_CODE}`) return t(browser ? "offline.playing" : "offline.server_playing");
  if (onServerTable()) return t("offline.table");
  const levels = (config.offline_levels || []).map(levelName).join(", ");
  return t(browser ? "offline.banner" : "offline.server_banner", { levels });
}

export function applyOffline() {
  const off = isOffline();
  document.documentElement.dataset.offline = off ? "true" : "false";
  document.documentElement.dataset.offlineWhy = !off ? "" : browserOffline() ? "browser" : "server";
  const banner = $("offline-banner");
  if (banner) {
    const shown = off && !(onServerTable() && !browserOffline());
    banner.hidden = !shown;
    banner.textContent = shown ? bannerWords() : "";
  }
  drawConnection();  // hidden while this banner shows
  for (const id of NEEDS_NETWORK) {
    const node = $(id);
    if (!node) continue;
    if (off) {
      // what it was before the first call (a button busy with a request comes back enabled)
      if (node.dataset.offlineWas === undefined) node.dataset.offlineWas = node.disabled && !node.dataset.busy ? "1" : "";
      node.disabled = true;
      node.title = t("offline.needs_network");
    } else if (node.dataset.offlineWas !== undefined) { node.disabled = node.dataset.offlineWas === "1"; delete node.dataset.offlineWas; node.removeAttribute("title"); }
  }
  for (const link of document.querySelectorAll('[data-testid="stats-link"], [data-testid="leaderboard-link"]')) {
    link.classList.toggle("needs-network", off);
    if (off) link.setAttribute("aria-disabled", "true"); else link.removeAttribute("aria-disabled");
  }
  // a level the page cannot play is replaced by the strongest it can, and comes back with
  // the server (unless the player chose another meanwhile)
  for (const select of document.querySelectorAll("#seat-kinds select, #fill")) {
    for (const option of select.options) {
      if (off && option.value !== "human" && !canPlayOffline(option.value)) { option.disabled = true; option.dataset.offline = "1"; }
      else if (option.dataset.offline) { option.disabled = false; delete option.dataset.offline; }
    }
    if (off && select.selectedOptions[0] && select.selectedOptions[0].disabled && canPlayOffline(pageLevel())) {
      select.dataset.wanted = select.value;
      select.value = pageLevel();
      select.dataset.instead = select.value;
    } else if (!off && select.dataset.wanted) {
      if (select.value === select.dataset.instead) select.value = select.dataset.wanted;
      delete select.dataset.wanted;
      delete select.dataset.instead;
    }
  }
  document.dispatchEvent(new Event("yz-offline"));  // the lobby redraws what Play will do
}

/** The lobby's "Resume" for an unfinished offline game. */
export async function renderResume() {
  const box = $("resume-offline");
  if (!box) return;
  const record = await unfinished();
  box.hidden = !record;
  if (!record) { box.replaceChildren(); return; }
  const button = el("button", { type: "button", class: "primary", "data-testid": "resume-offline-button" },
    t("offline.resume", { opponents: record.seats.slice(1).join(", ") }));
  button.addEventListener("click", () => go(`/t/${LOCAL_CODE}`));
  box.replaceChildren(el("p", {}, t(record.played === "in_page" ? "in_page.unfinished" : "offline.unfinished")), button);
}

export function setup() {
  setLocal({ owns: (path) => path === PREFIX || path.startsWith(`${PREFIX}/`), answer: local });
  if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => { /* http, or blocked */ });
  window.addEventListener("online", () => { applyOffline(); sync(); });
  window.addEventListener("offline", applyOffline);
  onReach((up) => { applyOffline(); if (up) sync(); });
  window.addEventListener("beforeinstallprompt", (event) => {
    event.preventDefault();
    L.install = event;
    $("install").hidden = false;
  });
  window.addEventListener("appinstalled", () => { $("install").hidden = true; L.install = null; });
  $("install").addEventListener("click", async () => {
    if (!L.install) return;
    L.install.prompt();
    await L.install.userChoice;
    L.install = null;
    $("install").hidden = true;
  });
  sync();
}

// The table: its state as the server sends it, drawn by its parts, the others' moves
// animated, and this player's intents (one at a time, stamped with the state they were made
// from). The parts are in table/, each keeping its own state: the head (head.js: the code,
// the turn line, the clock, Leave's question), the tray (tray.js: the dice, the status
// line, Roll and Score), the card (card.js), the people at the seats (seats.js), the coach
// (coach.js) and the result (result.js).
import { $, go, sleep } from "./page.js";
import { ApiError, api, follow, loadSession, onAnswer, pressOnce, whileBusy } from "./net.js";
import { renderRename, setupRename } from "./rename.js";
import { pace, sound } from "./settings.js";
import * as spectate from "./spectate.js";
import { boxName, diceText, errorText, seatName, t, tn } from "./words.js";
import * as chat from "./chat.js";
import * as friends from "./friends.js";
import * as movelog from "./movelog.js";
import * as notify from "./notify.js";
import * as card from "./table/card.js";
import * as coach from "./table/coach.js";
import * as head from "./table/head.js";
import { setup as setupSeed, settled as seedSettled, refresh as refreshSeed } from "./table/seed.js";
import * as result from "./table/result.js";
import * as seats from "./table/seats.js";
import { amHost, isMine, mySeats, watching } from "./table/seats.js";
import * as tray from "./table/tray.js";
import { newer } from "./table/order.js";

// What the table itself keeps: the newest state and how it is applied and acted on.
const T = {
  code: null, state: null, version: [-1, -1], rev: undefined,
  queue: Promise.resolve(), pending: 0, animating: false,  // states applied one after another
  came: [],  // when each state still queued came (performance.now)
  busy: false, netError: false, focusAfter: null,  // an intent in flight, its failure, the focus after
};
const myTurn = () => T.state && T.state.started && !T.state.over && isMine(T.state.current) && !T.animating && !T.busy;
const say = tray.say;

function setError(err) { $("error").textContent = err ? errorText(err, T.state) : ""; }
function showFailure(err) {  // a network failure clears itself once the server answers again
  T.netError = err.code === "network";
  setError(err);
}

function narrate(event) {
  const m = event.msg;
  if (!m || !T.state) return event.text || "";
  const name = seatName(T.state, event.seat);
  if (m.key === "narr.keep") return tn("narr.keep", m.n, { name, kept: diceText(m.kept), dice: diceText(m.dice) });
  if (m.key === "narr.reroll_all" || m.key === "narr.first_roll") return t(m.key, { name, dice: diceText(m.dice) });
  if (m.key === "narr.keep_all") return t(m.key, { name });
  if (m.key === "narr.hidden") return t(m.key, { name });  // a duplicate table's turn not played yet
  if (m.key === "narr.score" || m.key === "narr.score_bonus") {
    return t(m.key, { name, points: m.points, box: boxName(m.box), extra: m.extra });
  }
  return event.text || "";
}

// One animated move of someone else (a CPU or another player).
async function animate(event) {
  head.showMover(event.seat, T.state);
  const p = pace();
  if (event.type === "hidden") {  // a duplicate table: dice this page has not rolled yet
    tray.showDice([], new Set(), []);
    say(() => narrate(event));
    await pause(p * 0.6);
  } else if (event.type === "roll") {
    tray.showDice(event.dice_before, new Set(), event.kept);
    say(() => t("narr.rolling", { name: seatName(T.state, event.seat) }));
    await pause(p * 0.6);
    tray.follow(event);
    const kept = [];
    const keptFaces = event.kept.map((i) => event.dice_before[i]);
    for (const face of keptFaces) kept.push([0, 1, 2, 3, 4].find((i) => event.dice[i] === face && !kept.includes(i)));
    tray.showDice(event.dice, new Set(), kept);
    const rolled = [0, 1, 2, 3, 4].filter((i) => !kept.includes(i));
    if (!lagging()) await tray.tumble(rolled, Math.min(600, p));
    say(() => narrate(event));
    await pause(p);
  } else {
    tray.showDice(event.dice_before, new Set(), []);
    say(() => narrate(event));
    card.markScored(event);
    sound.play(event.box === "yahtzee" && event.points > 0 ? "yatzy" : "score");
    await pause(p * 1.2);
    tray.follow(event);
  }
}

function receive(state) {
  T.pending += 1;
  const came = performance.now();
  T.came.push(came);
  T.queue = T.queue.then(() => { T.pending -= 1; T.came.shift(); return apply(state, came); }).catch((err) => setError(err));
  return T.queue;
}

// A spectator behind live play skips the animations and jumps to the newest state: more
// than a few events to show (this state's and one a state still queued), or a state that
// waited its turn longer than one move's animation (issue 57: the last states of a fast
// game, a few events each, were still played out one by one, 6 s after its end).
const CATCH_UP_EVENTS = 3;
const CATCH_UP_MS = 1000;
const behind = (fresh, came) => watching() &&
  (fresh.length + T.pending > CATCH_UP_EVENTS || performance.now() - came > CATCH_UP_MS);
// ... and the move it is showing stops short once a state behind it has waited that long (a
// fast game's last moves include rolls, the longest to show: issue 58's tap on Roll).
const lagging = () => watching() && T.came.length > 0 && performance.now() - T.came[0] > CATCH_UP_MS;
async function pause(ms) {
  const end = performance.now() + ms;
  while (!lagging() && performance.now() < end) await sleep(Math.min(50, end - performance.now()));
}

// What a game's states repeat unchanged (fanout.STEADY_KEYS): a socket's state of a move
// within a game leaves them out (issue 60), and they are kept from the game's earlier state.
// Missing with no earlier state of that game (a socket that missed the game's start): the
// table's whole state is read instead.
const STEADY = ["rules", "online", "match", "coach", "fill", "turn_timer", "time_bank", "first", "dice_commitment", "duplicate",
  "dice_version", "client_seeds", "client_seed_marks", "client_seeds_open", "client_seeds_game", "next_dice_commitment"];

async function apply(state, came = performance.now()) {
  if (state.code !== T.code || !newer(state, T)) return;
  const previous = T.state;
  const sameGame = previous && previous.game === state.game;
  if (!("rules" in state)) {
    if (!sameGame) { try { state = await api(`/api/tables/${T.code}`); } catch { return; } }
    else for (const key of STEADY) if (!(key in state) && key in previous) state[key] = previous[key];
  }
  const fresh = (state.events || []).filter((e) => !sameGame || e.seq >= previous.seq);
  const others = fresh.filter((e) => !isMine(e.seat));
  if (previous && others.length && pace() > 0 && !behind(fresh, came)) {
    T.animating = true;
    // our own move shows at once (the box filled, the total updated), the others' after
    const cards = previous.cards && sameGame ? previous.cards.map((c, i) => (isMine(i) ? state.cards[i] : c)) : previous.cards;
    T.state = { ...previous, seats: state.seats, cards };
    render(T.state, { lock: true });
    for (const event of fresh) {
      if (isMine(event.seat)) {
        say(() => narrate(event));
        tray.follow(event);
        if (event.type === "score") card.markScored(event);
        continue;
      }
      await animate(event);
    }
    T.animating = false;
  } else if (previous && sameGame) {
    for (const event of fresh) {
      tray.follow(event);
      if (event.type === "score" && isMine(event.seat)) sound.play(event.box === "yahtzee" && event.points > 0 ? "yatzy" : "score");
    }
  } else {
    tray.resetPlaces();
  }
  T.version = state.version; T.rev = state.rev;
  const newTurn = !previous || previous.current !== state.current || previous.game !== state.game ||
    previous.seq !== state.seq;
  if (newTurn) { tray.holdOnly(state.held); card.select(null); coach.forget(); }
  T.state = state;
  render(state);
  $("table").dataset.version = state.version.join(":");  // for test scripts: a new state
  const last = fresh[fresh.length - 1];
  if (last && state.started && !state.over && isMine(state.current)) {
    say(() => ownFirstRoll(last) || t("status.then", { last: narrate(last), next: describeTurn(T.state) }));
  } else if (last) say(() => narrate(last));
  // a game that begins with no move yet (Start, the next game): whose turn it is, not the
  // waiting room's or the last game's words (issue 57)
  else if (!previous || previous.started !== state.started || previous.game !== state.game) say(() => describeTurn(T.state));
  moveFocus(state, previous);
  sideViews(state);
}

// What sits beside the table (issue 32): the chat and its people, the move log, the notices.
function sideViews(state) {
  chat.onState(state, mySeats());
  movelog.onState(state, narrate);
  notify.onState(state, mySeats());
  $("share").hidden = !state.online || watching();  // a spectator never learns the code
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
    // the tray is always in view: focusing Roll must not scroll the page away from its top
    if (state.rolls_left > 0) $("roll").focus({ preventScroll: true });
    else {
      const first = document.querySelector(`button[data-testid^="box-${state.current}-"]`);
      if (first) first.focus();
    }
  }
}

// This page's own tap on Roll from the cup: the dice it rolled, on one short line (a phone's
// tray keeps its height, so the card keeps its Total in view); null for any other move.
function ownFirstRoll(event) {
  const m = event.msg;
  if (!m || m.key !== "narr.first_roll" || !isMine(event.seat) || event.seat !== T.state.current) return null;
  const dice = diceText(m.dice);
  return mySeats().length > 1 ? t("status.first_roll_named", { name: seatName(T.state, event.seat), dice }) : t("status.first_roll", { dice });
}

function describeTurn(state) {
  if (!state.started) return t("turn.waiting_long");
  if (state.over) return result.resultText(state);
  const name = seatName(state, state.current);
  const roll = 3 - state.rolls_left;
  if (isMine(state.current) && state.cup) return mySeats().length > 1 ? t("turn.named_cup", { name }) : t("turn.yours_cup");
  if (isMine(state.current)) return mySeats().length > 1 ? t("turn.named", { name, roll }) : t("turn.yours", { roll });
  return t("turn.other", { name });
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
  head.render(state);
  spectate.render(state, amHost());
  $("waiting").hidden = state.started;
  $("board").hidden = !state.started;
  if (!state.started) {
    seats.renderWaiting(state); head.showWaiting();
    friends.renderTableTools(state, { host: amHost(), seated: mySeats().length > 0 });
    return;
  }
  $("waiting-seats").replaceChildren();  // its seat-status hooks now live in the card
  const playing = !state.over;
  const mine = playing && isMine(state.current) && !lock;
  const live = mine && !T.busy;  // no second intent while one is in flight
  $("leave").hidden = !mySeats().length;
  renderRename(state.code, mySeats()[0]);
  seats.renderAway(state);
  seats.renderAbsent(state);
  head.renderTimer(state);
  tray.render(state, { mine, live, animating: T.animating, watch: watching(), selected: card.selected(), hintPending: coach.asking() });
  card.render(state, { mine, lock, busy: T.busy, choose: chooseBox });
  if (!T.animating) head.showMover(playing ? state.current : null, state);
  coach.render(state, myTurn());
  result.render(state, { current: T.state, busy: T.busy, playAgain });
  card.fit();
}

// Leave: a solo table waits in the lobby's open tables (nothing to ask); an online game
// that is on asks first, and says what leaving costs (head.askLeave).
async function askLeave() {
  const state = T.state;
  if (state && !state.online) { result.forget(); go("/"); return; }
  if (!state || !state.started || state.over) { await leaveNow(); return; }
  await head.askLeave(T.code);
}

async function leaveNow() {
  if (await seatAction("leave")) { result.forget(); go("/"); }
}

// A seat action (leave, back, hand, remove) of this page's player.
async function seatAction(what, body = {}) {
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
  else seats.markPresence(T.state.seats);
}

async function playAgain() {
  result.vote();
  if (T.state && !T.state.over) { result.forget(); render(T.state); return; }  // it started meanwhile
  await seedSettled();  // this page's seed for the next game goes in before the vote starts it
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

function toggleDie(i) {
  if (!myTurn() || T.state.rolls_left === 0 || T.state.cup) return;  // in the cup: nothing to hold
  tray.toggleHold(i);
  render(T.state);
  tray.dieNode(i).focus();
  const held = tray.heldFaces(T.state.dice);
  say(() => (held.length ? t("status.holding", { dice: diceText(held) }) : t("status.holding_none")));
}

async function rollNow() {
  if (!myTurn() || T.state.rolls_left === 0) return;
  if (tray.holding().size === 5) { setError(new ApiError("all held", "all_held")); return; }
  const places = tray.freePlaces();
  const before = T.version.join(":");
  T.focusAfter = "roll";
  if (T.state.cup) await seedSettled();  // this page's client seed goes in before the first roll
  await act({ type: "roll", hold: T.state.cup ? [] : [...tray.holding()].sort() });
  if (T.version.join(":") !== before) await tray.tumble(places.map(tray.dieAt), 450);
}

function chooseBox(box) {
  if (!myTurn()) return;
  if (card.selected() === box) { scoreNow(); return; }
  card.select(box);
  render(T.state);
  const button = document.querySelector(`button[data-testid="box-${T.state.current}-${box}"]`);
  if (button) button.focus();
  say(() => t("status.selected", { box: boxName(box), points: T.state.options[box] }));
}

function scoreNow() {
  if (!myTurn() || !card.selected()) return;
  const box = card.selected();
  card.select(null);
  T.focusAfter = "turn";
  act({ type: "score", box });
}

async function askHint() {
  if (!myTurn() || coach.asking()) return;
  try {
    await coach.ask(T.code, T.state.current);
  } catch (err) {
    showFailure(err);
  } finally {
    if (T.state) render(T.state, { lock: T.animating });
  }
}

// `watch`: a spectator's page (/w/ID): the table of watch link ID, read-only.
export async function showTable(code, { watch = false } = {}) {
  T.code = watch ? code : code.toUpperCase();
  T.state = null; T.version = [-1, -1]; T.rev = undefined;
  tray.resetPlaces();
  seats.reset({ watch });
  result.reset();
  head.closeLeave();
  // a spectator neither chats nor gets the table's code (so no move log read by code)
  chat.showTable(watch ? null : T.code, (state) => receive(state));
  movelog.showTable(watch ? null : T.code); notify.showTable(T.code);
  spectate.reset(T.code, watch);
  const statePath = watch ? `/api/watch/${encodeURIComponent(code)}` : `/api/tables/${T.code}`;
  try {
    await loadSession();
    const state = await api(statePath);
    seats.setMine(state.mine);
    await receive(state);
    follow(T.code, {
      state: (pushed) => {
        receive(pushed);
        if (T.netError) { T.netError = false; setError(null); }  // back in sync
      },
      presence: (connected) => { T.queue = T.queue.then(() => showPresence(connected)); },
      hello: (mine) => { seats.setMine(mine); refreshSeed(); },
      error: (err) => setError(err),
      seated: () => mySeats().length > 0,
      other: (data) => chat.receive(data),
      spectators: (n) => spectate.setCount(n),
      socket: watch ? `watch/${encodeURIComponent(code)}` : undefined,
      poll: watch ? statePath : undefined,
    });
  } catch (err) {
    showFailure(err);
    $("board").hidden = false;
    $("tray").hidden = false;
    $("table-code").textContent = T.code;
  }
}

// Redraw in the page's language (after a switch).
export function redraw() {
  spectate.redraw();
  if (!T.state) return;
  render(T.state, { lock: T.animating });
  tray.sayAgain();
  coach.redrawHint(myTurn());
  chat.redraw(); movelog.redraw(); notify.redraw();
}

export function setup() {
  movelog.setup(); notify.setup();
  spectate.setup();
  onAnswer(() => { if (T.netError) { T.netError = false; setError(null); } });  // the server answers again
  tray.setup(toggleDie);
  card.setup();
  seats.setup(seatAction);
  $("roll").addEventListener("click", pressOnce(rollNow));
  $("score").addEventListener("click", pressOnce(scoreNow));
  $("hint-button").addEventListener("click", pressOnce(askHint));
  $("join-here").addEventListener("click", () => go(`/?join=${T.code}`));
  $("leave").addEventListener("click", pressOnce(askLeave));
  $("leave-yes").addEventListener("click", pressOnce(async () => { head.closeLeave(); await leaveNow(); }));
  $("leave-stay").addEventListener("click", () => head.closeLeave(true));
  $("take-back").addEventListener("click", pressOnce(() => seatAction("back")));
  setupRename(() => T.code, receive);
  setupSeed(receive);
  $("start").addEventListener("click", () => whileBusy(["start"], async () => {
    try { await receive(await api(`/api/tables/${T.code}/start`, { seat: 0 })); }
    catch (err) { if (err.status === 409) await resync(); else showFailure(err); }
  }));
}

// The keys of the table (1-5 a die, R roll, S score, H hint, Enter the chosen box).
export function onKey(e) {
  if (head.asking()) { if (e.key === "Escape") head.closeLeave(true); return; }
  if (/^[1-5]$/.test(e.key)) toggleDie(tray.dieAt(Number(e.key) - 1));
  else if (e.key === "r" || e.key === "R") rollNow();
  else if (e.key === "s" || e.key === "S") scoreNow();
  else if (e.key === "h" || e.key === "H") askHint();
  else if (e.key === "Enter" && card.selected() && !e.target.matches("button, a")) scoreNow();
}

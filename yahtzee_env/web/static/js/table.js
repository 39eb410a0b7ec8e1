// The table: its state as the server sends it, drawn (the card, the dice, the people, the
// coach, the result), the others' moves animated, and this player's intents (one at a
// time, stamped with the state they were made from).
import { $, config, el, go, sleep } from "./page.js";
import { ApiError, api, follow, loadSession, onAnswer, pressOnce, whileBusy } from "./net.js";
import { renderRename, setupRename } from "./rename.js";
import { pace, reducedMotion, sound } from "./settings.js";
import * as spectate from "./spectate.js";
import {
  boxName, describeMove, diceText, errorText, joinNames, num, ruleName, seatName, t, tn,
} from "./words.js";
import * as chat from "./chat.js";
import * as movelog from "./movelog.js";
import * as notify from "./notify.js";
import { duration as timeLeft } from "./notify.js";

const T = {
  code: null, state: null, version: [-1, -1], held: new Set(), selected: null,
  queue: Promise.resolve(), animating: false, hint: null,
  slots: [0, 1, 2, 3, 4], lastStatus: null, focusAfter: null,
  busy: false, netError: false, hintPending: false, pending: 0,
  mine: [], ended: null, voted: false, deadlineAt: null, ticker: null, watch: false,
};
const dieNode = (i) => document.querySelector(`[data-testid="die-${i}"]`);
const mySeats = () => T.mine;
const isMine = (seat) => T.mine.includes(seat);
const amHost = () => isMine(0);
const myTurn = () => T.state && T.state.started && !T.state.over && isMine(T.state.current) && !T.animating && !T.busy;
const newer = (a, b) => a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1]);

// The status line is kept as a function, so that a language switch can redraw it.
function setStatus(text) { $("status").textContent = text; }
function say(fn) { T.lastStatus = fn; setStatus(fn()); }
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
    // the turn line fits: only the name itself may be cut short (its title has it whole),
    // never "(not connected)" or "(the computer is playing)" after it
    const s = state.seats[seat];
    const name = seatName(state, seat);
    const NAME = "\u2063";  // where the name goes in the sentence
    let frame = t("turn.to_move", { name: NAME });
    if (s.kind !== "cpu" && s.away) frame = frame.replace(NAME, t("people.cpu_for", { name: NAME }));
    else if (s.kind === "human" && state.online && !s.connected && !isMine(seat)) frame = frame.replace(NAME, t("people.offline_mover", { name: NAME }));
    const [before, after = ""] = frame.split(NAME);
    turn.replaceChildren(before, el("span", { class: "who", title: name }, name), after);
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
  T.pending += 1;
  const came = performance.now();
  T.queue = T.queue.then(() => { T.pending -= 1; return apply(state, came); }).catch((err) => setError(err));
  return T.queue;
}

// A spectator behind live play skips the animations and jumps to the newest state: more
// than a few events to show (this state's and one a state still queued), or a state that
// waited its turn longer than one move's animation (issue 57: the last states of a fast
// game, a few events each, were still played out one by one, 6 s after its end).
const CATCH_UP_EVENTS = 3;
const CATCH_UP_MS = 1000;
const behind = (fresh, came) => T.watch &&
  (fresh.length + T.pending > CATCH_UP_EVENTS || performance.now() - came > CATCH_UP_MS);

async function apply(state, came = performance.now()) {
  if (state.code !== T.code || !newer(state.version, T.version)) return;
  const previous = T.state;
  const sameGame = previous && previous.game === state.game;
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
  sideViews(state);
}

// What sits beside the table (issue 32): the chat and its people, the move log, the notices.
function sideViews(state) {
  chat.onState(state, T.mine);
  movelog.onState(state, narrate);
  notify.onState(state, T.mine);
  $("share").hidden = !state.online || T.watch;  // a spectator never learns the code
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

// The commitment to this game's dice seed, shown from before the first roll (issue 49): the
// seed itself comes with the finished game's review, where the page checks every die.
function showCommitment(state) {
  const node = $("dice-commitment");
  const hash = state.dice_commitment;
  node.hidden = !hash;
  if (!hash) return;
  node.dataset.commitment = hash;
  node.title = t("dice.commitment_title", { hash });
  node.textContent = t(state.duplicate ? "dice.commitment_duplicate" : "dice.commitment", { hash: hash.slice(0, 12) });
}

function draw(state, { lock = false } = {}) {
  $("table-code").textContent = state.in_page ? t("in_page.code") : state.code;
  $("table-code").parentElement.classList.toggle("words", Boolean(state.in_page));  // no code to read out
  showCommitment(state);
  spectate.render(state, amHost());
  $("waiting").hidden = state.started;
  $("board").hidden = !state.started;
  if (!state.started) { renderWaiting(state); return; }
  $("waiting-seats").replaceChildren();  // its seat-status hooks now live in the card
  const playing = !state.over;
  const mine = playing && isMine(state.current) && !lock;
  const live = mine && !T.busy;  // no second intent while one is in flight
  $("leave").hidden = !mySeats().length;
  renderRename(state.code, mySeats()[0]);
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
  document.querySelector(".controls").hidden = T.watch;  // a spectator has nothing to press
  renderCard(state, mine, lock);
  if (!T.animating) showMover(playing ? state.current : null, state);
  const notes = state.seats.filter((s) => s.kind === "cpu" && s.trained_for)
    .map((s) => el("p", {}, t("seat.trained_for", { name: seatName(state, s.seat), rules: ruleName(s.trained_for) })));
  // a solo game played in the page while online (offline.js): what it gives up
  if (state.in_page) notes.unshift(el("p", { class: "in-page-note", "data-testid": "in-page-note" }, t("in_page.table_note")));
  $("seat-notes").replaceChildren(...notes);
  renderCoach(state);
  renderResult(state);
  fitCard();
}

// Where the card starts on the page (--card-top): on a phone the card's panel ends where the
// tray begins, so that a short screen scrolls the card, not the page.
function fitCard() {
  const wrap = document.querySelector(".card-wrap");
  if (!wrap || $("board").hidden) return;
  const top = Math.round(wrap.getBoundingClientRect().top + window.scrollY);
  document.documentElement.style.setProperty("--card-top", `${top}px`);
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
  renderRename(state.code, mySeats()[0]);
  $("away-banner").hidden = true;
  $("timer").hidden = true;
  $("start").hidden = !isMine(0);
  const free = state.seats.some((s) => s.kind === "friend" && !s.taken);
  $("join-here").hidden = !(free && !mySeats().length) || T.watch;
  $("turn").textContent = t("turn.waiting");
  $("turn").dataset.seat = "";
}

// "The computer is playing for you", and the button that takes the seat back.
// At the end of a game the banner goes: Play again (any move) takes the seat back.
function renderAway(state) {
  const away = !state.over && mySeats().map((i) => state.seats[i]).find((s) => s && s.away);
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
    const s = Math.max(0, Math.ceil((T.deadlineAt - performance.now()) / 1000));
    // after a game the clock is the vote's: the next game starts when it runs out
    node.textContent = T.state && T.state.over ? t("people.next_game_in", { s }) : timeLeft(s);
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
  button.addEventListener("click", pressOnce(() => seatAction(what, { target: seat })));
  return button;
}

// Leave: a solo table waits in the lobby's open tables (nothing to ask); an online game
// that is on asks first, and says what leaving costs (GET /api/tables/CODE/rated: a rated
// loss, as the server would rate it now).
async function askLeave() {
  const state = T.state;
  if (state && !state.online) { T.ended = null; go("/"); return; }
  if (!state || !state.started || state.over) { await leaveNow(); return; }
  let cost = { rated: false };
  try { cost = await api(`/api/tables/${T.code}/rated`, undefined, { retries: 0 }); } catch { /* asked anyway */ }
  const change = cost.rated ? cost.after - cost.before : 0;
  $("leave-confirm-text").textContent = cost.rated
    ? t("leave.rated", { change: change > 0 ? `+${change}` : String(change).replace("-", "−"), before: cost.before, after: cost.after })
    : t("leave.unrated");
  $("leave-confirm").dataset.rated = String(Boolean(cost.rated));
  $("leave-confirm").hidden = false;
  $("leave-backdrop").hidden = false;
  $("leave-stay").focus();
}

function closeLeave(refocus = false) {
  $("leave-confirm").hidden = true;
  $("leave-backdrop").hidden = true;
  if (refocus) $("leave").focus();
}

async function leaveNow() {
  if (await seatAction("leave")) { T.ended = null; go("/"); }
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
  config.boxes.forEach((box, b) => {
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
    if (b === config.upper_boxes - 1) {  // the end of the upper section
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
  tr.append(el("th", { scope: "row", title: label }, label));  // whole, where a phone cuts it
  state.cards.forEach((c, seat) => tr.append(el("td", { "data-testid": `${id}-${seat}` }, value(c))));
  return tr;
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
  const words = outcomeWords(state);
  // the turns the computer played for this player (it left, timed out, was handed over)
  const me = mySeats().length === 1 ? mySeats()[0] : null;
  const cpu = me !== null && state.result.cpu_turns ? Number(state.result.cpu_turns[me]) || 0 : 0;
  const total = config.boxes.length;
  if (cpu * 2 > total) return t("end.cpu_played", { n: cpu, total });
  if (cpu > 0) return t("end.cpu_played_result", { result: words, n: cpu, total });
  return words;
}

function outcomeWords(state) {
  const { totals, winners, draw } = state.result;
  const names = (seats) => joinNames(seats.map((i) => seatName(state, i)));
  if (mySeats().length !== 1) return draw ? t("end.draw_plain") : t("end.wins", { name: names(winners) });
  const me = mySeats()[0];
  if (winners.includes(me)) {
    if (!draw) {  // by how much: against the runner-up
      const others = totals.filter((_, i) => i !== me);
      return others.length ? t("end.you_won_by", { n: totals[me] - Math.max(...others) }) : t("end.you_won");
    }
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
    if (err.code === "coach_warming") {  // solved in another process: the game plays on
      node.dataset.state = "warming";
      node.replaceChildren(el("p", { "data-testid": "coach-warming" }, t("coach.warming", { s: err.params.seconds || 1 })));
    } else {
      node.dataset.state = "";
      node.replaceChildren();
      showFailure(err);
    }
  } finally {
    T.hintPending = false;
    if (T.state) render(T.state, { lock: T.animating });
  }
}

// `watch`: a spectator's page (/w/ID): the table of watch link ID, read-only.
export async function showTable(code, { watch = false } = {}) {
  T.code = watch ? code : code.toUpperCase();
  T.watch = watch;
  T.state = null; T.version = [-1, -1]; T.slots = [0, 1, 2, 3, 4];
  T.mine = []; T.ended = null; T.voted = false;
  closeLeave();
  // a spectator neither chats nor gets the table's code (so no move log read by code)
  chat.showTable(watch ? null : T.code, (state) => receive(state));
  movelog.showTable(watch ? null : T.code); notify.showTable(T.code);
  spectate.reset(T.code, watch);
  const statePath = watch ? `/api/watch/${encodeURIComponent(code)}` : `/api/tables/${T.code}`;
  try {
    await loadSession();
    const state = await api(statePath);
    T.mine = state.mine || [];
    await receive(state);
    follow(T.code, {
      state: (pushed) => {
        receive(pushed);
        if (T.netError) { T.netError = false; setError(null); }  // back in sync
      },
      presence: (connected) => { T.queue = T.queue.then(() => showPresence(connected)); },
      hello: (seats) => { T.mine = seats; },
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
  setStatus(T.lastStatus ? T.lastStatus() : "");
  if (T.hint && myTurn()) renderHint(T.hint);
  chat.redraw(); movelog.redraw(); notify.redraw();
}

export function setup() {
  movelog.setup(); notify.setup();
  spectate.setup();
  onAnswer(() => { if (T.netError) { T.netError = false; setError(null); } });  // the server answers again
  for (let i = 0; i < 5; i++) {
    const die = dieNode(i);
    for (let p = 0; p < 9; p++) die.append(el("span", { class: "pip", "aria-hidden": "true" }));
    die.addEventListener("click", () => toggleDie(i));
  }
  if (window.ResizeObserver) {  // the tray's height, for the CSS scroll padding around it
    new ResizeObserver(([entry]) => {
      document.documentElement.style.setProperty("--tray-h", `${Math.ceil(entry.target.getBoundingClientRect().height)}px`);
    }).observe($("tray"));
    new ResizeObserver(fitCard).observe(document.querySelector(".sheet"));  // a hint, a note
  }
  window.addEventListener("resize", fitCard);
  $("roll").addEventListener("click", pressOnce(rollNow));
  $("score").addEventListener("click", pressOnce(scoreNow));
  $("hint-button").addEventListener("click", pressOnce(askHint));
  $("join-here").addEventListener("click", () => go(`/?join=${T.code}`));
  $("leave").addEventListener("click", pressOnce(askLeave));
  $("leave-yes").addEventListener("click", pressOnce(async () => { closeLeave(); await leaveNow(); }));
  $("leave-stay").addEventListener("click", () => closeLeave(true));
  $("take-back").addEventListener("click", pressOnce(() => seatAction("back")));
  setupRename(() => T.code, receive);
  $("start").addEventListener("click", () => whileBusy(["start"], async () => {
    try { await receive(await api(`/api/tables/${T.code}/start`, { seat: 0 })); }
    catch (err) { if (err.status === 409) await resync(); else showFailure(err); }
  }));
}

// The keys of the table (1-5 a die, R roll, S score, H hint, Enter the chosen box).
export function onKey(e) {
  if (!$("leave-confirm").hidden) { if (e.key === "Escape") closeLeave(true); return; }
  if (/^[1-5]$/.test(e.key)) toggleDie(T.slots[Number(e.key) - 1]);
  else if (e.key === "r" || e.key === "R") rollNow();
  else if (e.key === "s" || e.key === "S") scoreNow();
  else if (e.key === "h" || e.key === "H") askHint();
  else if (e.key === "Enter" && T.selected && !e.target.matches("button, a")) scoreNow();
}

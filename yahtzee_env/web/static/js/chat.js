// The table's people (issue 32): the chat and its emotes, mute (this device's), report,
// block (an account) and, for the host, removing a player. Every message is plain text:
// shown with textContent (`el`), never as markup.
import { followSeatButton } from "./friends.js";
import { $, el, store } from "./page.js";
import { ME, api } from "./net.js";
import { errorText, seatName, t } from "./words.js";

const EMOTES = ["hello", "good_luck", "nice", "wow", "oops", "thanks", "good_game"];
const POLL_MS = 15000;  // what other server processes heard (their sockets are not ours)
const C = { code: null, state: null, mine: [], messages: [], last: 0, poll: null, onState: () => {} };

const muted = () => new Set(store.get(`yz.mute.${C.code}`, []));
function setMuted(seat, on) {
  const set = muted();
  if (on) set.add(seat); else set.delete(seat);
  store.set(`yz.mute.${C.code}`, [...set]);
}

// One message as a line of text: "Ada: hello" (an emote in the page's language).
export function chatLine(m) {
  const li = el("li", { class: `chat-line chat-${m.kind}`, "data-seat": String(m.seat) });
  li.append(el("strong", {}, m.name), document.createTextNode(": "));
  li.append(el("span", { class: "chat-body" }, m.kind === "emote" ? t(`emote.${m.body}`) : m.body));
  return li;
}

function panel() {
  let side = $("people-panel");
  if (side) return side;
  side = el("section", { id: "people-panel", class: "chat-panel", "aria-labelledby": "chat-title" });
  side.append(el("h2", { id: "chat-title" }));
  side.append(el("ol", { id: "chat-log", class: "chat-log", "data-testid": "chat-log", "aria-live": "polite", tabindex: "0", "aria-labelledby": "chat-title" }));
  const emotes = el("div", { class: "emotes", id: "emotes", role: "group" });
  for (const name of EMOTES) {
    const b = el("button", { type: "button", "data-testid": `emote-${name}`, "data-emote": name });
    b.addEventListener("click", () => send({ emote: name }));
    emotes.append(b);
  }
  const form = el("form", { class: "chat-form", id: "chat-form" });
  form.append(el("label", { for: "chat-input", class: "visually-hidden", id: "chat-input-label" }));
  form.append(el("input", { id: "chat-input", "data-testid": "chat-input", maxlength: "200", autocomplete: "off" }));
  form.append(el("button", { type: "submit", id: "chat-send", "data-testid": "chat-send" }));
  form.addEventListener("submit", (e) => { e.preventDefault(); send({ text: $("chat-input").value }); });
  side.append(emotes, form, el("p", { id: "chat-error", class: "error", role: "alert", "data-testid": "chat-error" }));
  side.append(el("ul", { id: "people-list", class: "people-list", "data-testid": "people-list" }));
  $("board").after(side);
  return side;
}

async function send(body) {
  $("chat-error").textContent = "";
  const seat = C.mine[0];
  try {
    const reply = await api(`/api/tables/${C.code}/chat`, { seat, ...body }, { retries: 0 });
    add([reply.message]);
    if (body.text !== undefined) $("chat-input").value = "";
  } catch (err) { $("chat-error").textContent = errorText(err, C.state); }
}

function add(messages) {
  for (const m of messages) {
    if (m.id <= C.last) continue;
    C.messages.push(m);
    C.last = m.id;
  }
  C.messages = C.messages.slice(-200);
  renderLog();
}

function renderLog() {
  const log = $("chat-log");
  if (!log) return;
  const hide = muted();
  log.replaceChildren(...C.messages.filter((m) => !hide.has(m.seat)).map(chatLine));
  log.scrollTop = log.scrollHeight;
}

async function seatIntent(what, target) {
  $("chat-error").textContent = "";
  try {
    const reply = await api(`/api/tables/${C.code}/${what}`, { seat: what === "kick" ? 0 : C.mine[0], target }, { retries: 0 });
    if (what === "kick") C.onState(reply);
    else $("chat-error").textContent = t(`chat.${what}_done`, { name: seatName(C.state, target) });
  } catch (err) { $("chat-error").textContent = errorText(err, C.state); }
}

function personButton(what, seat, text, extra = {}) {
  const b = el("button", { type: "button", class: "small", "data-testid": `${what}-${seat}`, ...extra }, text);
  b.addEventListener("click", () => {
    if (what === "mute") { setMuted(seat, !muted().has(seat)); renderPeople(); renderLog(); }
    else seatIntent(what, seat);
  });
  return b;
}

function renderPeople() {
  const list = $("people-list");
  const state = C.state;
  if (!list || !state) return;
  const hide = muted();
  const others = state.seats.filter((s) => s.kind === "human" && !C.mine.includes(s.seat));
  list.replaceChildren(...others.map((s) => {
    const li = el("li");
    li.append(el("span", { class: "nm" }, seatName(state, s.seat)), document.createTextNode(" "));
    const on = hide.has(s.seat);
    li.append(personButton("mute", s.seat, t(on ? "chat.unmute" : "chat.mute"), { "aria-pressed": String(on) }));
    li.append(personButton("report", s.seat, t("chat.report")));
    if (ME.account) li.append(followSeatButton(C.code, s.seat));
    if (ME.account) li.append(personButton("block", s.seat, t("chat.block")));
    if (C.mine.includes(0) && s.seat > 0) li.append(personButton("kick", s.seat, t("chat.kick")));
    return li;
  }));
}

function words() {
  if (!$("people-panel")) return;
  $("chat-title").textContent = t("chat.title");
  $("chat-input-label").textContent = t("chat.label");
  $("chat-input").placeholder = t("chat.placeholder");
  $("chat-send").textContent = t("chat.send");
  for (const b of $("emotes").children) b.textContent = t(`emote.${b.dataset.emote}`);
  $("emotes").setAttribute("aria-label", t("chat.emotes"));
}

async function fetchNew() {
  if (!C.code || $("table").hidden) return;
  try { add((await api(`/api/tables/${C.code}/chat?after=${C.last}`, undefined, { retries: 0 })).messages); } catch { /* next time */ }
}

// A table is shown: its chat from the start. `onState`: what to do with a state a kick returns.
export function showTable(code, onState) {
  C.code = code; C.state = null; C.messages = []; C.last = 0; C.onState = onState;
  const side = $("people-panel");
  if (side) side.hidden = true;
  if (C.poll) clearInterval(C.poll);
  C.poll = setInterval(() => { if (document.visibilityState === "visible") fetchNew(); }, POLL_MS);
}

// Every state the table draws: the panel shows at online tables, for a seated player.
export function onState(state, mine) {
  const first = C.state === null;
  C.state = state;
  C.mine = mine.filter((i) => state.seats[i] && state.seats[i].kind === "human");  // not if removed
  const people = state.seats.some((s) => s.kind === "human" && !C.mine.includes(s.seat));
  const show = state.online && C.mine.length > 0 && people;  // nobody to talk to at a CPU table
  if (!show) { if ($("people-panel")) $("people-panel").hidden = true; return; }
  panel().hidden = false;
  words();
  renderPeople();
  if (first) fetchNew();
}

// A message the socket pushed.
export function receive(data) { if (data.type === "chat" && data.message.code === C.code) add([data.message]); }

export function redraw() { words(); renderPeople(); renderLog(); }

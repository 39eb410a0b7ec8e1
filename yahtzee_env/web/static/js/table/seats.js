// The people at the seats: which seats are this page's (and whether it only watches), each
// seat's live presence, the host's controls for an absent seat (before the start in the
// list of seats, during a game in a notice above the card), and the banner of a seat the
// computer plays for this player.
import { $, el } from "../page.js";
import { pressOnce } from "../net.js";
import { renderRename } from "../rename.js";
import { seatName, t } from "../words.js";

let mine = [];  // this page's seats (the server says which: `mine`, a socket's `hello`)
let watch = false;  // a spectator's page (/w/ID): nothing to press, no code to learn
let seatAction = async () => null;  // the table's intent for a seat (leave, back, hand, remove)

export const mySeats = () => mine;
export const isMine = (seat) => mine.includes(seat);
export const amHost = () => isMine(0);
export const watching = () => watch;
export function setMine(seats) { mine = seats || []; }

// A new table's page: no seat known yet.
export function reset({ watch: spectator = false } = {}) { mine = []; watch = spectator; }

export function setup(action) { seatAction = action; }

// A seat's live presence: data-connected says whether its player has the table open.
export function seatStatus(s) {
  const connected = s.kind === "cpu" || Boolean(s.connected);
  const words = t(connected ? "people.connected" : "people.offline");
  return el("span", { class: "seat-status", "data-testid": `seat-status-${s.seat}`,
    "data-connected": String(connected), role: "img", "aria-label": words, title: words });
}

// While others' moves are animated the card is not redrawn: only the dots follow presence.
export function markPresence(seats) {
  for (const s of seats) {
    const dot = document.querySelector(`[data-testid="seat-status-${s.seat}"]`);
    if (dot) dot.dataset.connected = String(s.connected);
  }
}

// The host's controls for an absent seat: the computer plays it; before the start, remove it.
export function hostButton(what, seat) {
  const id = what === "hand" ? `hand-to-cpu-${seat}` : `remove-seat-${seat}`;
  const button = el("button", { type: "button", "data-testid": id }, t(what === "hand" ? "people.hand" : "people.remove"));
  button.addEventListener("click", pressOnce(() => seatAction(what, { target: seat })));
  return button;
}

// Before the start: who has joined, who is still awaited, and Start (the host) or Take
// this seat (a visitor, while one is free).
export function renderWaiting(state) {
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
  $("start").hidden = !isMine(0);
  const free = state.seats.some((s) => s.kind === "friend" && !s.taken);
  $("join-here").hidden = !(free && !mySeats().length) || watch;
}

// The host's notice of the guests who are not connected during a game, each with Give to
// the computer (issue 57: in the card's head it made the head row grow on a phone).
export function renderAbsent(state) {
  const absent = amHost() && !state.over
    ? state.seats.filter((s, i) => i > 0 && s.kind === "human" && !s.away && !s.connected && !isMine(i)) : [];
  const node = $("absent");
  node.hidden = !absent.length;
  node.replaceChildren(...absent.map((s) => {
    const p = el("p");
    const name = seatName(state, s.seat);
    p.append(el("span", { class: "nm", title: name }, t("people.offline_mover", { name })), " ", hostButton("hand", s.seat));
    return p;
  }));
}

// "The computer is playing for you", and the button that takes the seat back.
// At the end of a game the banner goes: Play again (any move) takes the seat back.
export function renderAway(state) {
  const away = !state.over && mySeats().map((i) => state.seats[i]).find((s) => s && s.away);
  $("away-banner").hidden = !away;
  if (away) $("away-text").textContent = t(`people.me_away.${away.away}`);
}

// The table's head: its code, the turn line (who is to move), the dice's commitment, the
// turn clock, and Leave's question (what leaving costs). It keeps the clock's deadline and
// its ticker.
import { $, el } from "../page.js";
import { api } from "../net.js";
import { bankName, bankTime, seatName, t } from "../words.js";
import { duration as timeLeft } from "../notify.js";
import { isMine } from "./seats.js";
import * as seed from "./seed.js";

let deadlineAt = null;  // performance.now() when the clock runs out (null: no clock)
let ticker = null;
let clockOver = false;  // the clock of a finished game is the vote's

export function render(state) {
  $("table-code").textContent = state.in_page ? t("in_page.code") : state.code;
  $("table-code").parentElement.classList.toggle("words", Boolean(state.in_page));  // no code to read out
  showCommitment(state);
  seed.render(state);  // the commitment whole on a tap, and this page's client seed
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

// Before the start: no clock, and the turn line waits for the players.
export function showWaiting() {
  $("timer").hidden = true;
  $("turn").textContent = t("turn.waiting");
  $("turn").dataset.seat = "";
}

// The header and the highlighted column follow the seat that is moving (a CPU's too, while
// its turn is animated).
export function showMover(seat, state) {
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

// The turn timer's countdown (the server holds the deadline; this only shows it).
export function renderTimer(state) {
  const node = $("timer");
  deadlineAt = state.time_left !== undefined && state.time_left !== null ? performance.now() + 1000 * state.time_left : null;
  clockOver = Boolean(state.over);
  // a time bank (issue 62): the mover's bank counts down, and the clock says what each
  // turn adds (its title: the whole bank, "+0:21 a turn, max 2:03")
  const bank = state.time_bank && !clockOver ? state.time_bank : null;
  node.dataset.bank = bank ? "true" : "false";
  if (bank) node.title = t("people.bank_title", { bank: bankName(bank.add, bank.cap) });
  else node.removeAttribute("title");
  const tick = () => {
    if (deadlineAt === null) { node.hidden = true; return; }
    node.hidden = false;
    const s = Math.max(0, Math.ceil((deadlineAt - performance.now()) / 1000));
    // after a game the clock is the vote's: the next game starts when it runs out
    if (clockOver) node.textContent = t("people.next_game_in", { s });
    else if (bank) {
      node.replaceChildren(
        el("span", { "data-testid": "timer-bank-left" }, s < 3600 ? bankTime(s) : timeLeft(s)),
        el("span", { class: "bank-add", "data-testid": "timer-bank-add" }, `+${bankTime(bank.add)}`),
      );
    } else node.textContent = timeLeft(s);
  };
  tick();
  if (!ticker) ticker = setInterval(() => { if (!$("table").hidden) tick(); }, 500);
}

// Leave, asked first (an online game that is on): what leaving costs (GET
// /api/tables/CODE/rated: a rated loss, as the server would rate it now).
export async function askLeave(code) {
  let cost = { rated: false };
  try { cost = await api(`/api/tables/${code}/rated`, undefined, { retries: 0 }); } catch { /* asked anyway */ }
  const change = cost.rated ? cost.after - cost.before : 0;
  $("leave-confirm-text").textContent = cost.rated
    ? t("leave.rated", { change: change > 0 ? `+${change}` : String(change).replace("-", "−"), before: cost.before, after: cost.after })
    : t("leave.unrated");
  $("leave-confirm").dataset.rated = String(Boolean(cost.rated));
  $("leave-confirm").hidden = false;
  $("leave-backdrop").hidden = false;
  $("leave-stay").focus();
}

export const asking = () => !$("leave-confirm").hidden;

export function closeLeave(refocus = false) {
  $("leave-confirm").hidden = true;
  $("leave-backdrop").hidden = true;
  if (refocus) $("leave").focus();
}

// The score card: a column per seat (its head, one row that keeps its height: the name,
// presence, why the computer plays it or that its player is not connected), the 13 boxes with the mover's potentials as buttons, the sums; the notes under it;
// and where it starts on a phone's screen. It keeps the box this player has chosen.
import { $, config, el } from "../page.js";
import { boxName, ruleName, seatName, t } from "../words.js";
import { isMine, mySeats, seatStatus } from "./seats.js";

let chosen = null;  // the box chosen (pressed once) this turn, before Score

export const selected = () => chosen;
export function select(box) { chosen = box; }

// A box scored (a move the page shows before its state): its points, flashed.
export function markScored(event) {
  const cell = document.querySelector(`[data-testid="box-${event.seat}-${event.box}"]`);
  if (cell) { cell.textContent = event.points; cell.classList.add("scored-now"); }
}

// `mine`: this page's seat is to move (nothing animated); `lock`: others' moves are being
// shown (no potentials); `busy`: an intent is in flight; `choose(box)`: a box pressed.
export function render(state, { mine, lock = false, busy = false, choose }) {
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
        const key = chosen === box ? "card.option_selected" : "card.option";
        const button = el("button", { ...attrs, type: "button", class: "box",
          "aria-label": t(key, { box: boxName(box), points: potential }) }, potential);
        if (chosen === box) button.classList.add("selected");
        button.disabled = busy;
        button.addEventListener("click", () => choose(box));
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
  renderNotes(state);
}

function sumRow(state, label, value, id) {
  const tr = el("tr", { class: "sum" });
  tr.append(el("th", { scope: "row", title: label }, label));  // whole, where a phone cuts it
  state.cards.forEach((c, seat) => tr.append(el("td", { "data-testid": `${id}-${seat}` }, value(c))));
  return tr;
}

// Under the card: the rules a trained CPU level learned, and what a game played in the page
// gives up.
function renderNotes(state) {
  const notes = state.seats.filter((s) => s.kind === "cpu" && s.trained_for)
    .map((s) => el("p", {}, t("seat.trained_for", { name: seatName(state, s.seat), rules: ruleName(s.trained_for) })));
  // a solo game played in the page while online (offline.js): what it gives up
  if (state.in_page) notes.unshift(el("p", { class: "in-page-note", "data-testid": "in-page-note" }, t("in_page.table_note")));
  $("seat-notes").replaceChildren(...notes);
}

// Where the card starts on the page (--card-top): on a phone the card's panel ends where the
// tray begins, so that a short screen scrolls the card, not the page.
export function fit() {
  const wrap = document.querySelector(".card-wrap");
  if (!wrap || $("board").hidden) return;
  const top = Math.round(wrap.getBoundingClientRect().top + window.scrollY);
  document.documentElement.style.setProperty("--card-top", `${top}px`);
}

export function setup() {
  if (window.ResizeObserver) new ResizeObserver(fit).observe(document.querySelector(".sheet"));  // a hint, a note
  window.addEventListener("resize", fit);
}

// The coach (a table with the coach on): the regret of this page's seats so far, the hint
// asked for this turn, and a graded decision in words (the result's review uses it too). It
// keeps the hint and whether one is being computed.
import { $, el } from "../page.js";
import { api } from "../net.js";
import { describeMove, diceText, num, seatName, t } from "../words.js";
import { mySeats } from "./seats.js";

let hint = null;  // this turn's hint (the server's answer), null until asked
let computing = false;

export const asking = () => computing;
export function forget() { hint = null; }

export function decisionText(d) {
  const roll = 3 - d.rolls_left;
  const move = describeMove(d.dice, d.action);
  if (d.regret <= 1e-6) return t("coach.decision_best", { dice: diceText(d.dice), roll, move });
  return t("coach.decision", { dice: diceText(d.dice), roll, move, loss: num(d.regret), best: describeMove(d.dice, d.best_action) });
}

// `yourTurn`: the hint, if any, is still this turn's and shown.
export function render(state, yourTurn) {
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
  redrawHint(yourTurn);
}

export function redrawHint(yourTurn) {
  if (hint && yourTurn) renderHint(hint); else $("hint").replaceChildren();
}

function renderHint(answer) {
  const node = $("hint");
  node.replaceChildren(el("strong", {}, t("coach.label")));
  const list = el("ol");
  for (const o of answer.options) {
    list.append(el("li", {}, t("coach.option", { move: describeMove(answer.dice, o.action), total: num(o.expected_total, 1) })));
  }
  node.append(list);
}

// Ask the coach for seat `seat` of table `code`. A coach still being solved in another
// process says so (the game plays on); any other failure is thrown, the hint cleared.
export async function ask(code, seat) {
  const node = $("hint");
  computing = true;
  node.dataset.state = "computing";  // the coach may first have to load its table
  node.replaceChildren(el("p", { class: "thinking", "data-testid": "hint-progress" }, t("coach.thinking")));
  $("hint-button").disabled = true;
  try {
    hint = await api(`/api/tables/${code}/hint`, { seat }, { timeout: 60000 });
    node.dataset.state = "ready";
    renderHint(hint);
  } catch (err) {
    if (err.code === "coach_warming") {  // solved in another process: the game plays on
      node.dataset.state = "warming";
      node.replaceChildren(el("p", { "data-testid": "coach-warming" }, t("coach.warming", { s: err.params.seconds || 1 })));
    } else {
      node.dataset.state = "";
      node.replaceChildren();
      throw err;
    }
  } finally {
    computing = false;
  }
}

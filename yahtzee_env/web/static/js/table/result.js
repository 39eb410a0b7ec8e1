// The end of a game: an overlay, which stays for this player until they leave it (Play
// again, Back to the lobby), even if the others start the next game meanwhile; and the
// result in words, for the overlay and the status line. It keeps the game that ended and
// whether this player voted for the next one.
import { $, config, el, go } from "../page.js";
import { pressOnce } from "../net.js";
import { joinNames, num, seatName, t, tn } from "../words.js";
import { decisionText } from "./coach.js";
import { isMine, mySeats } from "./seats.js";

let ended = null;  // the state of the game that ended, while its overlay stays
let voted = false;  // this player pressed Play again

export function reset() { ended = null; voted = false; }
export function forget() { ended = null; }  // leaving the table: the overlay goes
export function vote() { voted = true; }

// The status line at the end: who won, with how much.
export function resultText(state) {
  const r = state.result;
  if (!r) return "";
  const names = r.winners.map((s) => seatName(state, s));
  if (r.draw) return t("result.draw", { names: joinNames(names), points: r.totals[r.winners[0]] });
  if (mySeats().length === 1 && isMine(r.winners[0])) return t("result.you_win", { points: r.totals[r.winners[0]] });
  return t("result.win", { name: names[0], points: r.totals[r.winners[0]] });
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

// The overlay of `state`: `current`, the table's newest state (its votes), `busy`, an
// intent in flight; `playAgain`, the intent of Play again.
export function render(state, { current, busy, playAgain }) {
  const box = $("result");
  if (state.over) {
    if (!ended || ended.game !== state.game) voted = false;
    ended = state;
  } else if (ended && (voted || ended.code !== state.code)) { ended = null; voted = false; }
  const opening = box.hidden && Boolean(ended);
  box.hidden = !ended;
  $("result-backdrop").hidden = !ended;
  if (!ended) { box.replaceChildren(); return; }
  const live = current && current.code === ended.code ? current : ended;
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
    button.disabled = busy || votedAlready;
    button.addEventListener("click", pressOnce(playAgain));
    buttons.append(button);
  }
  if (state.result.game_id) {
    buttons.append(el("a", { href: `/games/${state.result.game_id}`, class: "button-link", "data-testid": "review-link" }, t("end.review")));
  }
  const lobby = el("button", { type: "button", "data-testid": "back-to-lobby" }, t("end.lobby"));
  lobby.addEventListener("click", () => { ended = null; go("/"); });
  buttons.append(lobby);
  parts.push(buttons);
  box.replaceChildren(...parts);
  if (opening) (box.querySelector("[data-testid=play-again]") || lobby).focus();
}

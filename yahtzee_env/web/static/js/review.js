// The review of a finished game (``/games/CODE-IDX``): each seat's expected total turn by
// turn, its costliest decisions, a replay round by round, every decision graded.
import { $, el } from "./page.js";
import { api } from "./net.js";
import { describeMove, diceText, errorText, num, ruleName, seatName, t } from "./words.js";
import { SEAT_COLOR, lineChart } from "./charts.js";
import { chatLine } from "./chat.js";
import { canVerify, verifyRecord } from "./fair_dice.js";

const R = { data: null, round: 1 };

function reviewSeatName(review, seat) {
  return seatName({ seats: review.seats }, seat);
}

function renderReview(r) {
  const body = $("review-body");
  const [code] = r.id.split("-");
  const parts = [el("p", {}, t("review.intro", { code, n: r.game + 1, rules: ruleName(r.rules) }))];
  const summary = el("ul", { class: "review-seats", "data-testid": "review-summary" });
  r.seats.forEach((_, seat) => {
    const li = el("li");
    li.append(el("span", { class: `swatch sw-${seat}`, "aria-hidden": "true" }),
      document.createTextNode(t("review.final", { name: reviewSeatName(r, seat), total: r.totals[seat], loss: num(r.total_loss[seat]) })));
    summary.append(li);
  });
  parts.push(summary, ...diceSection(r), ...partedSection(r), ...gradeSummary(r), el("h2", {}, t("review.timeline")));
  parts.push(lineChart({
    series: r.seats.map((_, seat) => ({ points: r.timeline[seat], color: SEAT_COLOR[seat % 4], label: reviewSeatName(r, seat) })),
    xLabel: t("review.axis_turn"), yLabel: t("review.axis_expected"), xFrom: 0, id: "review-chart",
    aria: t("review.timeline_label"),
  }));
  parts.push(el("h2", {}, t("review.costliest")));
  r.seats.forEach((_, seat) => {
    parts.push(el("h3", {}, t("review.costliest_of", { name: reviewSeatName(r, seat) })));
    const costly = r.costliest[seat] || [];
    if (!costly.length) { parts.push(el("p", {}, t("review.no_mistakes"))); return; }
    const list = el("ol", { class: "costly", "data-testid": `costliest-${seat}` });
    for (const d of costly) {
      list.append(el("li", {}, t("review.costly_line", { round: d.round, roll: 3 - d.rolls_left, dice: diceText(d.dice),
        move: describeMove(d.dice, d.action), best: describeMove(d.dice, d.best_action), loss: num(d.loss) })));
    }
    parts.push(list);
  });
  parts.push(el("h2", {}, t("review.replay")), replayer(r));
  parts.push(el("h2", {}, t("review.turns")));
  r.seats.forEach((_, seat) => {
    const details = el("details", { class: "seat-turns", "data-testid": `turns-${seat}` });
    if (seat === 0) details.open = true;
    details.append(el("summary", {}, t("review.seat_turns", { name: reviewSeatName(r, seat) })));
    const wrap = el("div", { class: "scroll-x", tabindex: "0", role: "region",
      "aria-label": t("review.seat_turns", { name: reviewSeatName(r, seat) }) });
    const table = el("table", { class: "turns" });
    const head = el("tr");
    for (const h of ["turn", "roll", "dice", "choice", "best", "loss", "label"]) head.append(el("th", { scope: "col" }, t(`review.col_${h}`)));
    table.append(head);
    for (const turn of r.turns.filter((x) => x.seat === seat)) {
      turn.decisions.forEach((d, k) => {
        const tr = el("tr", { "data-testid": "review-decision" });
        if (k === 0) tr.classList.add("turn-start");
        if (d.loss > 0.005) tr.classList.add("lost");
        tr.append(el("td", { class: "num" }, k === 0 ? turn.round : ""));
        tr.append(el("td", { class: "num" }, 3 - d.rolls_left));
        const dice = el("td");
        d.dice.forEach((v, i) => {
          const kept = d.action < 32 && (d.action >> i & 1);
          dice.append(el("span", kept ? { class: "kept-die" } : {}, v), document.createTextNode(i < 4 ? " " : ""));
        });
        tr.append(dice);
        let choice = describeMove(d.dice, d.action);
        if (d.action >= 32 && turn.box) choice = t("review.points", { box: choice, points: turn.points + (turn.bonus ? ` (+${turn.bonus})` : "") });
        tr.append(el("td", {}, t("review.move_expected", { move: choice, expected: num(d.expected, 1) })));
        // the solver's best move beside the player's, each with its expected final score
        const same = d.action === d.best_action || d.loss <= 1e-6;
        tr.append(el("td", { "data-testid": `review-best-${d.n}`, "data-same": String(same) },
          same ? t("review.best_same") : t("review.move_expected", { move: describeMove(d.dice, d.best_action), expected: num(d.best_expected, 1) })));
        tr.append(el("td", { class: "num" }, d.loss > 0.005 ? `−${num(d.loss)}` : "0"));
        const grade = el("td");
        grade.append(el("span", { class: `grade grade-${d.label}`, "data-testid": `review-label-${d.n}`, "data-label": d.label }, t(`review.label.${d.label}`)));
        tr.append(grade);
        table.append(tr);
      });
    }
    wrap.append(table);
    details.append(wrap);
    parts.push(details);
  });
  if (r.chat && r.chat.length) {  // the game's chat, as plain text
    parts.push(el("h2", {}, t("review.chat")));
    const log = el("ol", { class: "chat-log", "data-testid": "review-chat", tabindex: "0", "aria-label": t("review.chat") });
    for (const m of r.chat) log.append(chatLine(m));
    parts.push(log);
  }
  const back = el("a", { href: "/", class: "button-link" }, t("review.back"));
  parts.push(el("p", {}, ""));
  parts[parts.length - 1].append(back);
  body.replaceChildren(...parts);
}

// The game's dice (issue 49): the seed, revealed now that the game is over, beside the
// commitment shown before its first roll; "Check the dice" recomputes every roll here; the
// record downloads for `yahtzee verify-game`. A game stored before the commitment says so.
function diceSection(r) {
  const box = el("section", { class: "dice-check", "data-testid": "review-dice" });
  box.append(el("h2", {}, t("dice.heading")));
  const record = r.dice || { predates: true };
  if (record.predates) {
    box.append(el("p", { "data-testid": "dice-predates" }, t("dice.predates")));
    return [box];
  }
  box.append(el("p", {}, t(record.duplicate ? "dice.explain_duplicate" : "dice.explain")));
  const facts = el("dl", { class: "dice-facts" });
  facts.append(el("dt", {}, t("dice.commitment_label")), el("dd", {}, ""));
  facts.lastChild.append(el("code", { "data-testid": "review-commitment" }, record.commitment));
  facts.append(el("dt", {}, t("dice.seed_label")), el("dd", {}, ""));
  facts.lastChild.append(el("code", { "data-testid": "dice-seed" }, record.seed));
  if (Array.isArray(record.client_seeds)) {  // v2 (issue 58): every seat's seed was mixed in
    facts.append(el("dt", {}, t("dice.client_seeds_label")), el("dd", {}, ""));
    facts.lastChild.append(el("code", { "data-testid": "review-client-seeds" }, record.client_seeds.join(", ")));
  }
  box.append(facts);
  const button = el("button", { type: "button", "data-testid": "verify-dice" }, t("dice.check"));
  const verdict = el("p", { role: "status", "data-testid": "verify-result" });
  button.addEventListener("click", async () => {
    if (!canVerify()) { verdict.textContent = t("dice.check_unavailable"); verdict.dataset.ok = "false"; return; }
    button.disabled = true;
    verdict.textContent = t("dice.checking");
    try {
      const v = await verifyRecord(record);
      verdict.textContent = t(v.key, v.params);
      verdict.dataset.ok = String(v.ok);
    } finally { button.disabled = false; }
  });
  const file = new Blob([JSON.stringify(record, null, 1)], { type: "application/json" });
  const link = el("a", { href: URL.createObjectURL(file), download: `${r.id}.json`, "data-testid": "dice-record" }, t("dice.download"));
  const row = el("p", { class: "buttons" });
  const checker = el("a", { href: "/verify", "data-testid": "verify-link" }, t("dice.verify_link"));
  row.append(button, document.createTextNode(" "), link, document.createTextNode(" "), checker);
  box.append(row, verdict);
  return [box];
}

// A duplicate game: where the seats' choices parted on the same dice, and what each choice
// was worth to the solver (the expected final total, and the points given up).
function partedSection(r) {
  if (!r.duplicate) return [];
  const box = el("section", { class: "parted", "data-testid": "review-parted" });
  box.append(el("h2", {}, t("dice.parted_heading")));
  if (!r.parted || !r.parted.length) { box.append(el("p", {}, t("dice.parted_none"))); return [box]; }
  const list = el("ol");
  for (const p of r.parted) {
    const li = el("li", { "data-round": String(p.round) });
    li.append(el("strong", {}, t("dice.parted_round", { round: p.round, roll: p.step + 1 })));
    const inner = el("ul");
    p.choices.forEach((c, seat) => {
      if (!c) return;
      inner.append(el("li", {}, t("dice.parted_choice", { name: reviewSeatName(r, seat), dice: diceText(c.dice),
        move: describeMove(c.dice, c.action), expected: num(c.expected, 1), loss: num(c.loss) })));
    });
    li.append(inner);
    list.append(li);
  }
  box.append(list);
  return [box];
}

// The labels by expected points given up (their bounds stated, as the server sets them),
// and each seat's count of each label.
const LABELS = ["best", "good", "inaccuracy", "mistake", "blunder"];
function gradeSummary(r) {
  if (!r.thresholds || !r.labels) return [];
  const bound = Object.fromEntries(r.thresholds.map((x) => [x.label, num(x.max)]));
  const note = el("p", { class: "thresholds", "data-testid": "review-thresholds" },
    t("review.thresholds", { best: bound.best, good: bound.good, inaccuracy: bound.inaccuracy, mistake: bound.mistake }));
  const list = el("ul", { class: "grade-summary" });
  r.seats.forEach((_, seat) => {
    const counts = r.labels[seat] || {};
    const li = el("li", { "data-testid": `review-labels-${seat}` });
    li.append(el("strong", {}, reviewSeatName(r, seat)), document.createTextNode(" "));
    for (const label of LABELS) {
      li.append(el("span", { class: `grade grade-${label}`, "data-label": label, "data-count": String(counts[label] || 0) },
        t("review.label_count", { n: counts[label] || 0, label: t(`review.label.${label}`) })), document.createTextNode(" "));
    }
    list.append(li);
  });
  return [el("h2", {}, t("review.grades")), note, list];
}

// Small dice (not buttons) for the review; the kept ones ringed.
function miniDice(dice, action) {
  const kept = action < 32 ? dice.filter((_, i) => action >> i & 1) : [];
  const label = kept.length ? t("review.dice_label", { dice: diceText(dice), kept: diceText(kept) })
    : t("review.dice_label_none", { dice: diceText(dice) });
  const row = el("span", { class: "mini-dice", role: "img", "aria-label": label });
  dice.forEach((v, i) => {
    const die = el("span", { class: "die mini", "data-face": v, "data-value": v });
    if (action < 32 && (action >> i & 1)) die.classList.add("kept");
    for (let p = 0; p < 9; p++) die.append(el("span", { class: "pip", "aria-hidden": "true" }));
    row.append(die);
  });
  return row;
}

// Turn by turn: every seat's rolls, holds and box in one turn, stepped with Previous / Next.
function replayer(r) {
  const box = el("div", { class: "replay", "data-testid": "replay" });
  const prev = el("button", { type: "button", "data-testid": "review-prev" }, t("review.prev"));
  const next = el("button", { type: "button", "data-testid": "review-next" }, t("review.next"));
  const label = el("strong", { "data-testid": "review-round", "aria-live": "polite" });
  const nav = el("div", { class: "replay-nav" });
  nav.append(prev, label, next);
  const body = el("div", { class: "replay-body" });
  box.append(nav, body);
  const show = (n) => {
    R.round = Math.min(13, Math.max(1, n));
    label.textContent = t("review.round", { n: R.round });
    prev.disabled = R.round === 1; next.disabled = R.round === 13;
    const seats = r.turns.filter((x) => x.round === R.round).map((turn) => {
      const card = el("div", { class: "replay-seat" });
      card.append(el("h3", {}, reviewSeatName(r, turn.seat)));
      const list = el("ol");
      for (const d of turn.decisions) {
        const li = el("li");
        li.append(miniDice(d.dice, d.action));
        let move = describeMove(d.dice, d.action);
        if (d.action >= 32) move = t("review.points", { box: move, points: turn.points + (turn.bonus ? ` (+${turn.bonus})` : "") });
        li.append(el("span", {}, move));
        if (d.loss > 0.005) li.append(el("span", { class: "lost" }, t("review.lost_vs", { best: describeMove(d.dice, d.best_action), loss: num(d.loss) })));
        list.append(li);
      }
      card.append(list, el("p", {}, t("review.after", { expected: num(turn.decisions[turn.decisions.length - 1].expected, 1) })));
      return card;
    });
    body.replaceChildren(...seats);
  };
  prev.addEventListener("click", () => { show(R.round - 1); (prev.disabled ? next : prev).focus(); });
  next.addEventListener("click", () => { show(R.round + 1); (next.disabled ? prev : next).focus(); });
  show(R.round || 1);
  return box;
}

export async function showReview(id) {
  const body = $("review-body");
  R.data = null; R.round = 1;
  body.replaceChildren(el("p", {}, t("review.loading")));
  try {
    R.data = await api(`/api/games/${encodeURIComponent(id)}`, {});  // the session's seats
    renderReview(R.data);
  } catch (err) { body.replaceChildren(el("p", { class: "error", "data-testid": "review-error" }, errorText(err))); }
}

// Redraw in the page's language (after a switch).
export function redraw() { if (R.data) renderReview(R.data); }

// My statistics (``/stats``): games, wins, scores by opponents and mode, the history.
import { $, el } from "./page.js";
import { ME, api, loadSession } from "./net.js";
import { errorText, levelName, num, t, tn } from "./words.js";
import { OUTCOME_COLOR, lineChart } from "./charts.js";

const S = { data: null };
export function pct(x) { return x === null || x === undefined ? "–" : `${num(100 * x, 1)}%`; }

export function statsRow(label, s) {
  const tr = el("tr");
  tr.append(el("th", { scope: "row" }, label));
  for (const v of [s.games, s.wins, s.draws, s.losses, pct(s.win_rate), s.mean_score ?? "–", s.best_score ?? "–", s.yahtzees, pct(s.upper_bonus_rate)]) {
    tr.append(el("td", {}, v));
  }
  return tr;
}

export function statsTable(caption, rows, testid) {
  const wrap = el("div", { class: "scroll-x", tabindex: "0", role: "region", "aria-label": caption });
  const table = el("table", { class: "stats", "data-testid": testid });
  table.append(el("caption", {}, caption));
  const head = el("tr");
  head.append(el("th", { scope: "col" }, t("stats.opponents")));
  for (const h of ["games", "wins", "draws", "losses", "win_rate", "mean", "best", "yahtzees", "upper_bonus"]) head.append(el("th", { scope: "col" }, t(`stats.${h}`)));
  table.append(head, ...rows);
  wrap.append(table);
  return wrap;
}

// Your dice against fair dice (issue 49): each face's count of the dice you rolled beside
// what fair dice expect, the Yatzys rolled against what fair dice give for the same holds,
// and Pearson's chi-square test in words. `words` names the keys that speak to the player
// (a profile speaks of its account: `profile.rolls_*`).
const OWN_DICE = {
  heading: "stats.rolls_heading", none: "stats.rolls_none", seen: "stats.rolls_seen",
  intro: (r) => tn("stats.rolls_intro", r.games, { dice: r.dice }),
};
export function rollStats(r, words = OWN_DICE) {
  const box = el("section", { class: "roll-stats", "data-testid": "roll-stats" });
  box.append(el("h2", {}, t(words.heading)));
  if (!r || !r.dice) { box.append(el("p", {}, t(words.none))); return box; }
  box.append(el("p", {}, words.intro(r)));
  const wrap = el("div", { class: "scroll-x", tabindex: "0", role: "region", "aria-label": t(words.heading) });
  const table = el("table", { class: "stats faces", "data-testid": "roll-faces" });
  const head = el("tr");
  head.append(el("th", { scope: "col" }, t("stats.rolls_face")));
  for (let f = 1; f <= 6; f++) head.append(el("th", { scope: "col" }, f));
  const seen = el("tr");
  seen.append(el("th", { scope: "row" }, t(words.seen)));
  r.faces.forEach((c, i) => seen.append(el("td", { "data-face": String(i + 1) }, c)));
  const fair = el("tr");
  fair.append(el("th", { scope: "row" }, t("stats.rolls_fair_count")));
  for (let f = 1; f <= 6; f++) fair.append(el("td", {}, num(r.expected_each, 1)));
  table.append(head, seen, fair);
  wrap.append(table);
  box.append(wrap);
  box.append(el("p", { "data-testid": "roll-yatzy" }, t("stats.rolls_yatzy", { n: r.yatzy_rolls, rolls: r.rolls, expected: num(r.yatzy_expected, 2) })));
  const p = r.p_value;
  box.append(el("p", { "data-testid": "roll-test", "data-p": String(p) },
    t(p >= 0.05 ? "stats.rolls_test_fair" : "stats.rolls_test_unusual", { chi: num(r.chi_square, 2), p: num(p, 3), pct: pct(p) })));
  return box;
}

export const opponentsName = (key) => (key === "humans" ? t("stats.humans") : key.split("+").map(levelName).join(" + "));

function renderStats(s) {
  const body = $("stats-body");
  const o = s.overall;
  const grid = el("div", { class: "stat-grid" });
  for (const [id, label, value] of [["games", "games", o.games], ["wins", "wins", o.wins], ["draws", "draws", o.draws],
    ["win-rate", "win_rate", pct(o.win_rate)], ["mean-score", "mean", o.mean_score ?? "–"], ["best-score", "best", o.best_score ?? "–"],
    ["yahtzees", "yahtzees", o.yahtzees], ["upper-bonus", "upper_bonus", pct(o.upper_bonus_rate)]]) {
    const card = el("div", { class: "stat", "data-testid": `stat-${id}` });
    card.append(el("b", {}, value), document.createTextNode(t(`stats.${label}`)));
    grid.append(card);
  }
  const pageRows = [["offline", "stats.offline"], ["in_page", "stats.in_page"]].filter(([k]) => s.by_mode[k] && s.by_mode[k].games);
  const who = el("p", {}, t("stats.player", { name: s.name }));
  if (ME.account) {  // an account's profile: what others see of these figures (issue 62)
    who.append(" · ", el("a", { href: `/p/${encodeURIComponent(ME.account)}`, "data-testid": "my-profile-link" }, t("profile.mine")));
  }
  const parts = [who, grid,
    statsTable(t("stats.by_opponents"), Object.entries(s.by_opponents).map(([k, v]) => statsRow(opponentsName(k), v)), "by-opponents"),
    statsTable(t("stats.by_mode"), [statsRow(t("stats.solo"), s.by_mode.solo), statsRow(t("stats.online"), s.by_mode.online),
      ...pageRows.map(([k, label]) => { const tr = statsRow(t(label), s.by_mode[k]); tr.dataset.testid = `page-games-${k}`; return tr; })], "by-mode")];
  // games played in the page: the page dealt their dice, so they count in their own rows only
  if (pageRows.length) parts.push(el("p", { class: "note", "data-testid": "page-games-note" }, t("stats.page_games_note")));
  parts.push(rollStats(s.rolls), el("h2", {}, t("stats.history")));
  const chart = s.history.filter((g) => g.verified !== false);  // the games the server dealt
  if (chart.length) {
    parts.push(lineChart({
      series: [{ points: chart.map((g) => g.score), color: "#5d6670" }],
      dots: (i) => OUTCOME_COLOR[chart[i].outcome], id: "chart",
      xLabel: t("stats.axis_game"), yLabel: t("stats.axis_score"),
      aria: `${tn("stats.chart_label", chart.length)}: ${chart.map((g) => g.score).join(", ")}`,
    }));
  }
  if (s.history.length) {
    const legend = el("ul", { class: "legend" });
    for (const k of ["win", "draw", "loss"]) {
      const li = el("li");
      li.append(el("span", { class: `swatch sw-${k}`, "aria-hidden": "true" }), document.createTextNode(t(`stats.${k}`)));
      legend.append(li);
    }
    parts.push(legend, el("h2", {}, t("stats.recent")));
    const list = el("ul", { class: "recent" });
    for (const g of s.history.slice(-10).reverse()) {
      const li = el("li", g.offline ? { "data-offline": "true" } : g.in_page ? { "data-in-page": "true" } : {});
      li.append(el("span", {}, t("stats.recent_line", { score: g.score, outcome: t(`stats.${g.outcome}`), opponents: opponentsName(g.opponents) })));
      if (g.offline) li.append(el("span", { class: "tag", "data-testid": "played-offline" }, t("stats.played_offline")));
      else if (g.in_page) li.append(el("span", { class: "tag", "data-testid": "played-in-page" }, t("stats.played_in_page")));
      else if (g.game_id) li.append(el("a", { href: `/games/${g.game_id}`, class: "button-link", "data-testid": "review-link" }, t("lobby.review")));
      list.append(li);
    }
    parts.push(list);
  } else parts.push(el("p", {}, t("stats.no_history")));
  body.replaceChildren(...parts);
}

export async function showStats() {
  const body = $("stats-body");
  S.data = null;
  body.setAttribute("aria-busy", "true");  // named while it loads: "loading", not empty
  body.replaceChildren(el("p", { "data-testid": "stats-loading" }, t("stats.loading")));
  try { await loadStats(body); } finally { body.removeAttribute("aria-busy"); }
}

async function loadStats(body) {
  await loadSession();
  if (!ME.player) { body.replaceChildren(el("p", {}, t("stats.none"))); return; }
  try {
    S.data = await api("/api/stats", {});
    renderStats(S.data);
  } catch (err) { body.replaceChildren(el("p", { class: "error" }, errorText(err))); }
}

// Redraw in the page's language (after a switch).
export function redraw() { if (S.data) renderStats(S.data); }

// A profile (``/p/NAME``, issue 62): an account's rating and its chart, its games by level
// and by kind, its dice, its recent games with their reviews, its achievements; its owner
// chooses who sees it (public, friends, nobody). The server says what may be shown: a
// hidden profile reads as no profile at all.
import { $, el } from "./page.js";
import { api, loadSession } from "./net.js";
import { I18N, errorText, levelName, t, tn } from "./words.js";
import { lineChart } from "./charts.js";
import { ratingText } from "./leaderboard.js";
import { opponentsName, pct, rollStats, statsRow, statsTable } from "./statistics.js";

const P = { name: null, data: null, error: null, note: "" };
const VISIBILITIES = ["public", "friends", "nobody"];
const PROFILE_DICE = {
  heading: "profile.rolls_heading", none: "profile.rolls_none", seen: "profile.rolls_seen",
  intro: (r) => tn("profile.rolls_intro", r.games, { dice: r.dice }),
};

const day = (seconds) => new Intl.DateTimeFormat(I18N.lang, { dateStyle: "medium" }).format(new Date(seconds * 1000));

// An achievement's name from its id: ``beat_LEVEL`` names the level.
function achievementName(id) {
  return id.startsWith("beat_") && id !== "beat_people" ? t("ach.beat_level", { level: levelName(id.slice(5)) }) : t(`ach.${id}`);
}
function achievementHow(id) {
  return id.startsWith("beat_") && id !== "beat_people" ? t("ach.beat_level_how", { level: levelName(id.slice(5)) }) : t(`ach.${id}_how`);
}

function badge(a) {
  const li = el("li", { class: a.earned !== null ? "earned" : "locked", "data-testid": `achievement-${a.id}`, "data-earned": String(a.earned !== null) });
  li.append(el("b", {}, achievementName(a.id)), el("span", {}, achievementHow(a.id)));
  if (a.earned !== null) {  // the game's review: the owner's view only (its id holds the table's code)
    const when = t("profile.earned_on", { date: day(a.earned) });
    li.append(a.game_id ? el("a", { href: `/games/${a.game_id}`, class: "when", "data-testid": "achievement-game" }, when) : el("span", { class: "when" }, when));
  }
  return li;
}

// The achievements earned, each with its date (a link to the game's review); the others
// folded away (a phone shows the earned ones first).
function achievements(list) {
  const box = el("section", { class: "achievements", "data-testid": "achievements" });
  const got = list.filter((a) => a.earned !== null);
  const left = list.filter((a) => a.earned === null);
  box.append(el("h2", {}, t("profile.achievements", { n: got.length, of: list.length })));
  if (got.length) {
    const ul = el("ul", { class: "badges" });
    ul.append(...got.map(badge));
    box.append(ul);
  } else box.append(el("p", {}, t("profile.none_yet")));
  if (left.length) {
    const more = el("details", { class: "badges-left", "data-testid": "achievements-left" });
    more.append(el("summary", {}, t("profile.still_to_earn", { n: left.length })));
    const ul = el("ul", { class: "badges" });
    ul.append(...left.map(badge));
    more.append(ul);
    box.append(more);
  }
  box.append(el("p", { class: "note" }, t("profile.achievements_rule")));
  return box;
}

function ratingChart(points) {
  if (!points.length) return el("p", { "data-testid": "profile-no-chart" }, t("profile.no_rated"));
  const chart = lineChart({
    series: [{ points: points.map((p) => p.rating), color: "#2457c5" }], id: "profile-chart", floor: true,
    xLabel: t("profile.axis_game"), yLabel: t("profile.axis_rating"),
    aria: `${tn("profile.chart_label", points.length)}: ${points.map((p) => p.rating).join(", ")}`,
  });
  chart.dataset.testid = "profile-chart";
  return chart;
}

function visibilityControl(current) {
  const box = el("div", { class: "visibility" });
  const label = el("label", { for: "profile-visibility" }, t("profile.visibility"));
  const select = el("select", { id: "profile-visibility", "data-testid": "profile-visibility" });
  for (const v of VISIBILITIES) {
    const option = el("option", { value: v }, t(`profile.visibility_${v}`));
    if (v === current) option.selected = true;
    select.append(option);
  }
  const said = el("p", { class: "note", role: "status", "data-testid": "profile-visibility-note" }, P.note);
  select.addEventListener("change", async () => {
    try {
      const reply = await api("/api/account/profile", { visibility: select.value });
      P.data.visibility = reply.visibility;
      P.note = t(`profile.visibility_now_${reply.visibility}`);
    } catch (err) { P.note = errorText(err); select.value = P.data.visibility; }
    said.textContent = P.note;
  });
  box.append(label, select, said);
  return box;
}

function recentGames(list) {
  const box = el("section", { "data-testid": "profile-recent" });
  box.append(el("h2", {}, t("stats.recent")));
  if (!list.length) { box.append(el("p", {}, t("stats.no_history"))); return box; }
  const ul = el("ul", { class: "recent" });
  for (const g of list) {
    const li = el("li");
    li.append(el("span", {}, t("profile.recent_line", { date: day(g.finished), score: g.score, outcome: t(`stats.${g.outcome}`), opponents: opponentsName(g.opponents) })));
    if (g.game_id) li.append(el("a", { href: `/games/${g.game_id}`, class: "button-link", "data-testid": "profile-review-link" }, t("lobby.review")));
    ul.append(li);
  }
  box.append(ul);
  return box;
}

function render() {
  const body = $("profile-body");
  $("profile-title").textContent = t("profile.title", { name: P.name || "" });
  if (P.error) { body.replaceChildren(el("p", { class: "error", "data-testid": "profile-error" }, errorText(P.error))); return; }
  const p = P.data;
  if (!p) return;
  const parts = [el("p", { class: "note" }, t("profile.since", { date: day(p.since) }))];
  if (p.mine) parts.push(visibilityControl(p.visibility));
  const r = p.rating;
  parts.push(el("p", { class: "rating-line", "data-testid": "profile-rating" },
    r && r.games ? `${ratingText(r)}${r.place ? " · " + t("profile.place", { place: r.place }) : ""}` : t("profile.unrated")));
  parts.push(ratingChart(p.chart));
  const o = p.overall;
  const grid = el("div", { class: "stat-grid" });
  for (const [id, label, value] of [["games", "stats.games", o.games], ["wins", "stats.wins", o.wins],
    ["best-score", "stats.best", o.best_score ?? "–"], ["yahtzees", "stats.yahtzees", o.yahtzees],
    ["win-rate", "stats.win_rate", pct(o.win_rate)], ["tournaments", "profile.tournaments_won", p.tournaments_won ?? 0]]) {
    const card = el("div", { class: "stat", "data-testid": `profile-${id}` });
    card.append(el("b", {}, value), document.createTextNode(t(label)));
    grid.append(card);
  }
  parts.push(grid);
  if (Object.keys(p.by_level).length) {
    parts.push(statsTable(t("stats.by_opponents"), Object.entries(p.by_level).map(([k, v]) => statsRow(opponentsName(k), v)), "profile-by-level"));
  }
  parts.push(statsTable(t("stats.by_mode"), [statsRow(t("stats.solo"), p.by_kind.solo), statsRow(t("stats.online"), p.by_kind.online)], "profile-by-kind"));
  parts.push(achievements(p.achievements), rollStats(p.rolls, PROFILE_DICE), recentGames(p.recent));
  body.replaceChildren(...parts);
}

// The name as the address holds it (percent-encoded): shown decoded where it decodes.
function decoded(text) {
  try { return decodeURIComponent(text); } catch { return text; }
}

export async function showProfile(segment) {
  const name = decoded(segment);
  Object.assign(P, { name, data: null, error: null, note: "" });
  const body = $("profile-body");
  body.setAttribute("aria-busy", "true");
  body.replaceChildren(el("p", {}, t("profile.loading")));
  render();
  try {
    await loadSession();
    P.data = await api(`/api/profiles/${encodeURIComponent(name)}`);
    P.name = P.data.name;
  } catch (err) { P.error = err; }
  body.removeAttribute("aria-busy");
  render();
}

export function redraw() { render(); }

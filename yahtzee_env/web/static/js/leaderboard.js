// The leaderboard: the top ratings (openskill's Plackett-Luce, shown as 40 x mu), your own
// place, and the computer levels' fixed ratings.
import { $, el } from "./page.js";
import { ME, api, loadSession } from "./net.js";
import { followButton } from "./friends.js";
import { errorText, levelName, t } from "./words.js";

const B = { data: null, error: null };

export function ratingText(r) {
  if (!r.provisional) return t("rating.value", { rating: r.rating });
  return t("rating.provisional", { rating: r.rating, games: r.games, n: r.provisional_games });
}

function render() {
  const body = $("leaderboard-body");
  if (B.error) { body.replaceChildren(el("p", { class: "error" }, errorText(B.error))); return; }
  const data = B.data;
  if (!data) { body.replaceChildren(); return; }
  const parts = [el("p", { class: "note" }, t("board.how", { n: data.provisional_games })), el("p", { id: "board-error", class: "error", role: "alert", "data-testid": "board-error" })];
  if (data.me && data.me.place) parts.push(el("p", { "data-testid": "board-me" }, t("board.you", { place: data.me.place, rating: ratingText(data.me) })));
  else if (data.me) parts.push(el("p", { "data-testid": "board-me" }, t("board.unrated")));
  const table = el("table", { class: "ratings" });
  const head = el("tr");
  for (const key of ["board.place", "board.name", "board.rating", "board.games"]) head.append(el("th", { scope: "col" }, t(key)));
  table.append(el("thead"), el("tbody"));
  table.tHead.append(head);
  if (!data.top.length) parts.push(el("p", {}, t("board.empty")));
  for (const r of data.top) {
    const tr = el("tr", { "data-testid": `board-row-${r.place}`, class: r.me ? "me" : "" });
    const name = el("td", { class: "nm" });  // a link to the profile (it may be hidden)
    name.append(el("a", { href: `/p/${encodeURIComponent(r.name)}`, "data-testid": `board-profile-${r.place}` }, r.name));
    const follow = r.me ? null : followButton(r.name);
    if (follow) name.append(" ", follow);
    tr.append(el("td", {}, r.place), name, el("td", {}, `${r.rating}${r.provisional ? "?" : ""}`), el("td", {}, r.games));
    table.tBodies[0].append(tr);
  }
  if (data.top.length) parts.push(table);
  parts.push(el("h2", {}, t("board.cpu_title")));
  const cpu = el("ul", { class: "cpu-ratings", "data-testid": "board-cpu" });
  for (const c of data.cpu) cpu.append(el("li", {}, t("board.cpu_line", { level: levelName(c.level), rating: c.rating })));
  parts.push(cpu);
  body.replaceChildren(...parts);
}

export async function showLeaderboard() {
  B.error = null;
  if (!ME.loaded) await loadSession();  // an account's rows offer Follow
  try { B.data = await api("/api/leaderboard"); } catch (err) { B.error = err; }
  render();
}

export function redraw() { render(); }

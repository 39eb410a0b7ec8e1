// Tournaments (issue 62): /tournaments lists the open and running ones and creates one (an
// account), knockout or Swiss; /tournaments/CODE is a tournament's bracket: its entrants,
// its rounds and their matches (each an ordinary table: play yours, watch the others), a
// Swiss tournament's standings (the server ranks them), its winner. The bracket
// asks the server every few seconds while it is shown (a poll moves the tournament on too).
import { $, config, el, go } from "./page.js";
import { ME, api, loadSession } from "./net.js";
import { errorText, levelName, t } from "./words.js";

const POLL_MS = 3000;
const STARTS = [null, 300, 900, 3600];  // "when full", or seconds from now
const PLACES = [4, 8, 16, 32];
const FORMATS = ["knockout", "swiss"];  // the server's (people.tournaments.FORMATS)
const DRAW = -1;  // a Swiss match drawn (people.swiss.DRAW)
const T = { code: null, data: null, list: null, error: null, timer: null, note: "" };

const ruleName = (x) => t(`rules.${x}`, {}, x);
// An element holding ``children`` (nodes or text).
function box(tag, attrs, children) {
  const node = el(tag, attrs);
  node.append(...children);
  return node;
}

export function stop() {
  if (T.timer) clearTimeout(T.timer);
  T.timer = null;
}

function select(id, options) {
  const s = el("select", { id, "data-testid": id });
  for (const [value, label] of options) s.append(el("option", { value: String(value) }, label));
  return s;
}

function labelled(id, key, control) {
  return box("p", { class: "field" }, [el("label", { for: id }, t(key)), control]);
}

function createForm() {
  if (!ME.account) return el("p", { class: "note", "data-testid": "tourney-sign-in" }, t("tourney.sign_in"));
  const name = el("input", { id: "tourney-name", "data-testid": "tourney-name", maxlength: "40", autocomplete: "off" });
  const places = select("tourney-places", PLACES.map((n) => [n, String(n)]));
  places.value = "8";
  const format = select("tourney-format", FORMATS.map((f) => [f, t(`tourney.format_${f}`)]));
  const rules = select("tourney-rules", (config.rules || ["official"]).map((r) => [r, ruleName(r)]));
  const bestOf = select("tourney-best-of", [[1, t("tourney.best_of_1")], [5, t("tourney.best_of_5")]]);
  const start = select("tourney-start", STARTS.map((s) => [s ?? "", s === null ? t("tourney.when_full") : t("tourney.in_minutes", { n: s / 60 })]));
  const fill = select("tourney-fill", [["", t("tourney.no_cpu")], ...(config.levels || []).map((lv) => [lv, levelName(lv)])]);
  fill.value = (config.levels || []).includes(config.fill) ? config.fill : "";
  const create = el("button", { type: "button", id: "tourney-create", "data-testid": "tourney-create" }, t("tourney.create"));
  create.addEventListener("click", async () => {
    const body = {
      name: name.value, format: format.value, places: Number(places.value), rules: rules.value, best_of: Number(bestOf.value),
      start_in: start.value ? Number(start.value) : null, fill: fill.value || null,
    };
    try {
      const made = await api("/api/tournaments", body);
      go(`/tournaments/${made.code}`);
    } catch (err) { $("tourney-error").textContent = errorText(err); }
  });
  return box("div", { class: "tourney-form", "data-testid": "tourney-form" }, [
    el("h2", {}, t("tourney.new")),
    labelled("tourney-name", "tourney.name", name), labelled("tourney-format", "tourney.format", format),
    labelled("tourney-places", "tourney.places", places),
    labelled("tourney-rules", "tourney.rules", rules), labelled("tourney-best-of", "tourney.best_of", bestOf),
    labelled("tourney-start", "tourney.start", start), labelled("tourney-fill", "tourney.fill", fill),
    box("p", { class: "buttons" }, [create]),
  ]);
}

function renderList() {
  const body = $("tourneys-body");
  const parts = [el("p", { id: "tourney-error", class: "error", role: "alert", "data-testid": "tourney-error" }, T.error ? errorText(T.error) : "")];
  const list = el("ul", { class: "tourney-list", "data-testid": "tourney-list" });
  for (const x of (T.list || [])) {
    const a = el("a", { href: `/tournaments/${x.code}`, "data-testid": `tourney-link-${x.code}` }, x.name);
    a.addEventListener("click", (e) => { e.preventDefault(); go(`/tournaments/${x.code}`); });
    list.append(box("li", {}, [a, " ", el("span", { class: "note" }, t(`tourney.format_${x.format || "knockout"}`) + " · " + t(`tourney.state_${x.state}`) + " · " + t("tourney.entrants", { n: x.entrants, places: x.places }))]));
  }
  parts.push(el("h2", {}, t("tourney.list")));
  parts.push(T.list && T.list.length ? list : el("p", { class: "note" }, t("tourney.none")));
  parts.push(createForm());
  body.replaceChildren(...parts);
}

function side(m, s, data) {
  if (!s) return el("span", { class: "bye" }, t("tourney.bye"));
  const cls = m.draw ? "drawn" : m.winner === s.slot ? "won" : (m.winner !== null ? "lost" : "");
  return el("span", { class: `side ${cls}`, "data-testid": `tourney-side-${s.slot}` }, s.name + (s.slot === data.mine ? ` (${t("tourney.you")})` : ""));
}

function matchCard(m, data, rnd) {
  const li = el("li", { class: "tourney-match", "data-testid": `tourney-match-${rnd}-${m.idx}` });
  const line = box("p", {}, [side(m, m.a, data), el("span", { class: "vs" }, " – "), side(m, m.b, data)]);
  li.append(line);
  if (m.totals && m.b) li.append(el("p", { class: "note" }, t("tourney.totals", { a: m.totals[0], b: m.totals[1] }) + (m.winner === DRAW ? ` · ${t("tourney.draw")}` : "")));
  else if (m.b && m.winner === null) li.append(el("p", { class: "note" }, m.table ? t("tourney.playing") : t("tourney.waiting")));
  if (m.table) {
    const mine = data.mine !== null && m.winner === null && [m.a && m.a.slot, m.b && m.b.slot].includes(data.mine);
    const a = el("a", { href: `/t/${m.table}`, class: mine ? "button-link primary" : "", "data-testid": mine ? "tourney-play" : `tourney-watch-${rnd}-${m.idx}` }, t(mine ? "tourney.play" : "tourney.watch"));
    a.addEventListener("click", (e) => { e.preventDefault(); go(`/t/${m.table}`); });
    li.append(box("p", {}, [a]));
  }
  return li;
}

// Points as a Swiss table writes them: 1½, ½, 2.
const halves = (x) => (x % 1 ? `${Math.floor(x) || ""}½` : String(x));

// A Swiss tournament's standings: rank, name, points, tie-break (Buchholz), games.
function standingsTable(data) {
  const cols = ["rank", "name", "points", "tiebreak", "games"];
  const cell = (r, c) => {
    if (c === "name") return r.slot === data.mine ? `${r.name} (${t("tourney.you")})` : r.name;
    return c === "points" || c === "tiebreak" ? halves(r[c]) : String(r[c]);
  };
  const head = box("tr", {}, cols.map((c) => el("th", { scope: "col", class: c }, t(`tourney.col_${c}`))));
  const rows = data.standings.map((r) => box("tr", { class: r.slot === data.mine ? "mine" : "", "data-testid": `tourney-standing-${r.rank}` },
    cols.map((c) => el("td", { class: c }, cell(r, c)))));
  return box("section", { class: "tourney-standings", "data-testid": "tourney-standings" }, [
    el("h2", {}, t("tourney.standings")),
    box("table", { class: "stats" }, [box("thead", {}, [head]), box("tbody", {}, rows)]),
    el("p", { class: "note" }, t("tourney.swiss_rule")),
  ]);
}

function status(data) {
  if (data.state === "over") return t("tourney.winner", { name: data.winner || "—" });
  if (data.state === "running") return t("tourney.running", { n: data.round });
  const n = data.entrants.length;
  if (data.starts_in === null) return t("tourney.open_full", { n, places: data.places });
  return t("tourney.open_at", { n, places: data.places, minutes: Math.ceil(data.starts_in / 60) });
}

function renderBracket() {
  const body = $("tourneys-body");
  const data = T.data;
  const parts = [el("p", { id: "tourney-error", class: "error", role: "alert", "data-testid": "tourney-error" }, T.error ? errorText(T.error) : "")];
  if (!data) { body.replaceChildren(...parts); return; }
  $("tourneys-title").textContent = data.name;
  const facts = [t(`tourney.format_${data.format || "knockout"}`), t("tourney.rounds_n", { n: data.rounds_total }), ruleName(data.rules), t(data.best_of === 5 ? "tourney.best_of_5" : "tourney.best_of_1"), t("tourney.places_n", { n: data.places })];
  if (data.fill) facts.push(t("tourney.cpu_fill", { level: levelName(data.fill) }));
  parts.push(el("p", { class: "note" }, facts.join(" · ")));
  parts.push(el("p", { class: "tourney-status", role: "status", "data-testid": "tourney-status", "data-state": data.state }, status(data)));
  if (data.state === "open" && data.mine === null) {
    if (ME.account) {
      const join = el("button", { type: "button", "data-testid": "tourney-join" }, t("tourney.join"));
      join.addEventListener("click", async () => {
        try { T.data = await api(`/api/tournaments/${data.code}/join`, {}); T.error = null; } catch (err) { T.error = err; }
        renderBracket();
      });
      parts.push(box("p", { class: "buttons" }, [join]));
    } else parts.push(el("p", { class: "note", "data-testid": "tourney-sign-in" }, t("tourney.sign_in")));
  }
  if (data.state === "open" && data.creator) {
    const start = el("button", { type: "button", "data-testid": "tourney-start-now" }, t("tourney.start_now"));
    start.addEventListener("click", async () => {
      try { T.data = await api(`/api/tournaments/${data.code}/start`, {}); T.error = null; } catch (err) { T.error = err; }
      renderBracket();
    });
    parts.push(box("p", { class: "buttons" }, [start]));
  }
  if (data.state === "open") {
    parts.push(el("p", { class: "note", "data-testid": "tourney-link" }, t("tourney.share", { link: `${location.origin}/tournaments/${data.code}` })));
  }
  const rounds = el("div", { class: "tourney-rounds", "data-testid": "tourney-bracket" });
  for (const r of data.rounds) {
    const list = el("ol", { class: "tourney-round-list" });
    for (const m of r.matches) list.append(matchCard(m, data, r.round));
    rounds.append(box("section", { class: "tourney-round", "data-testid": `tourney-round-${r.round}` }, [el("h2", {}, t("tourney.round", { n: r.round })), list]));
  }
  if (data.standings) parts.push(standingsTable(data));
  if (data.rounds.length) parts.push(rounds);
  const people = el("ul", { class: "tourney-entrants", "data-testid": "tourney-entrants" });
  for (const e of data.entrants) people.append(el("li", {}, e.cpu ? `${e.name} (${t("tourney.cpu")})` : e.name));
  parts.push(el("h2", {}, t("tourney.entrants_title")), people);
  body.replaceChildren(...parts);
}

async function poll() {
  stop();
  if (!T.code || $("tourneys").hidden) return;
  try { T.data = await api(`/api/tournaments/${T.code}`); T.error = null; } catch (err) { T.error = err; }
  renderBracket();
  if (T.data && T.data.state !== "over") T.timer = setTimeout(poll, POLL_MS);
}

export async function showTournaments(code = null) {
  stop();
  T.code = code; T.data = null; T.error = null;
  if (!ME.loaded) await loadSession();
  if (code) { $("tourneys-title").textContent = t("tourney.title"); await poll(); return; }
  $("tourneys-title").textContent = t("tourney.title");
  try { T.list = (await api("/api/tournaments")).tournaments; } catch (err) { T.error = err; }
  renderList();
}

export function redraw() {
  if (T.code) renderBracket();
  else { $("tourneys-title").textContent = t("tourney.title"); renderList(); }
}

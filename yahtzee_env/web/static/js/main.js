// The page of `yahtzee serve`. It only shows the server's state and sends intents; the
// server (yahtzee_env/web) checks every move with the engine and computes every score.
// Native ES modules, one concern each, no build step: page.js (helpers, the server's
// facts), words.js (the catalogues), settings.js, net.js (requests, the session, live
// updates), lobby.js, table.js (with its parts in table/: the head, the tray, the card, the
// seats, the coach, the result), rename.js (a seat's name), chat.js (the table's people),
// movelog.js (the move log, Share), notify.js (your-move notices), care.js (account care), mail.js (e-mail),
// statistics.js, charts.js, review.js, fair_dice.js (the dice's commitment and check), verify.js
// (the checker at /verify), match.js
// (quick match, open tables), friends.js (friends, presence, invitations), leaderboard.js,
// tournaments.js (/tournaments: the list, a new one, a bracket that updates live),
// profile.js (/p/NAME), spectate.js (a spectator's view), offline.js
// (the service worker, Install, games played in the page with the modules of game/ and
// policies/); this one routes.
import { $, config, go, onRoute, store } from "./page.js";
import { api, unfollow } from "./net.js";
import { I18N, fetchJSON, pickLanguage, setLanguage } from "./words.js";
import { applySettings, setup as setupSettings } from "./settings.js";
import * as lobby from "./lobby.js";
import * as table from "./table.js";
import * as statistics from "./statistics.js";
import * as review from "./review.js";
import * as match from "./match.js";
import * as friends from "./friends.js";
import * as board from "./leaderboard.js";
import * as profile from "./profile.js";
import * as tourneys from "./tournaments.js";
import * as offline from "./offline.js";
import * as verify from "./verify.js";

const VIEWS = { lobby, table, stats: statistics, review, leaderboard: board, profile, verify, tourneys };

function currentView() {
  return Object.keys(VIEWS).find((id) => !$(id).hidden);
}

// A hook that two views share (`client-seed`: the seat's client seed, in the lobby's More
// options and in the table's dice panel) names the field of the view shown: one a page.
function viewHooks() {
  for (const node of document.querySelectorAll("[data-view-testid]")) {
    if (node.closest("section[hidden]")) delete node.dataset.testid;
    else node.dataset.testid = node.dataset.viewTestid;
  }
}

function route() {
  const path = location.pathname;
  for (const id of Object.keys(VIEWS)) $(id).hidden = true;
  unfollow();
  match.stop();
  tourneys.stop();
  const tourney = path.match(/^\/tournaments(?:\/([A-Za-z0-9]+))?$/);
  const code = path.match(/^\/t\/([A-Za-z0-9]+)$/);
  const watch = path.match(/^\/w\/([A-Za-z0-9_-]+)$/);
  const game = path.match(/^\/games\/([A-Za-z0-9]+-\d+)$/);
  const person = path.match(/^\/p\/([^/]+)$/);  // the server checks the name
  if (code) { $("table").hidden = false; table.showTable(code[1]); }
  else if (watch) { $("table").hidden = false; table.showTable(watch[1], { watch: true }); }
  else if (tourney) { $("tourneys").hidden = false; tourneys.showTournaments(tourney[1] || null); }
  else if (path === "/leaderboard") { $("leaderboard").hidden = false; board.showLeaderboard(); }
  else if (person) { $("profile").hidden = false; profile.showProfile(person[1]); }
  else if (game) { $("review").hidden = false; review.showReview(game[1]); }
  else if (path === "/stats") { $("stats").hidden = false; statistics.showStats(); }
  else if (path === "/verify") { $("verify").hidden = false; verify.showVerify(); }
  else { $("lobby").hidden = false; lobby.showLobby(); match.show(); friends.show(); }
  offline.applyOffline();  // the banner's words depend on the view
  viewHooks();
}

// Switching language redraws the view from the state the page already has: no reload.
async function switchLanguage(lang) {
  store.set("yz.lang", lang);
  await setLanguage(lang);
  const view = VIEWS[currentView()];
  if (view) view.redraw();
  if (view === lobby) match.redraw();
  friends.redraw();  // the notices show on every view
}

async function start() {
  try { Object.assign(config, await api("/api/config")); } catch { /* the server answers later */ }
  I18N.languages = config.languages && config.languages.length ? config.languages : [{ code: "en", name: "English" }];
  try { I18N.base = await fetchJSON("/static/i18n/en.json"); } catch { I18N.base = {}; }
  const codes = I18N.languages.map((l) => l.code);
  try { await setLanguage(pickLanguage(codes)); } catch { await setLanguage("en"); }
  applySettings();
  route();
  friends.start();
}

document.addEventListener("DOMContentLoaded", () => {
  offline.setup();
  table.setup();
  for (const form of document.querySelectorAll("form")) form.addEventListener("submit", (e) => e.preventDefault());
  lobby.setup();
  match.setup();
  friends.setup();
  $("lang").addEventListener("change", (e) => switchLanguage(e.target.value));
  setupSettings();
  for (const a of document.querySelectorAll(".top a")) {
    a.addEventListener("click", (e) => { e.preventDefault(); go(a.getAttribute("href")); });
  }
  document.addEventListener("keydown", (e) => {
    if ($("table").hidden || e.target.matches("input, select, textarea, summary") || e.ctrlKey || e.metaKey || e.altKey) return;
    table.onKey(e);
  });
  window.addEventListener("popstate", route);
  onRoute(route);
  start();
});

// "Your move" while the tab is hidden (issue 32): when a state makes it this player's turn
// and the page is not visible, the page tells them: the Notification API once they opted in
// (the permission is asked on a tap of `notify-toggle`, never at load), a badge in the
// title, and a chime if the sound setting is on. Web Push (a notice with no tab open) is
// the next step, described in docs/web.md; nothing here fakes it.
import { $, el, store } from "./page.js";
import { sound } from "./settings.js";
import { t } from "./words.js";

const N = { code: null, wasMine: null, title: null };
const enabled = () => store.get("yz.notify", false) === true;
const supported = () => typeof window.Notification === "function";

// An icon button in the table's head: its name and title say what a tap does, aria-pressed
// whether the notices are on (the bell is struck through while they are off: style.css).
function label() {
  const b = $("notify-toggle");
  if (!b) return;
  const words = t(enabled() ? "notify.on" : "notify.off");
  b.setAttribute("aria-label", words);
  b.title = words;
  b.setAttribute("aria-pressed", String(enabled()));
}

async function toggle() {
  const status = $("share-status");
  if (enabled()) { store.set("yz.notify", false); label(); return; }
  let permission = supported() ? Notification.permission : "unsupported";
  if (permission === "default") {
    try { permission = await Notification.requestPermission(); } catch { permission = "denied"; }
  }
  store.set("yz.notify", true);  // the badge and the chime work without the permission
  label();
  if (status && permission !== "granted") status.textContent = t(permission === "denied" ? "notify.denied" : "notify.unsupported");
}

function clearBadge() {
  if (N.title !== null) { document.title = N.title; N.title = null; }
}

function tell(state) {
  if (N.title === null) N.title = document.title;
  document.title = `● ${t("notify.badge")} · ${N.title}`;
  sound.play("score");  // only if the sound setting is on
  if (enabled() && supported() && Notification.permission === "granted") {
    try {
      const notice = new Notification(t("notify.title"), { body: t("notify.body", { code: state.code }), tag: `yatzy-${state.code}` });
      if (notice && typeof notice.addEventListener === "function") notice.addEventListener("click", () => window.focus());
    } catch { /* some browsers only notify from a service worker: the badge stays */ }
  }
}

export function showTable(code) { N.code = code; N.wasMine = null; clearBadge(); label(); }

// Every state the table draws: a turn that has just become ours, in a hidden tab, is told.
export function onState(state, mine) {
  const now = Boolean(state.started && !state.over && mine.includes(state.current));
  const before = N.wasMine;
  N.wasMine = now;
  if (now && before === false && document.visibilityState === "hidden") tell(state);
  if (!now) clearBadge();
  const b = $("notify-toggle");  // a table with nobody else to wait for, or no seat of ours, has no notices
  if (b) b.hidden = !state.online || !mine.length;
}

export function redraw() { label(); }

export function setup() {
  $("notify-toggle").addEventListener("click", toggle);
  label();
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") clearBadge(); });
}

// ------------------------------------------------------------------ the lobby's "Your move"
// The open tables where it is this player's move, the soonest deadline first (no deadline
// last): `states` are the tables' states as the lobby read them (each with `mine`).
export function renderYourMove(states, go) {
  let list = $("your-move");
  if (!list) {
    const title = el("h2", { id: "your-move-title" });
    list = el("ul", { id: "your-move", class: "my-tables", "data-testid": "your-move", "aria-labelledby": "your-move-title" });
    const heading = document.querySelector('[data-i18n="lobby.open_tables"]') || $("my-tables");
    heading.before(title, list);
  }
  $("your-move-title").textContent = t("lobby.your_move_title");
  const due = Object.values(states).filter((s) => s && s.started && !s.over && (s.mine || []).includes(s.current));
  due.sort((a, b) => (a.deadline ?? Infinity) - (b.deadline ?? Infinity));
  list.replaceChildren(...due.map((s) => {
    const li = el("li", { "data-testid": `your-move-${s.code}`, "data-deadline": String(s.deadline ?? "") });
    const left = s.time_left !== undefined && s.time_left !== null ? t("lobby.move_left", { left: duration(s.time_left) }) : t("lobby.move_no_clock");
    li.append(el("span", { class: "info" }, `${s.code} · ${left}`));
    const a = el("a", { href: `/t/${s.code}`, class: "button-link primary" }, t("lobby.play_move"));
    a.addEventListener("click", (e) => { e.preventDefault(); go(`/t/${s.code}`); });
    li.append(a);
    return li;
  }));
  if (!due.length) list.append(el("li", {}, t("lobby.no_move")));
}

function duration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 3600) return t("people.time_left", { s });
  if (s < 86400) return t("people.time_left_hours", { h: Math.floor(s / 3600), m: Math.floor(s % 3600 / 60) });
  return t("people.time_left_days", { d: Math.floor(s / 86400), h: Math.floor(s % 86400 / 3600) });
}
export { duration };

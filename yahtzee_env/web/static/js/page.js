// The page's small helpers: its elements, its address, the browser's storage, and the
// server's facts (`config`, from /api/config: what the server enforces, written nowhere
// else in the page). Every other module of the page imports from this one.

export const params = new URLSearchParams(location.search);
export const $ = (id) => document.getElementById(id);
export const el = (tag, attrs = {}, text) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = String(text);
  return node;
};
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// What the server says it enforces (levels, rules, seat counts, turn timers, boxes,
// languages): filled once at the start (main.js), read by the views.
export const config = {
  levels: [], main_levels: [], fill: null, rules: [], min_seats: 0, max_seats: 0,
  turn_timers: [], turn_timer_range: [0, 0], turn_timer_online: 0, time_banks: [], boxes: [], upper_boxes: 0,
  languages: [],
};

// ------------------------------------------------------------------ browser storage
export const store = {
  get(key, fallback) {
    try { return JSON.parse(localStorage.getItem(key)) ?? fallback; } catch { return fallback; }
  },
  set(key, value) { try { localStorage.setItem(key, JSON.stringify(value)); } catch { /* private mode */ } },
};
// Seats belong to the session (an HttpOnly cookie the page cannot read): the server says
// which seats are ours (`mine`); no player or seat token is kept in the browser any more.
try { localStorage.removeItem("yz.tables"); localStorage.removeItem("yz.player"); } catch { /* private mode */ }

// ------------------------------------------------------------------ the page's address
// One page for every view: `go` changes the address without a reload and shows its view
// (the router is main.js's, set with `onRoute`).
let router = () => {};
export function onRoute(fn) { router = fn; }
export function go(path) {
  const url = new URL(path, location.origin);
  if (params.has("pace")) url.searchParams.set("pace", params.get("pace"));
  history.pushState({}, "", url.pathname + url.search);
  params.delete("join");
  new URLSearchParams(url.search).forEach((v, k) => params.set(k, v));
  router();
}

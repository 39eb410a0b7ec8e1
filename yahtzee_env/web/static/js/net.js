// The network, in one place: every request (`api`: a timeout, retries, the server's error
// codes), the session, and a table's live updates (`follow`: a socket, reconnected with
// backoff, or polling when the server refuses it), with the banner that says which.
import { $, sleep } from "./page.js";
import { t } from "./words.js";

// What the page does whenever the server answers (the table clears a network error).
let answered = () => {};
export function onAnswer(fn) { answered = fn; }

export class ApiError extends Error {
  constructor(message, code = "generic", params = {}, status = 0) {
    super(message); this.code = code; this.params = params; this.status = status;
  }
}

// Whether the server answers (issue 57), which `navigator.onLine` cannot say: a server that
// is down, a captive portal or a weak signal leave the browser "online". A request that gets
// no answer (a failed fetch, a timeout, a reply that is not the server's JSON) or one that
// the service worker answered from its cache (sw.js marks it) says the server is out of
// reach; any answer of the server says it is back. While it is out of reach the page asks
// `/healthz` every few seconds. `onReach(fn)`: `fn(up)` at each change (offline.js redraws
// the banner and sends the games played meanwhile).
export const reach = { server: true };
const REACH_PROBE_MS = 3000;
const REACH_PROBE_TIMEOUT_MS = 4000;
const FROM_CACHE = "X-Yatzy-From-Cache";  // sw.js's mark on an answer from its cache
const reachHeard = [];
let probing = null;
export function onReach(fn) { reachHeard.push(fn); }
/** The server can be asked now: the browser is online and the server answered last. */
export const serverReachable = () => navigator.onLine !== false && reach.server;

function setReach(up) {
  if (!up && !probing) probing = setInterval(probe, REACH_PROBE_MS);
  if (up && probing) { clearInterval(probing); probing = null; }
  if (up) requestsAnswered();
  if (reach.server === up) return;
  reach.server = up;
  drawConnection();
  for (const fn of reachHeard) fn(up);
}

/** Ask `/healthz` (never cached) whether the server answers again. */
export async function probe() {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), REACH_PROBE_TIMEOUT_MS);
  try {
    const response = await fetch("/healthz", { cache: "no-store", signal: abort.signal });
    const data = await response.json();
    if (response.ok && data && typeof data === "object") setReach(true);
    return reach.server;
  } catch {
    setReach(false);
    return false;
  } finally { clearTimeout(timer); }
}

// A table played in the page (offline.js, issue 50) answers its own requests:
// `local.owns(path)` says which, `local.answer(path, body)` answers (a promise).
let local = { owns: () => false, answer: null };
export function setLocal(table) { local = table; }

// Every request of the page goes through `api`: a timeout, retries of requests that are
// safe to repeat (reads, and moves: the server refuses a move made from a state it has left,
// code "stale_seq"), and errors that carry the server's machine `code` (and its `params`).
// With the browser offline or the server out of reach (`reach`), a request is tried once
// (the service worker may answer it from its cache), with no retries to wait for.
const FETCH_TIMEOUT_MS = 10000;
const GATEWAY = new Set([502, 503, 504]);  // a proxy's answer while the server is away
export async function api(path, body, { retries = 2, timeout = FETCH_TIMEOUT_MS } = {}) {
  if (local.owns(path)) return local.answer(path, body);
  if (!serverReachable()) retries = 0;
  const opts = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const noAnswer = () => {
    setReach(false);
    setConnection("reconnecting");
    return new ApiError("no answer from the server", "network", {}, 0);
  };
  for (let attempt = 0; ; attempt++) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeout);
    let response, data, json = true;
    try {
      response = await fetch(path, { ...opts, signal: abort.signal });
      try { data = await response.json(); } catch { data = { error: `server error ${response.status}` }; json = false; }
    } catch {
      clearTimeout(timer);
      if (attempt < retries) { await sleep(500 * 2 ** attempt); continue; }
      throw noAnswer();
    }
    clearTimeout(timer);
    // not the server's JSON: a captive portal's page (a 2xx), a gateway's error page
    if (!json && (response.ok || GATEWAY.has(response.status))) {
      if (attempt < retries) { await sleep(500 * 2 ** attempt); continue; }
      throw noAnswer();
    }
    // a 503 is retried (a server restarting), but not a coach that is warming up: it says how long
    if (response.status === 503 && data.code !== "coach_warming" && attempt < retries) { await sleep(500 * 2 ** attempt); continue; }
    if (response.headers.get(FROM_CACHE)) setReach(false);  // the service worker's copy: no server
    else { setReach(true); answered(); }  // the server answers again
    if (!response.ok) {
      const params = { ...(data.params || {}) };
      const retry = Number(response.headers.get("Retry-After"));  // every 429 says when
      if (params.retry_after === undefined && retry > 0) params.retry_after = retry;
      throw new ApiError(data.error || `server error ${response.status}`, data.code || "generic", params, response.status);
    }
    return data;
  }
}

// The banner over the page while live updates are down: "reconnecting" while the socket
// is (a retry is on its way), "polling" when the server refused it (the page asks for the
// table's state every few seconds instead). One banner at a time: while offline.js's banner
// says the browser is offline or the server out of reach (and what still plays), this one
// stays hidden.
const conn = { state: "online", reason: "" };
export function setConnection(state, reason = "") {
  Object.assign(conn, { state, reason });
  drawConnection();
}

// A request answered clears the "reconnecting" that a failed one put up, unless a table's
// socket is still down (it says when it is back).
function requestsAnswered() {
  const socketDown = live.socket && live.socket.readyState !== WebSocket.OPEN;
  if (conn.state === "reconnecting" && !socketDown) setConnection("online");
}

export function drawConnection() {
  const banner = $("connection");
  if (!banner) return;
  const { state, reason } = conn;
  banner.dataset.state = state;
  const offline = $("offline-banner");
  banner.hidden = state === "online" || Boolean(offline && !offline.hidden);
  const words = { reconnecting: () => t("conn.reconnecting"),
    polling: () => t(reason ? "conn.polling_why" : "conn.polling", { reason, s: POLL_MS / 1000 }) };
  banner.dataset.reason = reason;
  banner.textContent = words[state] ? words[state]() : "";
}

// The second press of a double click or double tap (the browser counts them in
// `event.detail`) is not a second intent, even when the first already has its answer.
export function pressOnce(work) {
  return (event) => { if (!(event && event.detail > 1)) work(); };
}

// Buttons that start a request stay disabled until it has its answer (no double submits).
export async function whileBusy(ids, work) {
  const buttons = ids.map((id) => $(id)).filter((b) => b && !b.disabled);
  if (buttons.length < ids.length) return;
  buttons.forEach((b) => { b.disabled = true; });
  try { await work(); } finally { buttons.forEach((b) => { b.disabled = false; }); }
}

// The session: a guest profile or an account, behind an HttpOnly cookie. The first visit
// asks for a name (no "You" by default).
export const ME = { player: null, account: null, loaded: false };
let sessionLoading = null;  // one request at a time, however many views ask
export function loadSession() {
  if (!sessionLoading) {
    sessionLoading = (async () => {
      try { Object.assign(ME, { rating: null }, await api("/api/session"), { loaded: true }); } catch { /* offline */ }
      return ME;
    })().finally(() => { sessionLoading = null; });
  }
  return sessionLoading;
}

// ------------------------------------------------------------------ live updates
// A socket per table; a seated page says which seat it is ("hello"), so that it gets in
// even when the watchers' slots are full. Close codes from the server
// (yahtzee_env/web/hub.py): 4404/4410 no such table, 4429 refused for lack of slots,
// 4409 replaced by a newer page of the same seat, 4403 refused origin.
const SOCKET_REFUSED = new Set([4403, 4409, 4429]);
const SOCKET_FINAL = new Set([4404, 4410]);
const POLL_MS = 3000;
const live = { code: null, on: null, socket: null, retry: 0, poll: null };

// Follow table `code`: `on.state(state)`, `on.presence(connected)`, `on.hello(seats)`,
// `on.error(err)`, `on.spectators(count)` hear what the server pushes; `on.seated()` says
// whether to say hello. A spectator follows its watch link: `on.socket` and `on.poll` are
// then the socket's path (after /ws/) and the state's URL.
export function follow(code, on) {
  if (local.owns(`/api/tables/${code}`)) return;  // a table in the page: nothing to follow
  live.code = code;
  live.on = on;
  connect();
}

// Stop following (the page shows another view): the socket closes, the polling stops.
export function unfollow() {
  if (live.socket) { const s = live.socket; live.socket = null; s.close(); }
  if (live.poll) { clearInterval(live.poll); live.poll = null; }
  setConnection("online");
}

function connect() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${proto}://${location.host}/ws/${live.on.socket || live.code}`);
  live.socket = socket;
  socket.onmessage = (msg) => {
    const data = JSON.parse(msg.data);
    if (data.type === "state") live.on.state(data.state);
    else if (data.type === "presence") live.on.presence(data.connected);
    else if (data.type === "hello") live.on.hello(data.seats || [data.seat]);
    else if (data.type === "spectators" && live.on.spectators) live.on.spectators(data.count);
    else if (data.type === "error" && data.status === 404) live.on.error(new ApiError(data.error, data.code, data.params));
    else if (live.on.other) live.on.other(data);  // chat (chat.js)
  };
  socket.onopen = () => {
    live.retry = 0;
    setReach(true);  // the server answers
    if (live.on.seated()) socket.send(JSON.stringify({ type: "hello" }));  // the cookie says who
    setConnection("online");
  };
  socket.onclose = (event) => {
    if (live.socket !== socket) return;
    if (SOCKET_FINAL.has(event.code)) { setConnection("online"); return; }
    if (SOCKET_REFUSED.has(event.code)) { startPolling(event.reason); return; }
    // retry with backoff (0.5 s doubling to 4 s), jittered: when a server dies, its pages
    // do not all reach the next one (through the load balancer) at the same instant
    setConnection("reconnecting");
    live.retry = Math.min(live.retry + 1, 4);
    if (live.retry === 2) probe();  // a socket that will not open: is the server there at all?
    const delay = 250 * 2 ** live.retry * (0.5 + Math.random() / 2);
    setTimeout(() => { if (live.socket === socket) connect(); }, delay);
  };
}

function startPolling(reason) {
  live.socket = null;
  setConnection("polling", reason || "");
  if (live.poll) return;
  live.poll = setInterval(async () => {
    try { live.on.state(await api(live.on.poll || `/api/tables/${live.code}`, undefined, { retries: 0 })); } catch { /* next time */ }
  }, POLL_MS);
}

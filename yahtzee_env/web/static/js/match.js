// Finding people to play with: quick match (ask for a game, wait with a countdown, go to
// the table once seated) and the tables their hosts listed as open (join with one tap).
// The server pairs the players and holds the queue; this only asks and shows.
import { $, config, el, go } from "./page.js";
import { ME, ApiError, api, loadSession, whileBusy } from "./net.js";
import { ensurePlayer, lastChoice, renderPlayWhat } from "./lobby.js";
import { errorText, levelName, ruleName, t, tn } from "./words.js";

const POLL_MS = 1500;
const Q = { status: { state: "idle" }, poll: null, tick: null, deadline: 0, open: [] };

function renderChoices() {
  const seats = $("quick-seats"), wait = $("quick-wait");
  const s = seats.value, w = wait.value;
  seats.replaceChildren();
  for (let n = config.min_seats; n <= config.max_seats; n++) seats.append(el("option", { value: n }, tn("quick.players", n)));
  const pick = (select, ...values) => {
    const have = [...select.options].map((o) => o.value);
    select.value = values.map((v) => (v === undefined || v === null ? "" : String(v))).find((v) => have.includes(v)) || have[0];
  };
  pick(seats, s, lastChoice("quickSeats"), config.min_seats);
  wait.replaceChildren(...(config.quick_waits || [30]).map((x) => el("option", { value: x }, t("quick.seconds", { s: x }))));
  pick(wait, w, lastChoice("quickWait"), config.quick_default_wait || 30);
}

function renderStatus() {
  const status = Q.status, node = $("quick-match-status");
  const waiting = status.state === "waiting" || status.state === "matching";
  $("quick-match").hidden = waiting;
  $("quick-match-cancel").hidden = !waiting;
  $("quick-seats").disabled = waiting;
  $("quick-wait").disabled = waiting;
  if (node.dataset.state !== status.state) {  // said once per change, not every second
    const said = { waiting: "quick.said_waiting", matching: "quick.matching", cancelled: "quick.cancelled" }[status.state];
    $("quick-match-said").textContent = said ? t(said) : "";
  }
  node.dataset.state = status.state;
  if (status.state === "waiting") {
    const left = Math.max(0, Math.ceil((Q.deadline - Date.now()) / 1000));
    node.textContent = t("quick.waiting", {
      left, n: status.waiting, seats: status.seats, rules: ruleName(status.rules), level: levelName(status.fill),
    });
  } else if (status.state === "matching") node.textContent = t("quick.matching");
  else if (status.state === "cancelled") node.textContent = t("quick.cancelled");
  else node.textContent = "";
}

function stopTimers() {
  if (Q.poll) { clearTimeout(Q.poll); Q.poll = null; }
  if (Q.tick) { clearInterval(Q.tick); Q.tick = null; }
}

function take(status) {
  Q.status = status;
  if (status.state === "matched") { stopTimers(); go(`/t/${status.code}`); return; }
  if (status.wait_left !== undefined) Q.deadline = Date.now() + status.wait_left * 1000;
  if (status.state === "waiting" || status.state === "matching") {
    if (!Q.tick) Q.tick = setInterval(renderStatus, 250);
    if (Q.poll) clearTimeout(Q.poll);
    Q.poll = setTimeout(poll, POLL_MS);
  } else stopTimers();
  renderStatus();
}

async function poll() {
  Q.poll = null;
  try { take(await api("/api/quick", undefined, { retries: 0 })); } catch { Q.poll = setTimeout(poll, POLL_MS * 2); }
}

async function ask() {
  $("lobby-error").textContent = "";
  try {
    const player = await ensurePlayer($("name").value);
    take(await api("/api/quick", {
      seats: Number($("quick-seats").value), wait: Number($("quick-wait").value),
      rules: $("rules").value, fill: $("fill").value, name: player.name, duplicate: $("duplicate").checked,
    }, { retries: 0 }));
  } catch (err) {
    if (err instanceof ApiError && err.code === "already_queued") { await poll(); return; }
    $("lobby-error").textContent = errorText(err);
  }
}

async function cancel() {
  stopTimers();
  try {
    const reply = await api("/api/quick/cancel", {}, { retries: 1 });
    if (reply.state === "matched") { take(reply); return; }
    take({ state: "cancelled" });
  } catch (err) { $("lobby-error").textContent = errorText(err); }
}

// ------------------------------------------------------------------ open tables
function renderOpen() {
  const list = $("open-tables");
  if (!Q.open.length) { list.replaceChildren(el("li", {}, t("open.none"))); return; }
  list.replaceChildren(...Q.open.map((x) => {
    const li = el("li", { "data-testid": `listed-${x.code}` });
    const info = el("span", { class: "info" });
    info.append(el("span", {}, t("open.line", { host: x.host, rules: ruleName(x.rules) })),
      el("small", {}, tn("open.free", x.free, { seats: x.seats })));
    const join = el("button", { type: "button", class: "primary", "data-testid": `join-open-${x.code}` }, t("open.join"));
    join.addEventListener("click", () => whileBusy([], () => joinOpen(x.code)));
    li.append(info, join);
    return li;
  }));
}

async function joinOpen(code) {
  $("lobby-error").textContent = "";
  try {
    const player = await ensurePlayer($("name").value);
    try { await api(`/api/tables/${code}/join`, { name: player.name }, { retries: 0 }); }
    catch (err) { if (err.code !== "already_seated") throw err; }
    go(`/t/${code}`);
  } catch (err) { $("lobby-error").textContent = errorText(err); loadOpen(); }
}

async function loadOpen() {
  try { Q.open = (await api("/api/open-tables")).tables; } catch { Q.open = []; }
  renderOpen();
}

// The lobby shows: where this session stands in the queue (a reload keeps waiting), the
// open tables. A first visit has no session, so nothing to ask about the queue.
export async function show() {
  renderChoices();
  renderPlayWhat();
  renderStatus();
  loadOpen();
  if (!ME.loaded) await loadSession();
  if (!ME.player) return;
  try { take(await api("/api/quick", undefined, { retries: 0 })); } catch { /* no session yet */ }
}

// Another view: the polling stops (the server drops a request nobody polls).
export function stop() { stopTimers(); }

export function redraw() { renderChoices(); renderPlayWhat(); renderStatus(); renderOpen(); }

export function setup() {
  $("quick-match").addEventListener("click", () => whileBusy(["quick-match"], ask));
  $("quick-match-cancel").addEventListener("click", () => whileBusy(["quick-match-cancel"], cancel));
}

// Spectators at a table: the host's read-only link (turned on and off here), how many watch
// (every player sees it), and a spectator's own view (a banner; no seat, no intents: the
// server refuses any from a spectator's socket).
import { $ } from "./page.js";
import { api, whileBusy } from "./net.js";
import { errorText, t, tn } from "./words.js";

const W = { code: null, watching: false, host: false, watch: undefined, count: 0 };

// A new table view: `watching` is true on a spectator's page (/w/ID).
export function reset(code, watching) {
  Object.assign(W, { code, watching, host: false, watch: undefined, count: 0 });
  draw();
}

export function render(state, host) {
  W.host = host && !W.watching;
  if (typeof state.spectators === "number") W.count = state.spectators;
  if (W.host && W.watch === undefined) { W.watch = null; load(); }
  draw();
}

export function setCount(n) { W.count = n; draw(); }

function draw() {
  $("spectating").hidden = !W.watching;
  $("table-code").parentElement.hidden = W.watching;  // a spectator never learns the code
  $("watch-tools").hidden = !W.host;
  const count = $("spectators");
  count.hidden = W.count < 1;
  count.dataset.count = String(W.count);
  count.textContent = tn("watch.count", W.count);
  $("watch-toggle").textContent = t(W.watch ? "watch.off" : "watch.on");
  const link = $("watch-link");
  link.hidden = !W.watch;
  if (W.watch) {
    const url = `${location.origin}/w/${W.watch}`;
    link.href = url;
    link.textContent = url;
  }
}

async function load() {
  try { W.watch = (await api(`/api/tables/${W.code}/watch`)).watch; } catch { W.watch = null; }
  draw();
}

async function toggle() {
  $("error").textContent = "";
  try {
    W.watch = (await api(`/api/tables/${W.code}/watch`, { on: !W.watch }, { retries: 0 })).watch;
  } catch (err) { $("error").textContent = errorText(err); }
  draw();
}

export function redraw() { draw(); }

export function setup() {
  $("watch-toggle").addEventListener("click", () => whileBusy(["watch-toggle"], toggle));
}

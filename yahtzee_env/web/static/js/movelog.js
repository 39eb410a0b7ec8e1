// The move log beside the card (every move of this game, in the page's language, the newest
// first) and the Share button (issue 32). The log starts from the server's replay of the
// whole game (/api/tables/CODE/moves: a state carries only the last events) and grows with
// the events of each state; `narrate` is the table's narration (table.js).
import { $, el } from "./page.js";
import { api } from "./net.js";
import { t } from "./words.js";

const M = { code: null, game: null, events: new Map(), narrate: (e) => e.text || "", loading: null, commitment: null };

function box() {
  let node = $("move-log-box");
  if (node) return node;
  node = el("details", { id: "move-log-box", class: "move-log-box", open: "" });
  node.append(el("summary", { id: "move-log-title" }));
  node.append(el("ol", { id: "move-log", class: "move-log", "data-testid": "move-log", reversed: "", tabindex: "0", "aria-labelledby": "move-log-title" }));
  node.append(el("p", { id: "log-commitment", class: "log-commitment", "data-testid": "log-commitment" }));
  const sheet = document.querySelector("#board .sheet");
  sheet.append(node);
  return node;
}

function render() {
  const list = $("move-log");
  if (!list) return;
  $("move-log-title").textContent = t("log.title", { n: M.events.size });
  const events = [...M.events.values()].sort((a, b) => b.seq - a.seq);
  list.replaceChildren(...events.map((e) => el("li", { "data-seq": String(e.seq), "data-seat": String(e.seat) }, M.narrate(e))));
  // the game's first line: its dice were committed to before the first roll (issue 49)
  const line = $("log-commitment");
  line.hidden = !M.commitment;
  line.textContent = M.commitment ? t("log.commitment", { hash: M.commitment }) : "";
}

async function load(code, game) {
  try {
    const log = await api(`/api/tables/${code}/moves`, undefined, { retries: 1 });
    if (M.code !== code || log.game !== game) return;
    for (const e of log.events) if (!M.events.has(e.seq) || M.events.get(e.seq).type === "hidden") M.events.set(e.seq, e);
    render();
  } catch { /* the states' events still show */ }
}

export function showTable(code) { M.code = code; M.game = null; M.events = new Map(); }

// Every state the table draws: a new game starts a new log (read whole from the server).
export function onState(state, narrate) {
  M.narrate = narrate;
  if (!M.code || !state.started || !state.events) { if ($("move-log-box")) $("move-log-box").hidden = true; return; }
  box().hidden = false;
  M.commitment = state.dice_commitment || null;
  if (M.game !== state.game) {
    M.game = state.game; M.events = new Map();
    load(state.code, state.game);
  }
  for (const e of state.events) M.events.set(e.seq, e);
  // a duplicate table shows a turn once this page's seat has played it: read the log again
  // when a turn is scored while some are hidden
  const hidden = [...M.events.values()].some((e) => e.type === "hidden");
  if (hidden && state.events.some((e) => e.type === "score")) load(state.code, state.game);
  render();
}

export function redraw() { render(); }

// ------------------------------------------------------------------ Share
// An icon button in the table's head (its name and title from the catalogue, share.label):
// the system's share sheet, else the clipboard, else the link to copy by hand.
async function share() {
  const code = M.code;
  const url = `${location.origin}/?join=${code}`;
  const status = $("share-status");
  status.textContent = "";
  if (typeof navigator.share === "function") {
    try { await navigator.share({ title: t("app.name"), text: t("share.text", { code }), url }); return; }
    catch (err) { if (err && err.name === "AbortError") return; }  // else: the clipboard
  }
  try {
    await navigator.clipboard.writeText(url);
    status.textContent = t("share.copied");
  } catch {
    status.textContent = t("share.copy_this", { url });
  }
}

export function setup() {
  $("share").addEventListener("click", share);
}

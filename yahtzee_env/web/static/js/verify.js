// The checker that runs anywhere (/verify, issue 58): paste a game record (GAME.json, from a
// game's review or anywhere) or drop its file, press Check, and every roll is recomputed here
// with fair_dice.js (both derivations: sha256-ctr-v1 and hmac-sha256-v2). Part of the one
// page, so the service worker's cache opens it offline after one visit.
import { $ } from "./page.js";
import { t } from "./words.js";
import { canVerify, verifyRecord } from "./fair_dice.js";

const V = { verdict: null };  // the last verdict, redrawn in the new language

function show(verdict) {
  V.verdict = verdict;
  const node = $("verify-verdict");
  if (!verdict) { node.textContent = ""; delete node.dataset.ok; return; }
  node.textContent = t(verdict.key, verdict.params);
  node.dataset.ok = String(verdict.ok);
  if (verdict.seat !== undefined) node.dataset.seat = String(verdict.seat + 1);
  else delete node.dataset.seat;
}

async function check() {
  const button = $("verify-check");
  let record;
  try { record = JSON.parse($("verify-record").value); } catch { show({ ok: false, key: "verify.bad_json", params: {} }); return; }
  if (record && record.dice && typeof record.dice === "object" && !Array.isArray(record.dice)) record = record.dice;  // a whole review
  if (!canVerify()) { show({ ok: false, key: "dice.check_unavailable", params: {} }); return; }
  button.disabled = true;
  show({ ok: null, key: "dice.checking", params: {} });
  try { show(await verifyRecord(record)); } finally { button.disabled = false; }
}

async function readFile(file) {
  if (!file) return;
  $("verify-record").value = await file.text();
  show(null);
}

let wired = false;
function setup() {
  if (wired) return;
  wired = true;
  $("verify-check").addEventListener("click", check);
  $("verify-file").addEventListener("change", (e) => readFile(e.target.files[0]));
  const area = $("verify-record");
  area.addEventListener("dragover", (e) => e.preventDefault());
  area.addEventListener("drop", (e) => {
    if (!e.dataTransfer.files.length) return;
    e.preventDefault();
    readFile(e.dataTransfer.files[0]);
  });
  area.addEventListener("input", () => show(null));
}

export function showVerify() { setup(); show(V.verdict); }
export function redraw() { show(V.verdict); }

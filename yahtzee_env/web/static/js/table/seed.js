// The dice's panel of the table's head (issue 58): a tap on the commitment shows it whole,
// with a copy button, and this page's client seed for the dice. The page makes the seed
// (crypto.getRandomValues; kept per table and game in localStorage, so a reload keeps it),
// or takes the one the person chose in the lobby's More options for the next table
// (`NEXT_SEED`), and sends it for each of its seats while the game's seeds are open (before
// its first roll, after the commitment was shown; once a game is over, the next game's:
// `client_seeds_game`); the person may edit it and send it again until then.
import { $, store } from "../page.js";
import { api } from "../net.js";
import { t } from "../words.js";
import { CLIENT_SEED, newClientSeed } from "../fair_dice.js";
import { isMine, watching } from "./seats.js";

const S = { code: null, state: null, sending: false, tried: new Set(), receive: null, flight: null };
// a new seed each game (a server that learnt one cannot have chosen a later game's dice for it)
const key = (code, game) => (game > 0 ? `yz.seed.${code}.${game}` : `yz.seed.${code}`);
const seedsGame = (state) => (state.client_seeds_game ?? state.game);
const valid = (seed) => typeof seed === "string" && CLIENT_SEED.test(seed);
// The seed the person chose in the lobby (More options): the next table this page sits at,
// with its seeds open, takes it, once (the server has learnt it there: another table gets
// a new one, so that no server knows a seed before it seals its dice).
export const NEXT_SEED = "yz.seed.next";

function seedOf(code, game, open) {
  let seed = store.get(key(code, game), null);
  if (valid(seed)) return seed;
  const chosen = open ? store.get(NEXT_SEED, null) : null;
  seed = valid(chosen) ? chosen : newClientSeed();
  store.set(key(code, game), seed);
  if (seed === chosen) store.set(NEXT_SEED, null);
  return seed;
}

const mySeats = (state) => state.seats.filter((s) => s.kind === "human" && isMine(s.seat)).map((s) => s.seat);

function send(seats, seed) {
  if (S.sending || !seats.length) return S.flight || Promise.resolve();
  S.flight = sendNow(seats, seed).finally(() => { S.flight = null; });
  return S.flight;
}

// The seed in flight lands before this page's first roll (a person's turn starts with the
// dice in the cup: the seeds stay open until the game's first roll, the Roll's tap).
export function settled() {
  return S.flight || Promise.resolve();
}

async function sendNow(seats, seed) {
  S.sending = true;
  const code = S.code;
  let state = null;
  try {
    for (const seat of seats) state = await api(`/api/tables/${code}/client-seed`, { seat, client_seed: seed }, { retries: 0 });
  } catch (err) {
    $("client-seed-status").textContent = err && err.code === "client_seed_late" ? t("dice.client_seed_closed") : String(err && err.message || err);
  } finally { S.sending = false; }
  if (state && S.code === code) { render(state); if (S.receive) S.receive(state); }
}

// The panel again from the last state: which seats are ours has changed (a socket's hello).
export function refresh() {
  if (S.state) render(S.state);
}

// The panel from a state (called with every state of the table).
export function render(state) {
  if (state.code !== S.code) { S.code = state.code; S.tried = new Set(); S.waits = 0; $("dice-panel").hidden = true; $("dice-commitment").setAttribute("aria-expanded", "false"); }
  S.state = state;
  const hash = state.dice_commitment || "";
  $("dice-commitment-full").textContent = hash;
  $("dice-commitment-copy").textContent = t("dice.copy");
  const row = $("client-seed-row");
  const seats = state.client_seeds && !watching() && !state.in_page ? mySeats(state) : [];
  row.hidden = !seats.length;
  if (!seats.length) {
    // which seats are ours may come a moment after the first state (the socket's hello)
    if (state.client_seeds_open && !watching() && (S.waits = (S.waits || 0) + 1) <= 60) {
      setTimeout(() => { if (S.state === state) render(state); }, 500);
    }
    return;
  }
  S.waits = 0;  // a later wait (a socket opened again, its hello to come) waits afresh
  const input = $("client-seed");
  const open = Boolean(state.client_seeds_open);
  const game = seedsGame(state);
  if (document.activeElement !== input) input.value = state.client_seeds[seats[0]] || seedOf(state.code, game, open);
  input.disabled = !open;
  $("client-seed-send").disabled = !open;
  const sent = state.client_seeds[seats[0]];
  const status = $("client-seed-status");
  if (sent) status.textContent = t("dice.client_seed_sent", { seed: sent, mark: (state.client_seed_marks || [])[seats[0]] || "" });
  else if (!open) status.textContent = t("dice.client_seed_closed");
  else status.textContent = "";
  // the page's own seed goes in by itself, once per game and seat, while the seeds are open
  const unsent = seats.filter((s) => !state.client_seeds[s] && !S.tried.has(`${game}:${s}`));
  if (open && unsent.length) {
    unsent.forEach((s) => S.tried.add(`${game}:${s}`));
    send(unsent, seedOf(state.code, game, open));
  }
}

export function setup(receive) {
  S.receive = receive;
  $("dice-commitment").addEventListener("click", () => {
    const panel = $("dice-panel");
    panel.hidden = !panel.hidden;
    $("dice-commitment").setAttribute("aria-expanded", String(!panel.hidden));
  });
  $("dice-commitment-copy").addEventListener("click", async () => {
    const hash = $("dice-commitment-full").textContent;
    try { await navigator.clipboard.writeText(hash); } catch {
      const range = document.createRange();  // no clipboard (http, an old browser): select it
      range.selectNodeContents($("dice-commitment-full"));
      getSelection().removeAllRanges(); getSelection().addRange(range);
    }
    $("dice-commitment-copy").textContent = t("dice.copied");
  });
  $("client-seed-send").addEventListener("click", () => {
    const input = $("client-seed");
    const seed = input.value.trim();
    if (!CLIENT_SEED.test(seed)) { $("client-seed-status").textContent = t("dice.client_seed_invalid"); return; }
    if (S.code && S.state) store.set(key(S.code, seedsGame(S.state)), seed);
    if (S.state) send(mySeats(S.state), seed);
  });
}

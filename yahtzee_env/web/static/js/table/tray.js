// The tray: the five dice in their places, their tumble, the status line above them and the
// buttons below (Roll, Score, Hint). It keeps the dice's screen places, the dice this
// player holds this turn, and the status line as a function (a language switch redraws it).
import { $, el, sleep } from "../page.js";
import { reducedMotion, sound } from "../settings.js";
import { t, tn } from "../words.js";

const PLACES = [0, 1, 2, 3, 4];
// Screen places of the dice. The server keeps dice sorted; the page keeps each held die in
// its place while the others roll: slots[k] is the die (server position) shown in place k.
let slots = [...PLACES];
let held = new Set();  // the dice (server positions) this player holds
let lastStatus = null;

export const dieNode = (i) => document.querySelector(`[data-testid="die-${i}"]`);
export const dieAt = (place) => slots[place];  // the die shown in place `place`

// ------------------------------------------------------------------ the status line
function setStatus(text) { $("status").textContent = text; }
export function say(fn) { lastStatus = fn; setStatus(fn()); }
export function sayAgain() { setStatus(lastStatus ? lastStatus() : ""); }

// ------------------------------------------------------------------ held dice
export const holding = () => held;
export function holdOnly(positions) { held = new Set(positions || []); }
export function toggleHold(pos) { if (held.has(pos)) held.delete(pos); else held.add(pos); }
// the faces held, in their places' order (as the player sees them)
export const heldFaces = (dice) => [...held].sort((a, b) => slots.indexOf(a) - slots.indexOf(b)).map((p) => dice[p]);
// the places (not the dice: the server renumbers them) that the next roll rolls
export const freePlaces = () => PLACES.filter((k) => !held.has(slots[k]));

// ------------------------------------------------------------------ places
export function resetPlaces() { slots = [...PLACES]; }

// A move: a roll keeps the kept dice in their places, a score puts them back in order.
export function follow(event) {
  if (event.type === "roll") slots = nextSlots(slots, event.dice_before, event.kept, event.dice);
  else slots = [...PLACES];
}

function nextSlots(places, before, keptPositions, after) {
  const keptFaces = keptPositions.map((p) => before[p]);
  const free = [0, 1, 2, 3, 4];
  const kept = [];
  for (const face of keptFaces) {  // where the kept dice are after the roll (as the server's positions_of)
    const spot = free.find((i) => after[i] === face && !kept.includes(i));
    kept.push(spot);
  }
  const out = new Array(5).fill(null);
  const used = new Set();
  places.forEach((pos, k) => {
    const idx = keptPositions.indexOf(pos);
    if (idx >= 0) { out[k] = kept[idx]; used.add(kept[idx]); }
  });
  const rest = [0, 1, 2, 3, 4].filter((p) => !used.has(p));
  for (let k = 0; k < 5; k++) if (out[k] === null) out[k] = rest.shift();
  return out;
}

function placeDice() {
  const tray = $("dice");
  const order = [...tray.children].map((n) => Number(n.dataset.testid.slice(4)));
  if (order.join() === slots.join()) return;
  const focused = document.activeElement;
  for (const pos of slots) tray.append(dieNode(pos));
  if (focused && tray.contains(focused)) focused.focus();
}

// ------------------------------------------------------------------ drawing
export function showDice(dice, heldNow, kept) {
  placeDice();
  slots.forEach((pos, k) => {
    const die = dieNode(pos);
    const value = dice && dice.length ? String(dice[pos]) : "";
    die.dataset.value = value;
    die.dataset.face = value;
    die.dataset.held = String(heldNow.has(pos));
    die.dataset.tag = t("die.tag");
    die.classList.toggle("kept", Boolean(kept && kept.includes(pos)));
    const state = heldNow.has(pos) || (kept && kept.includes(pos)) ? t("die.held") : t("die.free");
    die.setAttribute("aria-label", value ? t("die.label", { n: k + 1, face: t(`face.${value}`), state }) : t("die.unrolled", { n: k + 1 }));
    die.setAttribute("aria-pressed", String(heldNow.has(pos)));
  });
}

// Tumble, then settle: the dice that roll spin and flicker through faces, then show their
// value. Without motion (the setting or the device's), they just change.
export async function tumble(positions, ms) {
  if (reducedMotion() || !positions.length) return;
  sound.play("roll");
  const nodes = positions.map(dieNode);
  for (const die of nodes) { die.classList.remove("rolling"); void die.offsetWidth; die.classList.add("rolling"); }
  const end = Date.now() + ms;
  while (Date.now() < end) {
    for (const die of nodes) die.dataset.face = String(1 + Math.floor(Math.random() * 6));
    await sleep(70);
  }
  for (const die of nodes) die.dataset.face = die.dataset.value;
}

// The tray of a state: `mine`, this page's seat is to move (and nothing is animated);
// `live`, it may act now (no intent in flight); `selected`, the box chosen on the card.
export function render(state, { mine, live, animating, watch, selected, hintPending }) {
  const playing = !state.over;
  if (!animating) showDice(playing ? state.dice : [], mine ? held : new Set(state.held || []), null);
  const down = Boolean(state.dice && state.dice.length);  // none yet: the first roll is the Roll button's
  for (let i = 0; i < 5; i++) dieNode(i).disabled = !(live && state.rolls_left > 0 && down);
  const roll = $("roll");
  roll.disabled = !(live && state.rolls_left > 0 && held.size < 5);
  roll.textContent = playing ? tn("roll.left", state.rolls_left) : t("roll.button");
  $("score").disabled = !(live && selected);
  $("hint-button").hidden = !state.coach;
  $("hint-button").disabled = !live || hintPending || Boolean(state.cup);  // a hint is for dice down
  $("tray").dataset.cup = String(Boolean(playing && mine && state.cup));  // my dice in the cup
  $("tray").hidden = !playing;
  document.querySelector(".controls").hidden = watch;  // a spectator has nothing to press
}

// The dice's pips and clicks, and the tray's height for the CSS scroll padding around it.
export function setup(onDie) {
  for (let i = 0; i < 5; i++) {
    const die = dieNode(i);
    for (let p = 0; p < 9; p++) die.append(el("span", { class: "pip", "aria-hidden": "true" }));
    die.addEventListener("click", () => onDie(i));
  }
  if (window.ResizeObserver) {
    new ResizeObserver(([entry]) => {
      document.documentElement.style.setProperty("--tray-h", `${Math.ceil(entry.target.getBoundingClientRect().height)}px`);
    }).observe($("tray"));
  }
}

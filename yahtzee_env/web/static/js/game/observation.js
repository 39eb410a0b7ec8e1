// The Yahtzee-v0 observation and the network inputs: a port of yahtzee_env/game/observation.py.
//
// Layout (72 float32, all in [0, 1]):
//   [ 0:30)  sorted dice, one-hot: die i (ascending) has face f -> 6*i + (f-1)
//   [30:36)  face counts / 5        [36:39) re-rolls left, one-hot (0, 1, 2)
//   [39:52)  box open (1) or filled (0)
//   [52:65)  points the dice would score in each box / 50 (0 where not legal now; joker values)
//   [65]     upper total / threshold, capped at 1      [66] upper bonus earned
//   [67:70)  yahtzee box: open / holds 50 / holds 0    [70] the dice earn a Yahtzee bonus
//   [71]     boxes filled / 13
// Input version 2 appends the 14 rules-only `strategyFeatures`. Every value is computed in
// float64 and rounded once to float32 (a Float32Array store), as numpy does.
import { COUNTS, DICE, NUM_DICE, rollIndexFromCounts } from "./dice.js";
import { NUM_BOXES, UPPER_BONUS_THRESHOLD } from "./rules.js";

export const OBS_SIZE = 72;
export const POINTS_SCALE = 50.0;
export const STRATEGY_SIZE = 14;
export const INPUT_SIZES = Object.freeze({ 1: OBS_SIZE, 2: OBS_SIZE + STRATEGY_SIZE });
export const COUNTS_START = 30;
export const ROLLS_LEFT_START = 36;
export const OPEN_START = 39;
export const POINTS_START = 52;
export const UPPER_INDEX = 65;
export const UPPER_BONUS_INDEX = 66;
export const YAHTZEE_BOX_START = 67;
export const BONUS_INDEX = 70;
export const PROGRESS_INDEX = 71;

function popcount(x) {
  let n = 0;
  for (; x; x &= x - 1) n += 1;
  return n;
}

/** One observation. `legal`/`points` from `options`; `out` a Float32Array(72) to reuse. */
export function encode(roll, rollsLeft, filled, upperTotal, yahtzeeState, legal, points, threshold, bonus, out = null) {
  const obs = out || new Float32Array(OBS_SIZE);
  obs.fill(0, 0, OBS_SIZE);
  for (let i = 0; i < NUM_DICE; i++) obs[6 * i + DICE[NUM_DICE * roll + i] - 1] = 1;
  for (let f = 0; f < 6; f++) obs[COUNTS_START + f] = COUNTS[6 * roll + f] / NUM_DICE;
  obs[ROLLS_LEFT_START + rollsLeft] = 1;
  for (let b = 0; b < NUM_BOXES; b++) {
    obs[OPEN_START + b] = (filled >> b) & 1 ? 0 : 1;
    obs[POINTS_START + b] = legal[b] ? points[b] / POINTS_SCALE : 0;
  }
  obs[UPPER_INDEX] = Math.min(upperTotal / threshold, 1.0);
  obs[UPPER_BONUS_INDEX] = upperTotal >= threshold ? 1 : 0;
  obs[YAHTZEE_BOX_START + yahtzeeState] = 1;
  obs[BONUS_INDEX] = bonus ? 1 : 0;
  obs[PROGRESS_INDEX] = popcount(filled) / NUM_BOXES;
  return obs;
}

/** The observation of `seat` (default: the player to move) in a Game. */
export function encodeSeat(game, seat = null, out = null) {
  const card = game.players[seat === null ? game.current : seat];
  const { legal, points } = card.options(game.roll);
  const bonus = card.rules.tables.yahtzeeBonus(game.roll, card.yahtzeeState) > 0;
  return encode(game.roll, game.rollsLeft, card.filled, card.upperTotal, card.yahtzeeState, legal, points,
    card.rules.upper_bonus_threshold, bonus, out);
}

const clip = (x) => (x < -1 ? -1 : x > 1 ? 1 : x);

// Python's round(): half to even (as np.rint).
function roundHalfEven(x) {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The 14 rules-only features of one observation (`_strategy_row` in Python, bit for bit):
 *  [0] upper surplus over par /21   [1] par margin /21   [2] bonus still reachable
 *  [3] reach slack /42   [4:9) most dice of one face, one-hot   [9] run of four
 *  [10] run of five   [11] full-house pattern   [12] open lower boxes /7   [13] best points now */
export function strategyFeatures(obs, threshold = UPPER_BONUS_THRESHOLD, out = new Float32Array(STRATEGY_SIZE), at = 0) {
  const upper = roundHalfEven(Math.min(obs[UPPER_INDEX], 1.0) * threshold);
  let openFaces = 0;
  let filledFaces = 0;
  for (let f = 1; f <= 6; f++) {
    const flag = obs[OPEN_START + f - 1];
    openFaces += f * flag;
    filledFaces += f * (1.0 - flag);
  }
  const counts = [];
  for (let f = 0; f < 6; f++) counts.push(roundHalfEven(obs[COUNTS_START + f] * NUM_DICE));
  const reach = upper + 5 * openFaces - threshold;
  const most = Math.min(Math.max(Math.max(...counts), 1), 5);
  const present = counts.map((c) => c > 0);
  const all = (a, b) => present.slice(a, b).every(Boolean);
  let openLower = 0;
  for (let b = 6; b < NUM_BOXES; b++) openLower += obs[OPEN_START + b];
  let best = -Infinity;
  for (let b = 0; b < NUM_BOXES; b++) best = Math.max(best, obs[POINTS_START + b]);
  const values = [
    clip((upper - 3 * filledFaces) / 21.0),
    clip((upper + 3 * openFaces - threshold) / 21.0),
    reach >= 0 ? 1 : 0,
    clip(reach / 42.0),
    ...[1, 2, 3, 4, 5].map((k) => (most === k ? 1 : 0)),
    all(0, 4) || all(1, 5) || all(2, 6) ? 1 : 0,
    all(0, 5) || all(1, 6) ? 1 : 0,
    counts.includes(3) && counts.includes(2) ? 1 : 0,
    openLower / 7.0,
    best,
  ];
  for (let i = 0; i < STRATEGY_SIZE; i++) out[at + i] = values[i];
  return out;
}

/** What a model of input `version` reads for one observation. */
export function modelInput(obs, version = 1, threshold = UPPER_BONUS_THRESHOLD) {
  if (version === 1) return obs;
  if (version === 2) {
    const x = new Float32Array(INPUT_SIZES[2]);
    x.set(obs.subarray(0, OBS_SIZE));
    strategyFeatures(obs, threshold, x, OBS_SIZE);
    return x;
  }
  throw new RangeError(`unknown model input version ${version} (known: 1, 2)`);
}

/** The roll index an observation shows (its face counts), or -1. */
export function decodeRoll(obs) {
  const counts = [];
  for (let f = 0; f < 6; f++) counts.push(roundHalfEven(obs[COUNTS_START + f] * NUM_DICE));
  return counts.reduce((a, b) => a + b, 0) === NUM_DICE ? rollIndexFromCounts(counts) : -1;
}

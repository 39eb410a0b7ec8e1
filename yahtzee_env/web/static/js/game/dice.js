// Combinatorial tables over dice: a port of yahtzee_env/game/dice.py (same names, same order).
//
//   DICE[i]             the i-th sorted roll (5 ascending faces 1..6), i < 252: DICE.subarray(5*i, 5*i+5)
//   COUNTS[i]           how many of each face 1..6 roll i shows: COUNTS[6*i + f-1]
//   KEEP_COUNTS[k]      the face counts of keep k (0..5 dice), k < 462: KEEP_COUNTS[6*k + f-1]
//   HOLD_TO_KEEP[i, h]  the keep made by holding dice {j : bit j of h} of DICE[i]: [32*i + h]
//   KEEP_CDF[k, i]      cumulative count over the 6**5 equally likely re-rolls of keep k:
//                       a uniform integer r in [0, 7776) picks roll bisectRight(KEEP_CDF[k], r)
//   CANONICAL_HOLDS[i, h]  the first hold of each distinct keep of roll i, keep-all excluded
//
// Python builds these with numpy; here they are built once at import (a few ms) in the very
// same orders, so that a roll index, a keep index and an action mean the same on both sides.

export const NUM_DICE = 5;
export const NUM_FACES = 6;
export const NUM_HOLDS = 1 << NUM_DICE; // 32 hold masks over the sorted dice
export const ROLL_OUTCOMES = NUM_FACES ** NUM_DICE; // 7776 equally likely ordered rolls
export const FIRST_ROLL_KEEP = 0; // the empty keep: roll all five dice

// itertools.combinations_with_replacement(range(lo, hi + 1), n), in its (lexicographic) order.
function combinationsWithReplacement(lo, hi, n) {
  const out = [];
  const walk = (start, prefix) => {
    if (prefix.length === n) { out.push(prefix.slice()); return; }
    for (let f = start; f <= hi; f++) { prefix.push(f); walk(f, prefix); prefix.pop(); }
  };
  walk(lo, []);
  return out;
}

function countsOf(faces) {
  const c = [0, 0, 0, 0, 0, 0];
  for (const f of faces) c[f - 1] += 1;
  return c;
}

// Base-6 code of face counts (each 0..5): a dense integer key for a multiset.
function countsCode(counts, offset = 0) {
  let code = 0;
  for (let f = NUM_FACES - 1; f >= 0; f--) code = code * NUM_FACES + counts[offset + f];
  return code;
}

const rolls = combinationsWithReplacement(1, NUM_FACES, NUM_DICE);
export const NUM_ROLLS = rolls.length; // 252
export const DICE = Int8Array.from(rolls.flat());
export const COUNTS = Int8Array.from(rolls.flatMap(countsOf));

const keeps = [];
for (let n = 0; n <= NUM_DICE; n++) keeps.push(...combinationsWithReplacement(1, NUM_FACES, n));
export const NUM_KEEPS = keeps.length; // 462
export const KEEP_COUNTS = Int8Array.from(keeps.flatMap(countsOf));
export const KEEP_SIZE = Int8Array.from(keeps, (k) => k.length);

const ROLL_INDEX = new Int16Array(NUM_FACES ** NUM_FACES).fill(-1);
const KEEP_INDEX = new Int16Array(NUM_FACES ** NUM_FACES).fill(-1);
for (let i = 0; i < NUM_ROLLS; i++) ROLL_INDEX[countsCode(COUNTS, 6 * i)] = i;
for (let k = 0; k < NUM_KEEPS; k++) KEEP_INDEX[countsCode(KEEP_COUNTS, 6 * k)] = k;

/** Roll index of six face counts (summing to five), or -1. */
export function rollIndexFromCounts(counts) {
  if (counts.length !== NUM_FACES || counts.some((c) => !Number.isInteger(c) || c < 0 || c > NUM_DICE)) return -1;
  return ROLL_INDEX[countsCode(counts)];
}

/** Index in DICE of five dice given in any order (faces 1..6). */
export function rollIndex(dice) {
  if (dice.length !== NUM_DICE || dice.some((d) => !Number.isInteger(d) || d < 1 || d > NUM_FACES)) {
    throw new RangeError(`expected five dice with faces 1..6, got ${JSON.stringify(Array.from(dice))}`);
  }
  return ROLL_INDEX[countsCode(countsOf(dice))];
}

/** Index in KEEP_COUNTS of a keep given as six face counts. */
export function keepIndex(counts) {
  const k = counts.length === NUM_FACES && counts.every((c) => Number.isInteger(c) && c >= 0 && c <= NUM_DICE)
    ? KEEP_INDEX[countsCode(counts)] : -1;
  if (k < 0) throw new RangeError(`not a keep of at most five dice: ${JSON.stringify(Array.from(counts))}`);
  return k;
}

export const HOLD_TO_KEEP = new Int16Array(NUM_ROLLS * NUM_HOLDS);
for (let i = 0; i < NUM_ROLLS; i++) {
  for (let h = 0; h < NUM_HOLDS; h++) {
    const kept = [0, 0, 0, 0, 0, 0];
    for (let j = 0; j < NUM_DICE; j++) if ((h >> j) & 1) kept[DICE[5 * i + j] - 1] += 1;
    HOLD_TO_KEEP[NUM_HOLDS * i + h] = KEEP_INDEX[countsCode(kept)];
  }
}

const FACTORIAL = [1, 1, 2, 6, 24, 120];

// Exact outcome distribution of every keep, as counts over the 6**5 ordered re-rolls.
export const KEEP_CDF = new Int32Array(NUM_KEEPS * NUM_ROLLS);
for (let k = 0; k < NUM_KEEPS; k++) {
  const weights = new Array(NUM_ROLLS).fill(0);
  const n = NUM_DICE - KEEP_SIZE[k];
  for (const faces of combinationsWithReplacement(1, NUM_FACES, n)) {
    const rc = countsOf(faces);
    const w = FACTORIAL[n] / rc.reduce((p, c) => p * FACTORIAL[c], 1);
    const total = rc.map((c, f) => c + KEEP_COUNTS[6 * k + f]);
    weights[ROLL_INDEX[countsCode(total)]] += w * NUM_FACES ** (NUM_DICE - n);
  }
  let sum = 0;
  for (let i = 0; i < NUM_ROLLS; i++) { sum += weights[i]; KEEP_CDF[NUM_ROLLS * k + i] = sum; }
  if (sum !== ROLL_OUTCOMES) throw new Error(`keep ${k}: outcome weights sum to ${sum}`);
}

/** The roll after re-rolling every die not in keep k, given a uniform integer r in [0, 7776). */
export function rollOutcome(keep, r) {
  // bisect_right over the keep's row: the first i with KEEP_CDF[keep, i] > r
  let lo = 0;
  let hi = NUM_ROLLS;
  const base = NUM_ROLLS * keep;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (KEEP_CDF[base + mid] > r) hi = mid; else lo = mid + 1;
  }
  return lo;
}

// Holding the first 3 of 2,2,2,5,6 and holding dice 0,1,2 of it is the same keep; a learner
// needs to see only one of them. Keep-all (hold 31) is a wasted roll and is left out too.
export const CANONICAL_HOLDS = new Uint8Array(NUM_ROLLS * NUM_HOLDS);
for (let i = 0; i < NUM_ROLLS; i++) {
  const seen = new Set();
  for (let h = 0; h < NUM_HOLDS; h++) {
    const k = HOLD_TO_KEEP[NUM_HOLDS * i + h];
    if (!seen.has(k)) { seen.add(k); CANONICAL_HOLDS[NUM_HOLDS * i + h] = 1; }
  }
  CANONICAL_HOLDS[NUM_HOLDS * i + NUM_HOLDS - 1] = 0;
}

/** The five dice of roll i, ascending. */
export function diceOf(roll) {
  return Array.from(DICE.subarray(NUM_DICE * roll, NUM_DICE * roll + NUM_DICE));
}

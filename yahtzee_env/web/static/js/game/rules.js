// The scorecard and the rules: a port of yahtzee_env/game/rules.py (box order, rule variants
// `RuleSet`, the scoring tables and `BoxScoring.fill`, the one place a fill is put together).
//
// Boxes, in the order used everywhere (box b is action 32 + b):
//   0 aces  1 twos  2 threes  3 fours  4 fives  5 sixes                       (upper section)
//   6 three_of_a_kind  7 four_of_a_kind  8 full_house  9 small_straight
//   10 large_straight  11 yahtzee  12 chance                                  (lower section)
// A set of filled boxes is a 13-bit integer `filled`; the yahtzee box has three states.
import { COUNTS, DICE, NUM_ROLLS } from "./dice.js";

export const BOX_NAMES = Object.freeze([
  "aces", "twos", "threes", "fours", "fives", "sixes", "three_of_a_kind", "four_of_a_kind",
  "full_house", "small_straight", "large_straight", "yahtzee", "chance",
]);
export const Box = Object.freeze(Object.fromEntries(BOX_NAMES.map((n, b) => [n.toUpperCase(), b])));

export const NUM_BOXES = 13;
export const NUM_UPPER = 6;
export const UPPER_MASK = (1 << NUM_UPPER) - 1;
export const ALL_FILLED = (1 << NUM_BOXES) - 1;
export const NUM_FILLED_MASKS = 1 << NUM_BOXES;
export const MAX_UPPER_TOTAL = 105;
export const YAHTZEE_OPEN = 0;
export const YAHTZEE_50 = 1;
export const YAHTZEE_0 = 2;
export const UPPER_BONUS_THRESHOLD = 63;
export const FULL_HOUSE_POINTS = 25;
export const SMALL_STRAIGHT_POINTS = 30;
export const LARGE_STRAIGHT_POINTS = 40;
export const YAHTZEE_POINTS = 50;
export const MAX_BONUS_VALUE = 1000;
export const POINTS_NATURAL = 0;
export const POINTS_JOKER = 1;

// [252 * 13] points each roll scores in each box, no joker rule applied.
export const NATURAL_SCORES = new Int16Array(NUM_ROLLS * NUM_BOXES);
export const IS_YAHTZEE = new Uint8Array(NUM_ROLLS);
export const YAHTZEE_FACE = new Int8Array(NUM_ROLLS); // 0..5, or -1
for (let r = 0; r < NUM_ROLLS; r++) {
  const counts = Array.from(COUNTS.subarray(6 * r, 6 * r + 6));
  let total = 0;
  for (let j = 0; j < 5; j++) total += DICE[5 * r + j];
  const most = Math.max(...counts);
  const present = counts.map((c) => c > 0);
  const run = (a, n) => present.slice(a, a + n).every(Boolean);
  const ranked = counts.slice().sort((x, y) => x - y);
  const s = NATURAL_SCORES.subarray(NUM_BOXES * r, NUM_BOXES * r + NUM_BOXES);
  for (let f = 0; f < NUM_UPPER; f++) s[f] = counts[f] * (f + 1);
  s[Box.THREE_OF_A_KIND] = most >= 3 ? total : 0;
  s[Box.FOUR_OF_A_KIND] = most >= 4 ? total : 0;
  s[Box.FULL_HOUSE] = ranked[5] === 3 && ranked[4] === 2 ? FULL_HOUSE_POINTS : 0;
  s[Box.SMALL_STRAIGHT] = run(0, 4) || run(1, 4) || run(2, 4) ? SMALL_STRAIGHT_POINTS : 0;
  s[Box.LARGE_STRAIGHT] = run(0, 5) || run(1, 5) ? LARGE_STRAIGHT_POINTS : 0;
  s[Box.YAHTZEE] = most === 5 ? YAHTZEE_POINTS : 0;
  s[Box.CHANCE] = total;
  IS_YAHTZEE[r] = most === 5 ? 1 : 0;
  YAHTZEE_FACE[r] = most === 5 ? DICE[5 * r] - 1 : -1;
}

const FIELDS = Object.freeze({
  joker: "forced", yahtzee_bonus: true, yahtzee_bonus_value: 100, upper_first: false,
  upper_bonus_threshold: UPPER_BONUS_THRESHOLD, upper_bonus_value: 35,
});

/** Immutable, validated rule variant (the fields and checks of the Python `RuleSet`, with the
 * Python field names so that `/api/config` and a saved game read the same). */
export class RuleSet {
  constructor(fields = {}) {
    for (const key of Object.keys(fields)) {
      if (!(key in FIELDS)) throw new RangeError(`RuleSet has no field ${JSON.stringify(key)}`);
    }
    const v = { ...FIELDS, ...fields };
    for (const [key, value] of Object.entries(v)) {
      const expected = typeof FIELDS[key];
      if (typeof value !== expected || (expected === "number" && !Number.isInteger(value))) {
        throw new RangeError(`RuleSet.${key} must be ${expected === "number" ? "int" : expected}, got ${JSON.stringify(value)}`);
      }
    }
    if (!["forced", "free", "none"].includes(v.joker)) {
      throw new RangeError(`RuleSet.joker must be 'forced', 'free' or 'none', got ${JSON.stringify(v.joker)}`);
    }
    if (!(v.upper_bonus_threshold >= 1 && v.upper_bonus_threshold <= MAX_UPPER_TOTAL)) {
      throw new RangeError(`RuleSet.upper_bonus_threshold must be in 1..${MAX_UPPER_TOTAL}, got ${v.upper_bonus_threshold}`);
    }
    if (!(v.upper_bonus_value >= 0 && v.upper_bonus_value <= MAX_BONUS_VALUE)) {
      throw new RangeError(`RuleSet.upper_bonus_value must be in 0..${MAX_BONUS_VALUE}, got ${v.upper_bonus_value}`);
    }
    if (!(v.yahtzee_bonus_value > 0 && v.yahtzee_bonus_value <= MAX_BONUS_VALUE)) {
      throw new RangeError(`RuleSet.yahtzee_bonus_value must be in 1..${MAX_BONUS_VALUE}, got ${v.yahtzee_bonus_value}`);
    }
    if (!v.yahtzee_bonus && v.yahtzee_bonus_value !== 100) {
      throw new RangeError("RuleSet.yahtzee_bonus_value is set but RuleSet.yahtzee_bonus is False");
    }
    Object.assign(this, v);
    Object.freeze(this);
  }

  /** A RuleSet from a preset name, a RuleSet, or null (official). */
  static fromSpec(spec) {
    if (spec == null) return PRESETS.official;
    if (spec instanceof RuleSet) return spec;
    if (typeof spec === "string" && Object.hasOwn(PRESETS, spec)) return PRESETS[spec];
    throw new RangeError(`unknown rules ${JSON.stringify(spec)}; presets are: ${Object.keys(PRESETS).join(", ")}`);
  }

  equals(other) {
    return Object.keys(FIELDS).every((k) => this[k] === other[k]);
  }

  /** The preset name if this is a preset, else a description of the fields. */
  get name() {
    for (const [name, preset] of Object.entries(PRESETS)) if (preset.equals(this)) return name;
    return Object.keys(FIELDS).filter((k) => this[k] !== FIELDS[k]).map((k) => `${k}=${this[k]}`).join(",");
  }

  upperBonus(upperTotal) {
    return upperTotal >= this.upper_bonus_threshold ? this.upper_bonus_value : 0;
  }

  upperBonusGain(before, after) {
    const t = this.upper_bonus_threshold;
    return before < t && after >= t ? this.upper_bonus_value : 0;
  }

  toDict() {
    return Object.fromEntries(Object.keys(FIELDS).map((k) => [k, this[k]]));
  }

  /** The scoring tables of these rules (built once per rule set, shared). */
  get tables() {
    let t = SCORING.get(this);
    if (!t) { t = new BoxScoring(this); SCORING.set(this, t); }
    return t;
  }
}
const SCORING = new WeakMap();

export const PRESETS = Object.freeze({
  official: new RuleSet(),
  "free-joker": new RuleSet({ joker: "free" }),
  "no-joker": new RuleSet({ joker: "none" }),
  "no-joker-no-bonus": new RuleSet({ joker: "none", yahtzee_bonus: false }),
  "upper-first": new RuleSet({ upper_first: true }),
});

/** The yahtzee-box state after filling `box` with `points`. */
export function nextYahtzeeState(yahtzeeState, box, points) {
  if (box !== Box.YAHTZEE) return yahtzeeState;
  return points > 0 ? YAHTZEE_50 : YAHTZEE_0;
}

/** Legal boxes and points of every (roll, filled boxes, yahtzee-box state). `legal(context,
 * filled)` is the 13-bit set of boxes that may be filled, where context is 0 for an ordinary roll
 * and 1 + face for a Yahtzee of that face rolled while the yahtzee box is filled (the joker). */
export class BoxScoring {
  constructor(rules) {
    this.rules = rules;
    this.bonusValue = rules.yahtzee_bonus ? rules.yahtzee_bonus_value : 0;
    this._legal = new Int16Array(7 * NUM_FILLED_MASKS);
    const lower = ALL_FILLED & ~UPPER_MASK;
    for (let filled = 0; filled < NUM_FILLED_MASKS; filled++) {
      let allowed = ALL_FILLED & ~filled;
      if (rules.upper_first && (filled & UPPER_MASK) !== UPPER_MASK) allowed &= UPPER_MASK;
      this._legal[filled] = allowed;
      for (let face = 0; face < 6; face++) {
        let legal = allowed;
        if (rules.joker === "forced") {
          if (!((filled >> face) & 1)) legal = 1 << face; // its own upper box, if open
          else legal = (allowed & lower) !== 0 ? allowed & lower : allowed & ~lower;
        }
        this._legal[(1 + face) * NUM_FILLED_MASKS + filled] = legal;
      }
    }
  }

  /** The 13-bit set of legal boxes in a context. */
  legal(context, filled) {
    return this._legal[context * NUM_FILLED_MASKS + filled];
  }

  /** [legal-table context, points context] for one roll: the whole joker logic. */
  context(roll, filled, yahtzeeState) {
    const face = YAHTZEE_FACE[roll];
    if (face < 0 || yahtzeeState === YAHTZEE_OPEN || this.rules.joker === "none") return [0, POINTS_NATURAL];
    if (this.rules.joker === "forced" || (filled >> face) & 1) return [1 + face, POINTS_JOKER];
    return [1 + face, POINTS_NATURAL]; // free joker, own upper box still open
  }

  /** What roll scores in box under a points context (joker values: lower boxes at full value). */
  points(roll, values, box) {
    if (values === POINTS_JOKER && IS_YAHTZEE[roll]) {
      if (box === Box.FULL_HOUSE) return FULL_HOUSE_POINTS;
      if (box === Box.SMALL_STRAIGHT) return SMALL_STRAIGHT_POINTS;
      if (box === Box.LARGE_STRAIGHT) return LARGE_STRAIGHT_POINTS;
    }
    return NATURAL_SCORES[NUM_BOXES * roll + box];
  }

  /** {legal: bool[13], points: int[13]} of placing roll, bonus not included. */
  options(roll, filled, yahtzeeState) {
    const [ctx, values] = this.context(roll, filled, yahtzeeState);
    const bits = this.legal(ctx, filled);
    const legal = new Array(NUM_BOXES);
    const points = new Array(NUM_BOXES);
    for (let b = 0; b < NUM_BOXES; b++) {
      legal[b] = ((bits >> b) & 1) === 1;
      points[b] = this.points(roll, values, b);
    }
    return { legal, points };
  }

  /** Fill box with roll: the one place a fill's outcome is put together (legality is the
   * caller's). upperTotal and yahtzeeState are the card's before the fill. */
  fill(roll, box, values, upperTotal, yahtzeeState) {
    const points = this.points(roll, values, box);
    const bonus = this.yahtzeeBonus(roll, yahtzeeState);
    const after = upperTotal + (box < NUM_UPPER ? points : 0);
    return {
      points,
      bonus,
      reward: points + bonus + this.rules.upperBonusGain(upperTotal, after),
      upperTotal: after,
      yahtzeeState: nextYahtzeeState(yahtzeeState, box, points),
    };
  }

  /** The bonus a roll earns wherever it is placed (0 unless a further Yahtzee). */
  yahtzeeBonus(roll, yahtzeeState) {
    return IS_YAHTZEE[roll] && yahtzeeState === YAHTZEE_50 ? this.bonusValue : 0;
  }
}

// The game: scorecards, turns, 1..N players. A port of yahtzee_env/game/engine.py.
//
// Action ids (shared with every env, the solver and the policies):
//   0..31   hold mask: bit i keeps die i of the *sorted* dice, the others are re-rolled.
//           Legal while re-rolls remain. 31 keeps all: it re-rolls nothing and uses a roll.
//   32..44  fill box 0..12 (order of BOX_NAMES).
// A roll is one uniform integer in [0, 6**5) looked up in the exact outcome table of the keep,
// as in Python: fed the same integers (`SequenceRoller`), both engines deal the same dice.
import {
  CANONICAL_HOLDS, FIRST_ROLL_KEEP, HOLD_TO_KEEP, NUM_DICE, NUM_HOLDS, ROLL_OUTCOMES, diceOf, rollOutcome,
} from "./dice.js";
import {
  ALL_FILLED, BOX_NAMES, Box, IS_YAHTZEE, NUM_BOXES, NUM_UPPER, RuleSet, UPPER_MASK, YAHTZEE_50, YAHTZEE_OPEN,
} from "./rules.js";

export const NUM_ACTIONS = NUM_HOLDS + NUM_BOXES; // 45
export const BOX_ACTION_OFFSET = NUM_HOLDS;
export const KEEP_ALL = NUM_HOLDS - 1;
export const ROLLS_PER_TURN = 3;
export const NUM_TURNS = NUM_BOXES;

/** An action the rules do not allow in the current state. The state is unchanged. */
export class IllegalActionError extends Error {
  constructor(message) { super(message); this.name = "IllegalActionError"; }
}

export function boxAction(box) { return BOX_ACTION_OFFSET + box; }

/** A short human-readable name: hold[0,2] or box:full_house. */
export function describeAction(action) {
  if (action >= 0 && action < NUM_HOLDS) {
    const kept = [];
    for (let i = 0; i < NUM_DICE; i++) if ((action >> i) & 1) kept.push(i);
    return `hold[${kept.join(",")}]`;
  }
  if (action >= BOX_ACTION_OFFSET && action < NUM_ACTIONS) return `box:${BOX_NAMES[action - BOX_ACTION_OFFSET]}`;
  return `<invalid action ${action}>`;
}

/** Rolls dice from the browser's cryptographic generator (uniform by rejection sampling).
 * `draws` logs every integer dealt (a saved game replays them); `replay` deals those first. */
export class DiceRoller {
  constructor(crypto = globalThis.crypto, replay = []) {
    this.crypto = crypto;
    this.draws = [];
    this._replay = Array.from(replay);
    this._pending = new Uint32Array(64);
    this._next = this._pending.length;
  }

  /** A uniform integer in [0, 7776). */
  draw() {
    if (this.draws.length < this._replay.length) {
      const r = this._replay[this.draws.length];
      if (!(Number.isInteger(r) && r >= 0 && r < ROLL_OUTCOMES)) throw new RangeError(`draw ${r} is not in 0..${ROLL_OUTCOMES - 1}`);
      this.draws.push(r);
      return r;
    }
    const limit = Math.floor(2 ** 32 / ROLL_OUTCOMES) * ROLL_OUTCOMES; // no modulo bias
    for (;;) {
      if (this._next === this._pending.length) { this.crypto.getRandomValues(this._pending); this._next = 0; }
      const x = this._pending[this._next++];
      if (x < limit) { this.draws.push(x % ROLL_OUTCOMES); return x % ROLL_OUTCOMES; }
    }
  }

  /** The roll index after re-rolling every die not in `keep` (a keep index). */
  roll(keep = FIRST_ROLL_KEEP) { return rollOutcome(keep, this.draw()); }
}

/** Deals from a given sequence of integers in [0, 7776), in order: Python's draws, for tests. */
export class SequenceRoller extends DiceRoller {
  constructor(draws) { super(null, draws); }

  draw() {
    if (this.draws.length >= this._replay.length) throw new RangeError(`the dice sequence ran out after ${this.draws.length} rolls`);
    return super.draw();
  }
}

/** One player's scorecard. scores[b] is null while box b is open. */
export class Scorecard {
  constructor(rules = new RuleSet()) {
    this.rules = rules;
    this.scores = new Array(NUM_BOXES).fill(null);
    this.filled = 0;
    this.upperTotal = 0;
    this.yahtzeeState = YAHTZEE_OPEN;
    this.yahtzeeBonus = 0;
    this.yahtzees = 0;
  }

  get upperBonus() { return this.rules.upperBonus(this.upperTotal); }

  get total() {
    let boxes = 0;
    for (const s of this.scores) if (s !== null) boxes += s;
    return boxes + this.upperBonus + this.yahtzeeBonus;
  }

  get complete() { return this.filled === ALL_FILLED; }

  /** {legal, points} for placing roll now (bonuses excluded). */
  options(roll) { return this.rules.tables.options(roll, this.filled, this.yahtzeeState); }

  /** Fill box with roll; return the points added to the total, bonuses included. */
  place(box, roll) {
    const tables = this.rules.tables;
    const [context, values] = tables.context(roll, this.filled, this.yahtzeeState);
    const legal = tables.legal(context, this.filled);
    if (!(Number.isInteger(box) && box >= 0 && box < NUM_BOXES)) throw new IllegalActionError(`box ${box} does not exist (0..${NUM_BOXES - 1})`);
    if (!((legal >> box) & 1)) throw new IllegalActionError(this._whyIllegal(box, legal));
    const fill = tables.fill(roll, box, values, this.upperTotal, this.yahtzeeState);
    if (IS_YAHTZEE[roll] && (this.yahtzeeState === YAHTZEE_50 || (box === Box.YAHTZEE && fill.points > 0))) this.yahtzees += 1;
    this.scores[box] = fill.points;
    this.yahtzeeBonus += fill.bonus;
    this.filled |= 1 << box;
    this.upperTotal = fill.upperTotal;
    this.yahtzeeState = fill.yahtzeeState;
    return fill.reward;
  }

  _whyIllegal(box, legal) {
    const name = BOX_NAMES[box];
    if ((this.filled >> box) & 1) return `box '${name}' is already filled (with ${this.scores[box]})`;
    const allowed = BOX_NAMES.filter((_, b) => (legal >> b) & 1).join(", ");
    if (this.rules.upper_first && (this.filled & UPPER_MASK) !== UPPER_MASK && box >= NUM_UPPER) {
      return `box '${name}' is closed until the upper section is full; open: ${allowed}`;
    }
    return `the joker rule does not allow '${name}' for this Yahtzee; allowed: ${allowed}`;
  }

  asDict() { return Object.fromEntries(BOX_NAMES.map((n, b) => [n, this.scores[b]])); }

  /** An independent copy of this card. */
  copy() {
    const card = new Scorecard(this.rules);
    Object.assign(card, this.toJSON());
    card.scores = this.scores.slice();
    return card;
  }

  toJSON() {
    const { scores, filled, upperTotal, yahtzeeState, yahtzeeBonus, yahtzees } = this;
    return { scores, filled, upperTotal, yahtzeeState, yahtzeeBonus, yahtzees };
  }
}

/** A game of 1..N players, whole turns in seat order from `first`. After a box is filled the
 * next player's first roll is made at once: between steps there is always a roll on the table
 * until the game is over. */
export class Game {
  constructor(rules = null, numPlayers = 1, { canonicalHolds = false } = {}) {
    if (!Number.isInteger(numPlayers) || numPlayers < 1) throw new RangeError(`numPlayers must be a positive integer, got ${numPlayers}`);
    this.rules = RuleSet.fromSpec(rules);
    this.numPlayers = numPlayers;
    this.canonicalHolds = canonicalHolds;
    this.roller = null;
    this.players = [];
    this.first = this.current = 0;
    this.roll = 0;
    this.rollsLeft = 0;
    this.turnsTaken = 0;
    this.over = true;
  }

  reset(roller = new DiceRoller(), first = 0) {
    if (!(Number.isInteger(first) && first >= 0 && first < this.numPlayers)) throw new RangeError(`first player ${first} out of range 0..${this.numPlayers - 1}`);
    this.roller = roller;
    this.players = Array.from({ length: this.numPlayers }, () => new Scorecard(this.rules));
    this.first = this.current = first;
    this.turnsTaken = 0;
    this.over = false;
    this._startTurn();
  }

  _startTurn() {
    this.roll = this.roller.roll(FIRST_ROLL_KEEP);
    this.rollsLeft = ROLLS_PER_TURN - 1;
  }

  get player() { return this.players[this.current]; }

  /** The five dice on the table, sorted ascending. */
  get dice() { return diceOf(this.roll); }

  /** bool[45]: the actions step accepts now (all false once the game is over). */
  legalActionMask() {
    const mask = new Array(NUM_ACTIONS).fill(false);
    if (this.over) return mask;
    if (this.rollsLeft > 0) {
      for (let h = 0; h < NUM_HOLDS; h++) mask[h] = this.canonicalHolds ? CANONICAL_HOLDS[NUM_HOLDS * this.roll + h] === 1 : true;
    }
    const { legal } = this.player.options(this.roll);
    for (let b = 0; b < NUM_BOXES; b++) mask[BOX_ACTION_OFFSET + b] = legal[b];
    return mask;
  }

  boxOptions() { return this.player.options(this.roll); }

  /** Apply action for the player to move; return the points it added (0 for holds). */
  step(action) {
    if (this.over) throw new IllegalActionError("the game is over; reset it first");
    if (!(Number.isInteger(action) && action >= 0 && action < NUM_ACTIONS)) {
      throw new IllegalActionError(`action ${JSON.stringify(action)} is not an action id (0..${NUM_ACTIONS - 1})`);
    }
    if (action < NUM_HOLDS) { this._hold(action); return 0; }
    const gained = this.player.place(action - BOX_ACTION_OFFSET, this.roll);
    this.turnsTaken += 1;
    if (this.turnsTaken === NUM_TURNS * this.numPlayers) {
      this.over = true;
      this.rollsLeft = 0;
    } else {
      this.current = (this.current + 1) % this.numPlayers;
      this._startTurn();
    }
    return gained;
  }

  _hold(action) {
    if (this.rollsLeft === 0) {
      throw new IllegalActionError(`action ${action} (${describeAction(action)}) re-rolls, but no rolls are left this turn: fill a box`);
    }
    if (this.canonicalHolds && !CANONICAL_HOLDS[NUM_HOLDS * this.roll + action]) {
      throw new IllegalActionError(`action ${action} (${describeAction(action)}) is not the canonical hold for its kept dice`);
    }
    this.roll = this.roller.roll(HOLD_TO_KEEP[NUM_HOLDS * this.roll + action]);
    this.rollsLeft -= 1;
  }

  totals() { return this.players.map((p) => p.total); }

  /** Seats with the highest total (more than one: a draw). Meaningful once over. */
  winners() { return topSeats(this.totals()); }

  /** The whole state as plain data (a saved game: IndexedDB); the roller is not saved. */
  toJSON() {
    const { numPlayers, canonicalHolds, first, current, roll, rollsLeft, turnsTaken, over } = this;
    return {
      rules: this.rules.toDict(), numPlayers, canonicalHolds, first, current, roll, rollsLeft, turnsTaken, over,
      players: this.players.map((p) => p.toJSON()),
    };
  }

  /** A game from `toJSON`'s data, dealing from `roller` (checked: a bad save raises). */
  static fromJSON(data, roller = new DiceRoller()) {
    const game = new Game(new RuleSet(data.rules), data.numPlayers, { canonicalHolds: data.canonicalHolds });
    const int = (v, lo, hi, what) => {
      if (!(Number.isInteger(v) && v >= lo && v <= hi)) throw new RangeError(`saved game: bad ${what} ${JSON.stringify(v)}`);
      return v;
    };
    if (!Array.isArray(data.players) || data.players.length !== game.numPlayers) throw new RangeError("saved game: bad players");
    game.players = data.players.map((p) => {
      const card = new Scorecard(game.rules);
      if (!Array.isArray(p.scores) || p.scores.length !== NUM_BOXES) throw new RangeError("saved game: bad scores");
      card.scores = p.scores.map((s) => (s === null ? null : int(s, 0, 50, "box score")));
      card.filled = int(p.filled, 0, ALL_FILLED, "filled");
      card.upperTotal = int(p.upperTotal, 0, 105, "upper total");
      card.yahtzeeState = int(p.yahtzeeState, 0, 2, "yahtzee state");
      card.yahtzeeBonus = int(p.yahtzeeBonus, 0, 12 * 1000, "yahtzee bonus");
      card.yahtzees = int(p.yahtzees, 0, 13, "yahtzees");
      return card;
    });
    game.first = int(data.first, 0, game.numPlayers - 1, "first");
    game.current = int(data.current, 0, game.numPlayers - 1, "current");
    game.roll = int(data.roll, 0, 251, "roll");
    game.rollsLeft = int(data.rollsLeft, 0, ROLLS_PER_TURN - 1, "rolls left");
    game.turnsTaken = int(data.turnsTaken, 0, NUM_TURNS * game.numPlayers, "turns taken");
    game.over = data.over === true;
    game.roller = roller;
    return game;
  }
}

export function topSeats(totals) {
  const best = Math.max(...totals);
  return totals.flatMap((t, seat) => (t === best ? [seat] : []));
}

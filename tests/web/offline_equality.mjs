// The page's engine and levels on Python's dice (tests/web/test_offline_equality.py runs it):
//   node offline_equality.mjs WORKDIR
// WORKDIR/spec.json names the page's modules (a copy, with a package.json saying "module"),
// the levels and the presets; the inputs and the outputs are raw little-endian arrays there.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const dir = process.argv[2];
const spec = JSON.parse(readFileSync(join(dir, "spec.json"), "utf8"));
const load = (name) => import(pathToFileURL(join(spec.modules, name)).href);
const dice = await load("game/dice.js");
const rules = await load("game/rules.js");
const engine = await load("game/engine.js");
const observation = await load("game/observation.js");
const models = await load("policies/models.js");

const read = (name, Type) => {
  const buf = readFileSync(join(dir, name));
  return new Type(buf.buffer, buf.byteOffset, buf.byteLength / Type.BYTES_PER_ELEMENT);
};
const write = (name, array) => writeFileSync(join(dir, name), Buffer.from(array.buffer, array.byteOffset, array.byteLength));

const presets = spec.presets.map((name) => rules.RuleSet.fromSpec(name)); // the page's own presets
const policies = spec.levels.map(({ manifest, weights }) => {
  const buf = readFileSync(join(dir, weights));
  return models.MLPPolicy.fromBytes(manifest, new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength));
});
const started = Date.now();

// 1. The tables, whole.
write("js_dice.i32", Int32Array.from([
  ...dice.DICE, ...dice.COUNTS, ...dice.KEEP_COUNTS, ...dice.HOLD_TO_KEEP, ...dice.KEEP_CDF, ...dice.CANONICAL_HOLDS,
]));
const legal = [];
for (const r of presets) {
  const t = r.tables;
  for (let ctx = 0; ctx < 7; ctx++) for (let f = 0; f < rules.NUM_FILLED_MASKS; f++) legal.push(t.legal(ctx, f));
}
write("js_rules.i32", Int32Array.from([...rules.NATURAL_SCORES, ...legal]));

// 2. Sampled states: roll, rolls left, filled, upper total, yahtzee state, preset.
const states = read("states.i32", Int32Array);
const n = states.length / 6;
const L = policies.length;
const masks = new Uint8Array(n * 45);
const fills = new Int32Array(n * 13 * 5).fill(-1);
const obs86 = new Float32Array(n * 86);
const actions = new Int8Array(n * L);
const logitsOut = new Float32Array(Math.min(n, spec.logits_rows) * L * 45);
for (let s = 0; s < n; s++) {
  const [roll, rollsLeft, filled, upper, ystate, p] = states.subarray(6 * s, 6 * s + 6);
  const game = new engine.Game(presets[p], 1);
  const card = new engine.Scorecard(presets[p]);
  Object.assign(card, { filled, upperTotal: upper, yahtzeeState: ystate });
  for (let b = 0; b < 13; b++) if ((filled >> b) & 1) card.scores[b] = 0;
  Object.assign(game, { players: [card], roll, rollsLeft, over: false });
  const mask = game.legalActionMask();
  for (let a = 0; a < 45; a++) masks[45 * s + a] = mask[a] ? 1 : 0;
  for (let b = 0; b < 13; b++) {
    if (!mask[32 + b]) continue;
    const copy = card.copy();
    const reward = copy.place(b, roll);
    fills.set([copy.scores[b], copy.yahtzeeBonus, reward, copy.upperTotal, copy.yahtzeeState], 5 * (13 * s + b));
  }
  const obs = observation.encodeSeat(game);
  obs86.set(observation.modelInput(obs, 2, presets[p].upper_bonus_threshold), 86 * s);
  for (let l = 0; l < L; l++) {
    actions[L * s + l] = policies[l].act(obs, mask);
    if (s < spec.logits_rows) logitsOut.set(policies[l].logits(obs), 45 * (L * s + l));
  }
}
write("js_masks.u8", masks);
write("js_fills.i32", fills);
write("js_obs.f32", obs86);
write("js_actions.i8", actions);
write("js_logits.f32", logitsOut);
const statesSeconds = (Date.now() - started) / 1000;

// 3. Whole games: each (level, preset) plays its games on Python's draws (39 a game at most).
const draws = read("draws.u16", Uint16Array);
const G = spec.games;
const finals = new Int32Array(L * presets.length * G * 16);
const nearTies = new Int32Array(L * presets.length * G);
let game = 0;
let decisions = 0;
for (let l = 0; l < L; l++) {
  for (let p = 0; p < presets.length; p++) {
    for (let g = 0; g < G; g++, game++) {
      const play = new engine.Game(presets[p], 1);
      play.reset(new engine.SequenceRoller(draws.subarray(39 * game, 39 * game + 39)));
      while (!play.over) {
        const { action, gap } = policies[l].decide(observation.encodeSeat(play), play.legalActionMask());
        if (gap < spec.tie_tolerance) nearTies[game] += 1;
        play.step(action);
        decisions += 1;
      }
      const card = play.players[0];
      finals.set([...card.scores, card.upperBonus, card.yahtzeeBonus, card.total], 16 * game);
    }
  }
}
write("js_finals.i32", finals);
write("js_near_ties.i32", nearTies);
writeFileSync(join(dir, "js_report.json"), JSON.stringify({
  states: n, games: game, decisions, states_seconds: statesSeconds, seconds: (Date.now() - started) / 1000,
  cpu_seconds: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
}));

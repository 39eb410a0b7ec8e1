// The page's dice checker (static/js/fair_dice.js) on Python's vectors
// (tests/web/test_fair_dice_js.py runs it): node fair_dice_equality.mjs MODULE < input.json
// MODULE is a copy of fair_dice.js in a folder whose package.json says "module".
import { pathToFileURL } from "node:url";

const dice = await import(pathToFileURL(process.argv[2]).href);
const hex = (h) => Uint8Array.from(h.match(/../g), (x) => parseInt(x, 16));
let text = "";
for await (const chunk of process.stdin) text += chunk;
const input = JSON.parse(text);
const out = { values: [], draws: [], marks: [], verdicts: [] };
for (const v of input.values) {
  const key = await dice.hmacKey(hex(v.seed));
  out.values.push(await dice.rollValuesV2(key, v.client_seeds, v.game, v.seat, v.turn, v.roll));
}
for (const v of input.draws) out.draws.push(await dice.firstDraw(await dice.hmacKey(hex(v.seed)), v.game, v.seats));
for (const v of input.marks) out.marks.push(await dice.clientSeedMark(await dice.hmacKey(hex(v.seed)), v.game, v.seat, v.client_seed));
for (const r of input.records) out.verdicts.push(await dice.verifyRecord(r));
out.fresh = dice.newClientSeed();
console.log(JSON.stringify(out));

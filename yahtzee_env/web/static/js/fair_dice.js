// Dice players can check (issue 49): the commitment shown before the first roll, and the
// check of a finished game's record in the page, the same algorithm as
// `yahtzee_env.game.fair_dice` and `yahtzee verify-game` (docs/fair_dice.md): each roll's values
// are SHA-256(seed ‖ seat ‖ turn ‖ roll ‖ counter) bytes below 252, mod 6, plus 1.
const ACCEPT = 252;
const DIGEST = "SHA-256";

async function sha256(bytes) { return new Uint8Array(await crypto.subtle.digest(DIGEST, bytes)); }

function fromHex(hex) {
  if (typeof hex !== "string" || !/^[0-9a-f]{64}$/i.test(hex)) return null;
  return Uint8Array.from(hex.match(/../g), (h) => parseInt(h, 16));
}
const toHex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

// The first five values of a roll's stream (a roll that re-rolls n dice takes the first n).
export async function rollValues(seed, seat, turn, roll) {
  const out = [];
  for (let counter = 0; out.length < 5; counter++) {
    const message = new Uint8Array(seed.length + 7);
    message.set(seed);
    message.set([seat, turn, roll], seed.length);
    new DataView(message.buffer).setUint32(seed.length + 3, counter);
    for (const b of await sha256(message)) if (b < ACCEPT && out.length < 5) out.push(b % 6 + 1);
  }
  return out;
}

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const within = (small, big) => small.every((f) => small.filter((x) => x === f).length <= big.filter((x) => x === f).length);
const faces = (xs, n) => Array.isArray(xs) && (n === undefined || xs.length === n) && xs.every((x) => Number.isInteger(x) && x >= 1 && x <= 6);

// Whether this browser can check (SHA-256 in the page needs https or localhost).
export const canVerify = () => Boolean(globalThis.crypto && crypto.subtle);

// The verdict on a record: {ok, key, params} (a catalogue key of `dice.*` and its values).
export async function verifyRecord(record) {
  const seed = fromHex(record && record.seed);
  if (!seed) return { ok: false, key: "dice.check_no_seed", params: {} };
  if (toHex(await sha256(seed)) !== String(record.commitment).toLowerCase()) {
    return { ok: false, key: "dice.check_commitment", params: {} };
  }
  const last = new Map();  // "seat,turn" -> [roll, dice]
  const rolls = Array.isArray(record.rolls) ? record.rolls : [];
  for (let i = 0; i < rolls.length; i++) {
    const r = rolls[i];
    const n = i + 1;
    const bad = { ok: false, key: "dice.check_invalid", params: { n } };
    if (!r || !Number.isInteger(r.seat) || !Number.isInteger(r.turn) || !Number.isInteger(r.roll)
      || r.seat < 0 || r.seat > 255 || r.turn < 0 || r.turn > 12 || r.roll < 0 || r.roll > 2
      || !faces(r.kept) || !faces(r.dice, 5)) return bad;
    const key = `${r.seat},${r.turn}`;
    const before = last.get(key);
    if (r.roll === 0 ? (before || r.kept.length) : (!before || before[0] !== r.roll - 1 || !within(r.kept, before[1]))) return bad;
    const values = await rollValues(seed, record.duplicate ? 0 : r.seat, r.turn, r.roll);
    const expected = sorted([...r.kept, ...values.slice(0, 5 - r.kept.length)]);
    if (sorted(r.dice).join() !== expected.join()) {
      return { ok: false, key: "dice.check_roll", params: { n, seat: r.seat + 1, turn: r.turn + 1,
        shown: sorted(r.dice).join(" "), expected: expected.join(" ") } };
    }
    last.set(key, [r.roll, sorted(r.dice)]);
  }
  if (!rolls.length) return { ok: false, key: "dice.check_invalid", params: { n: 1 } };
  return { ok: true, key: "dice.check_ok", params: { n: rolls.length } };
}

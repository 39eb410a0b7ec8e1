// Dice players can check (issues 49 and 58): the commitment shown before the first roll, and
// the check of a finished game's record in the page, the same algorithms as
// `yahtzee_env.game.fair_dice` and `yahtzee verify-game` (docs/fair_dice.md):
// - sha256-ctr-v1 (tables made before issue 58): each roll's values are
//   SHA-256(seed ‖ seat ‖ turn ‖ roll ‖ counter) bytes below 252, mod 6, plus 1;
// - hmac-sha256-v2: HMAC-SHA256(seed, "client,seeds:game:seat:turn:roll:counter") bytes below
//   252, mod 6, plus 1, with every seat's client seed (each against its mark) and the draw for
//   first player from the seed.
// Web Crypto only (`crypto.subtle`: https, or loopback http).
const ACCEPT = 252;
const DIGEST = "SHA-256";
const V1 = "sha256-ctr-v1";
export const V2 = "hmac-sha256-v2";
const FORMATS = { [V1]: "yahtzee-dice-v1", [V2]: "yahtzee-dice-v2" };
export const DEFAULT_CLIENT_SEED = "server";
export const CLIENT_SEED = /^[A-Za-z0-9_-]{1,64}$/;
const MARK_HEX = 16;
const encoder = new TextEncoder();

async function sha256(bytes) { return new Uint8Array(await crypto.subtle.digest(DIGEST, bytes)); }

function fromHex(hex) {
  if (typeof hex !== "string" || !/^[0-9a-f]{64}$/i.test(hex)) return null;
  return Uint8Array.from(hex.match(/../g), (h) => parseInt(h, 16));
}
const toHex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

// A fresh client seed: 16 random bytes in hex (crypto.getRandomValues).
export function newClientSeed() { return toHex(crypto.getRandomValues(new Uint8Array(16))); }

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

// v2: the HMAC key of a 32-byte seed, and HMAC-SHA256 of a text under it.
export function hmacKey(seed) {
  return crypto.subtle.importKey("raw", seed, { name: "HMAC", hash: DIGEST }, false, ["sign"]);
}
async function hmac(key, text) { return new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(text))); }

// v2: the first five values of a roll's stream; `key` from hmacKey(seed).
export async function rollValuesV2(key, clientSeeds, game, seat, turn, roll) {
  const joined = clientSeeds.join(",");
  const out = [];
  for (let counter = 0; out.length < 5; counter++) {
    for (const b of await hmac(key, `${joined}:${game}:${seat}:${turn}:${roll}:${counter}`)) {
      if (b < ACCEPT && out.length < 5) out.push(b % 6 + 1);
    }
  }
  return out;
}

// v2: the draw for first player, from the seed alone.
export async function firstDraw(key, game, seats) {
  const accept = 256 - 256 % seats;
  for (let counter = 0; ; counter++) {
    for (const b of await hmac(key, `first:${game}:${counter}`)) if (b < accept) return b % seats;
  }
}

// v2: a client seed's mark (16 hex digits).
export async function clientSeedMark(key, game, seat, clientSeed) {
  return toHex(await hmac(key, `client-seed:${game}:${seat}:${clientSeed}`)).slice(0, MARK_HEX);
}

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const within = (small, big) => small.every((f) => small.filter((x) => x === f).length <= big.filter((x) => x === f).length);
const faces = (xs, n) => Array.isArray(xs) && (n === undefined || xs.length === n) && xs.every((x) => Number.isInteger(x) && x >= 1 && x <= 6);

// Whether this browser can check (SHA-256 in the page needs https or localhost).
export const canVerify = () => Boolean(globalThis.crypto && crypto.subtle);

// A v2 record's game, client seeds (each against its mark) and draw: null when they hold,
// else the verdict.
async function checkV2(record, key, seats) {
  const { game, client_seeds: seeds, client_seed_marks: marks } = record;
  if (!Number.isInteger(game) || game < 0) return { ok: false, key: "dice.check_invalid", params: { n: 0 } };
  if (!Array.isArray(seeds) || !Array.isArray(marks) || seeds.length !== seats || marks.length !== seats) {
    return { ok: false, key: "dice.check_seeds_missing", params: { seats } };
  }
  for (let seat = 0; seat < seats; seat++) {
    const seed = seeds[seat];
    const edited = { ok: false, key: "dice.check_seed_edited", params: { seat: seat + 1, seed: String(seed).slice(0, 64) }, seat };
    if (typeof seed !== "string" || !CLIENT_SEED.test(seed)) return edited;
    if (await clientSeedMark(key, game, seat, seed) !== String(marks[seat]).toLowerCase()) return edited;
  }
  const drawn = await firstDraw(key, game, seats);
  if (record.first_draw !== drawn) return { ok: false, key: "dice.check_first_draw", params: { shown: String(record.first_draw), expected: drawn + 1 } };
  return null;
}

// The verdict on a record: {ok, key, params} (a catalogue key of `dice.*` and its values;
// `seat`, 0-based, when a client seed was edited).
export async function verifyRecord(record) {
  const algorithm = record && record.dice;
  if (!record || !(algorithm in FORMATS) || record.format !== FORMATS[algorithm]) {
    return { ok: false, key: "dice.check_version", params: { version: String(algorithm).slice(0, 40) } };
  }
  const seed = fromHex(record.seed);
  if (!seed) return { ok: false, key: "dice.check_no_seed", params: {} };
  if (toHex(await sha256(seed)) !== String(record.commitment).toLowerCase()) {
    return { ok: false, key: "dice.check_commitment", params: {} };
  }
  const seats = record.seats;
  if (!Number.isInteger(seats) || seats < 1 || seats > 256) return { ok: false, key: "dice.check_invalid", params: { n: 0 } };
  let values;
  if (algorithm === V2) {
    const key = await hmacKey(seed);
    const refused = await checkV2(record, key, seats);
    if (refused) return refused;
    values = (seat, turn, roll) => rollValuesV2(key, record.client_seeds, record.game, seat, turn, roll);
  } else {
    values = (seat, turn, roll) => rollValues(seed, seat, turn, roll);
  }
  const last = new Map();  // "seat,turn" -> [roll, dice]
  const rolls = Array.isArray(record.rolls) ? record.rolls : [];
  for (let i = 0; i < rolls.length; i++) {
    const r = rolls[i];
    const n = i + 1;
    const bad = { ok: false, key: "dice.check_invalid", params: { n } };
    if (!r || !Number.isInteger(r.seat) || !Number.isInteger(r.turn) || !Number.isInteger(r.roll)
      || r.seat < 0 || r.seat >= seats || r.turn < 0 || r.turn > 12 || r.roll < 0 || r.roll > 2
      || !faces(r.kept) || !faces(r.dice, 5)) return bad;
    const key = `${r.seat},${r.turn}`;
    const before = last.get(key);
    if (r.roll === 0 ? (before || r.kept.length) : (!before || before[0] !== r.roll - 1 || !within(r.kept, before[1]))) return bad;
    const drawn = await values(record.duplicate ? 0 : r.seat, r.turn, r.roll);
    const expected = sorted([...r.kept, ...drawn.slice(0, 5 - r.kept.length)]);
    if (sorted(r.dice).join() !== expected.join()) {
      return { ok: false, key: "dice.check_roll", params: { n, seat: r.seat + 1, turn: r.turn + 1,
        shown: sorted(r.dice).join(" "), expected: expected.join(" ") } };
    }
    last.set(key, [r.roll, sorted(r.dice)]);
  }
  if (!rolls.length) return { ok: false, key: "dice.check_invalid", params: { n: 1 } };
  return { ok: true, key: "dice.check_ok", params: { n: rolls.length } };
}

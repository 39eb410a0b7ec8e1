// The levels in the page: a port of the masked-argmax MLP of yahtzee_env/policies/models.py.
//
// A level is served as two static files (`yahtzee export LEVEL --format web`, or the server's
// /levels/ route): NAME.json, the web manifest (architecture, input version, holds, the rules
// it learned, the sha256 of the weights), and NAME.f32, every layer's W [in, out] (row-major)
// then b [out], little-endian float32, hidden layers first. `loadLevel` checks the digest and
// the sizes before it trusts a number. Only policy networks run here: a level that searches
// (master's expectimax, the duelist's solver) is not offered offline.
import { CANONICAL_HOLDS, NUM_HOLDS } from "../game/dice.js";
import { NUM_ACTIONS } from "../game/engine.js";
import { INPUT_SIZES, OBS_SIZE, decodeRoll, modelInput } from "../game/observation.js";
import { UPPER_BONUS_THRESHOLD } from "../game/rules.js";

export const WEB_FORMAT = "yahtzee-rl-web-level";
export const WEB_FORMAT_VERSION = 1;

export class ModelFormatError extends Error {
  constructor(message) { super(message); this.name = "ModelFormatError"; }
}

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The layer widths a web manifest declares, input first (checked). */
export function layerSizes(manifest) {
  const where = `level ${JSON.stringify(manifest && manifest.level)}`;
  if (!manifest || manifest.format !== WEB_FORMAT || manifest.format_version !== WEB_FORMAT_VERSION) {
    throw new ModelFormatError(`${where}: not a ${WEB_FORMAT} v${WEB_FORMAT_VERSION} manifest`);
  }
  if (!(manifest.input_version in INPUT_SIZES)) throw new ModelFormatError(`${where}: unknown input version ${manifest.input_version}`);
  if (!["relu", "tanh"].includes(manifest.activation)) throw new ModelFormatError(`${where}: unknown activation ${manifest.activation}`);
  const hidden = manifest.hidden;
  if (!Array.isArray(hidden) || hidden.length > 8 || !hidden.every((h) => Number.isInteger(h) && h > 0 && h <= 2048)) {
    throw new ModelFormatError(`${where}: bad hidden layers`);
  }
  return [INPUT_SIZES[manifest.input_version], ...hidden, NUM_ACTIONS];
}

/** A masked-argmax MLP policy: act(observation, mask) -> action, as `MLPPolicy.act`. With
 * canonical holds (how the levels learned) it picks only the canonical hold of each keep. */
export class MLPPolicy {
  constructor(layers, activation, { name = "mlp", canonicalHolds = true, inputVersion = 1,
    threshold = UPPER_BONUS_THRESHOLD, trainedRules = "official" } = {}) {
    this.layers = layers; // [{w: Float32Array(in*out), b: Float32Array(out), in, out}]
    this.activation = activation;
    this.name = name;
    this.canonicalHolds = canonicalHolds;
    this.inputVersion = inputVersion;
    this.threshold = threshold;
    this.trainedRules = trainedRules;
    const widest = Math.max(...layers.map((l) => l.out));
    this._a = new Float64Array(widest);
  }

  /** From a checked web manifest and the bytes of its weights (digest checked by the caller). */
  static fromBytes(manifest, bytes) {
    const sizes = layerSizes(manifest);
    let params = 0;
    for (let i = 0; i + 1 < sizes.length; i++) params += sizes[i] * sizes[i + 1] + sizes[i + 1];
    if (bytes.byteLength !== 4 * params) {
      throw new ModelFormatError(`level ${manifest.level}: ${bytes.byteLength} bytes of weights, expected ${4 * params}`);
    }
    const view = new DataView(bytes.buffer || bytes, bytes.byteOffset || 0, bytes.byteLength);
    let at = 0;
    const take = (n) => {
      const a = new Float32Array(n);
      for (let i = 0; i < n; i++, at += 4) a[i] = view.getFloat32(at, true);
      if (!a.every(Number.isFinite)) throw new ModelFormatError(`level ${manifest.level}: non-finite weights`);
      return a;
    };
    const layers = [];
    for (let i = 0; i + 1 < sizes.length; i++) {
      const w = take(sizes[i] * sizes[i + 1]);
      layers.push({ in: sizes[i], out: sizes[i + 1], w, b: take(sizes[i + 1]) });
    }
    return new MLPPolicy(layers, manifest.activation, {
      name: manifest.level, canonicalHolds: manifest.holds === "canonical", inputVersion: manifest.input_version,
      threshold: manifest.threshold, trainedRules: manifest.rules,
    });
  }

  /** Unmasked action logits of one observation (float32 after each layer, as numpy's). */
  logits(observation) {
    let x = modelInput(observation, this.inputVersion, this.threshold);
    const acc = this._a;
    for (let l = 0; l < this.layers.length; l++) {
      const { in: n, out: m, w, b } = this.layers[l];
      acc.fill(0, 0, m);
      for (let i = 0; i < n; i++) {
        const xi = x[i];
        if (xi === 0) continue; // one-hot dice, ReLU zeros: most inputs are 0
        const row = i * m;
        for (let j = 0; j < m; j++) acc[j] += xi * w[row + j];
      }
      const y = new Float32Array(m);
      const last = l === this.layers.length - 1;
      for (let j = 0; j < m; j++) {
        const v = Math.fround(Math.fround(acc[j]) + b[j]);
        y[j] = last ? v : this.activation === "relu" ? (v > 0 ? v : 0) : Math.tanh(v);
      }
      x = y;
    }
    return x;
  }

  /** The allowed actions: the mask, holds narrowed to the canonical ones. */
  allowed(observation, mask) {
    const allowed = Array.from(mask, Boolean);
    if (!allowed.some(Boolean)) throw new RangeError("an action_mask has no legal action");
    if (this.canonicalHolds) {
      const roll = decodeRoll(observation);
      if (roll < 0) throw new RangeError("an observation does not show five dice");
      for (let h = 0; h < NUM_HOLDS; h++) allowed[h] = allowed[h] && CANONICAL_HOLDS[NUM_HOLDS * roll + h] === 1;
    }
    return allowed;
  }

  /** {action, gap}: the masked argmax (the first of equal logits, as np.argmax) and the margin
   * of its logit over the next allowed one (Infinity when only one action is allowed). */
  decide(observation, mask) {
    if (observation.length !== OBS_SIZE || mask.length !== NUM_ACTIONS) throw new RangeError("expected 72 observation values and a 45-action mask");
    const allowed = this.allowed(observation, mask);
    const logits = this.logits(observation);
    let action = -1;
    let best = -Infinity;
    let second = -Infinity;
    for (let a = 0; a < NUM_ACTIONS; a++) {
      if (!allowed[a]) continue;
      const v = logits[a];
      if (action < 0 || v > best) { second = best; best = v; action = a; }
      else if (v > second) second = v;
    }
    return { action, gap: best - second };
  }

  act(observation, mask) { return this.decide(observation, mask).action; }
}

/** Fetch a level's web manifest and weights from `base` (a URL folder), check the digest
 * (WebCrypto) and the sizes, and build its policy. */
export async function loadLevel(level, base = "/levels/", { fetch: get = fetch, subtle = globalThis.crypto.subtle } = {}) {
  const res = await get(`${base}${encodeURIComponent(level)}.json`);
  if (!res.ok) throw new ModelFormatError(`level ${level}: manifest not found (${res.status})`);
  const manifest = await res.json();
  layerSizes(manifest);
  const bin = await get(`${base}${encodeURIComponent(manifest.weights_file)}`);
  if (!bin.ok) throw new ModelFormatError(`level ${level}: weights not found (${bin.status})`);
  const bytes = new Uint8Array(await bin.arrayBuffer());
  const digest = hex(await subtle.digest("SHA-256", bytes));
  if (digest !== manifest.weights_sha256) {
    throw new ModelFormatError(`level ${level}: sha256 ${digest.slice(0, 12)}… does not match the manifest's ${String(manifest.weights_sha256).slice(0, 12)}…`);
  }
  return MLPPolicy.fromBytes(manifest, bytes);
}

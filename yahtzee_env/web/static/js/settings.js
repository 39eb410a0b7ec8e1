// The settings of this device (pace, sound, theme, motion), kept in the browser's
// storage, and the sound effects.
import { $, params, store } from "./page.js";

const PACES = { slow: 1100, normal: 650, fast: 250, instant: 0 };

export const settings = Object.assign({ pace: "normal", sound: false, theme: "auto", motion: "auto" },
  store.get("yz.settings", {}));
export function saveSettings() { store.set("yz.settings", settings); applySettings(); }
export function applySettings() {
  const root = document.documentElement;
  if (settings.theme === "auto") delete root.dataset.theme; else root.dataset.theme = settings.theme;
  root.classList.toggle("reduce-motion", settings.motion === "reduce");
  root.classList.toggle("full-motion", settings.motion === "full");
  $("pace").value = settings.pace; $("theme").value = settings.theme;
  $("motion").value = settings.motion; $("sound").checked = settings.sound;
}
// ?pace=<ms> (tests, demos) or ?pace=fast overrides the setting for this visit.
export function pace() {
  if (params.has("pace")) {
    const p = params.get("pace");
    return p in PACES ? PACES[p] : Math.max(0, Number(p) || 0);
  }
  return PACES[settings.pace] ?? PACES.normal;
}
export function reducedMotion() {
  if (settings.motion !== "auto") return settings.motion === "reduce";
  return window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}

// Sound effects, synthesised with WebAudio (no files): off unless the player turns them on.
export const sound = {
  ctx: null,
  play(kind) {
    if (!settings.sound) return;
    try {
      this.ctx = this.ctx || new (window.AudioContext || window.webkitAudioContext)();
      const ctx = this.ctx, now = ctx.currentTime;
      const tone = (freq, start, length, type = "sine", gain = 0.12) => {
        const osc = ctx.createOscillator(), amp = ctx.createGain();
        osc.type = type; osc.frequency.value = freq;
        amp.gain.setValueAtTime(gain, now + start);
        amp.gain.exponentialRampToValueAtTime(0.0001, now + start + length);
        osc.connect(amp).connect(ctx.destination);
        osc.start(now + start); osc.stop(now + start + length + 0.02);
      };
      if (kind === "roll") for (let i = 0; i < 6; i++) tone(180 + Math.random() * 260, i * 0.045, 0.05, "square", 0.05);
      else if (kind === "score") { tone(660, 0, 0.12); tone(880, 0.1, 0.16); }
      else if (kind === "yatzy") [523, 659, 784, 1047].forEach((f, i) => tone(f, i * 0.1, 0.22, "triangle", 0.14));
    } catch { /* no audio: stay silent */ }
  },
};

// The settings panel: its controls, closed on Escape (focus back on its button) or a click
// elsewhere.
export function setup() {
  for (const key of ["pace", "theme", "motion"]) {
    $(key).addEventListener("change", (e) => { settings[key] = e.target.value; saveSettings(); });
  }
  $("sound").addEventListener("change", (e) => { settings.sound = e.target.checked; saveSettings(); if (settings.sound) sound.play("score"); });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && $("settings").open) { $("settings").open = false; $("settings").querySelector("summary").focus(); }
  });
  document.addEventListener("click", (e) => { if ($("settings").open && !$("settings").contains(e.target)) $("settings").open = false; });
}

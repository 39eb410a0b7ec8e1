// The page's words: every word shown comes from the catalogue /static/i18n/<lang>.json
// through t(); the server sends narration and errors as keys and values (event.msg,
// error.code). Names and other text from the server are always set with textContent,
// never as markup.
import { $, config, el, params, store } from "./page.js";

export const I18N = { lang: "en", cat: {}, base: {}, languages: [], plural: null };

// The catalogue's text for `key` with {placeholders} filled from `vars`; `fallback` (or the
// key) when no catalogue has it.
export function t(key, vars = {}, fallback) {
  const text = I18N.cat[key] ?? I18N.base[key] ?? fallback ?? key;
  return text.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
}
// Plural forms: `key.one`, `key.other` (and whatever Intl.PluralRules names for a language).
export function tn(key, n, vars = {}) {
  const form = I18N.plural ? I18N.plural.select(n) : (n === 1 ? "one" : "other");
  const full = `${key}.${form}` in I18N.cat ? `${key}.${form}` : `${key}.other`;
  return t(full, { n, ...vars });
}
// A time bank's figures (issue 62) as Board Game Arena writes them: "+0:21 a turn, max 2:03".
export function bankTime(seconds) {
  if (seconds < 3600) return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
  if (seconds < 86400) return tn("lobby.bank_hours", Math.round(seconds / 3600));
  return tn("lobby.bank_days", Math.round(seconds / 86400));
}
export const bankName = (add, cap) => t("lobby.bank_preset", { add: bankTime(add), cap: bankTime(cap) });
export const has = (key) => key in I18N.cat || key in I18N.base;
export const boxName = (box) => t(`box.${box}`, {}, box);
export const levelName = (level) => t(`level.${level}`, {}, level);
export const ruleName = (rules) => t(`rules.${rules}`, {}, rules);
export const diceText = (dice) => dice.join(" ");
export const num = (x, digits = 2) => new Intl.NumberFormat(I18N.lang, { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(x);
export const joinNames = (names) => names.join(t("list.and"));

export async function fetchJSON(path) {
  const response = await fetch(path);
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  return response.json();
}

export function pickLanguage(codes) {
  const asked = params.get("lang");
  if (asked && codes.includes(asked)) { store.set("yz.lang", asked); return asked; }
  const saved = store.get("yz.lang", null);
  if (saved && codes.includes(saved)) return saved;
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    const code = String(tag).toLowerCase().split("-")[0];
    if (codes.includes(code)) return code;
  }
  return codes.includes("en") ? "en" : codes[0];
}

export async function setLanguage(lang) {
  I18N.cat = lang === "en" ? I18N.base : await fetchJSON(`/static/i18n/${lang}.json`);
  I18N.lang = lang;
  I18N.plural = new Intl.PluralRules(lang);
  document.documentElement.lang = lang;
  translatePage();
}

export function translatePage() {
  document.title = t("app.title");
  for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll("[data-i18n-aria]")) node.setAttribute("aria-label", t(node.dataset.i18nAria));
  for (const node of document.querySelectorAll("[data-i18n-title]")) node.title = t(node.dataset.i18nTitle);
  const select = $("lang");
  select.replaceChildren(...I18N.languages.map((l) => el("option", { value: l.code, lang: l.code }, l.name)));
  select.value = I18N.lang;
}

// ------------------------------------------------------------------ names of seats, moves, errors
export function seatName(state, seat) {
  const s = state.seats[seat];
  if (!s) return "";
  if (s.kind === "cpu") return levelName(s.level) + (s.number ? ` ${s.number}` : "");
  if (s.kind === "friend" && !s.taken) return t("seat.free", { n: seat + 1 });
  const player = s.name.match(/^Player (\d+)$/);
  if (player) return t("seat.player", { n: player[1] });
  return s.name;
}

// A move as words, from its action id: < 32 a hold mask over the dice, else a box.
export function describeMove(dice, action) {
  if (action >= 32) return t("move.score", { box: boxName(config.boxes[action - 32]) });
  const kept = dice.filter((_, i) => action >> i & 1);
  if (!kept.length) return t("move.reroll_all");
  if (kept.length === 5) return t("move.keep_all");
  return tn("move.keep", 5 - kept.length, { kept: diceText(kept) });
}

// An error as the player reads it: the catalogue's err.<code>, else the server's words
// (`state`: the table the error is about, for a seat's name).
export function errorText(err, state = null) {
  const code = err && err.code;
  let text;
  if (code && code !== "generic" && has(`err.${code}`)) {
    const p = { ...(err.params || {}) };
    if (p.box) p.box = boxName(p.box);
    if (p.seat !== undefined && state) p.name = seatName(state, p.seat);
    text = t(`err.${code}`, p);
  } else text = t("err.generic", { message: err && err.message ? err.message : String(err) });
  const wait = err && err.status === 429 && err.params ? Number(err.params.retry_after) : 0;
  return wait > 0 ? `${text} ${retryText(wait)}` : text;
}

// "Try again in 20 s" / "in 5 min" / "in 2 h", from a 429's Retry-After (seconds).
export function retryText(seconds) {
  if (seconds < 90) return t("err.retry_s", { s: Math.ceil(seconds) });
  if (seconds < 5400) return t("err.retry_min", { m: Math.ceil(seconds / 60) });
  return t("err.retry_h", { h: Math.ceil(seconds / 3600) });
}

// Account care in the lobby (issue 32): change the password, the recovery codes (shown once,
// at sign-up or when a new set is made), back in with a recovery code, export the account's
// data as JSON, delete the account.
import { $, el } from "./page.js";
import { ME, api, whileBusy } from "./net.js";
import { errorText, t } from "./words.js";

const C = { codes: null, refresh: () => {} };

function field(id, key, type = "password", autocomplete = "current-password") {
  return [el("label", { for: id, "data-i18n": key }), el("input", { id, "data-testid": id, type, autocomplete, maxlength: "128" })];
}

function form(id, titleKey, fields, button, buttonKey) {
  const f = el("form", { id, class: "care-form" });
  f.append(el("h3", { "data-i18n": titleKey }), ...fields.flat());
  f.append(el("button", { type: "submit", id: button, "data-testid": button, "data-i18n": buttonKey }));
  return f;
}

function say(text) { $("care-status").textContent = text; }

// The codes in clear, once: the page forgets them when it shows something else.
export function showCodes(codes) {
  C.codes = codes;
  renderCodes();
}

function renderCodes() {
  const box = $("recovery-codes");
  box.hidden = !C.codes;
  if (!C.codes) { box.replaceChildren(); return; }
  const list = el("ol", { class: "codes" });
  for (const code of C.codes) { const li = el("li"); li.append(el("code", {}, code)); list.append(li); }
  const done = el("button", { type: "button", "data-testid": "recovery-codes-done" }, t("care.codes_done"));
  done.addEventListener("click", () => showCodes(null));
  box.replaceChildren(el("p", {}, t("care.codes_once")), list, done);
}

async function run(what, body, after) {
  say("");
  try { const reply = await api(`/api/account/${what}`, body, { retries: 0 }); await after(reply); }
  catch (err) { say(errorText(err)); }
}

async function exportData() {
  say("");
  try {
    const data = await api("/api/account/export");
    const blob = new Blob([JSON.stringify(data, null, 2)], { type: "application/json" });
    const link = el("a", { href: URL.createObjectURL(blob), download: "yatzy-account.json" });
    document.body.append(link);
    link.click();
    link.remove();
    say(t("care.exported"));
  } catch (err) { say(errorText(err)); }
}

function clear(...ids) { for (const id of ids) $(id).value = ""; }

export function setup(refresh) {
  C.refresh = refresh;
  const inside = $("signed-in");
  const care = el("div", { class: "care", id: "care" });
  care.append(form("password-form", "care.password_title",
    [field("password-change-current", "care.current"), field("password-change-new", "care.new_password", "password", "new-password")],
    "password-change-submit", "care.password_change"));
  care.append(form("codes-form", "care.codes_title", [field("recovery-codes-password", "care.current")], "recovery-codes-new", "care.codes_new"));
  const more = el("div", { class: "row buttons" });
  more.append(el("button", { type: "button", id: "account-export", "data-testid": "account-export", "data-i18n": "care.export" }));
  care.append(more);
  care.append(form("delete-form", "care.delete_title", [field("account-delete-password", "care.current")], "account-delete", "care.delete"));
  inside.append(care);
  const outside = $("signed-out");
  outside.append(form("recover-form", "care.recover_title",
    [field("recover-name", "account.username", "text", "username"), field("recover-code", "care.code", "text", "one-time-code"),
      field("recover-password", "care.new_password", "password", "new-password")], "recover", "care.recover"));
  const codes = el("div", { id: "recovery-codes", class: "recovery-codes", "data-testid": "recovery-codes", role: "status", hidden: "" });
  const status = el("p", { id: "care-status", class: "status-line", role: "status", "data-testid": "care-status" });
  $("signed-in").firstElementChild.after(codes);  // at the top of the account, once
  $("account-error").after(status);
  for (const f of ["password-form", "codes-form", "delete-form", "recover-form"]) $(f).addEventListener("submit", (e) => e.preventDefault());
  $("password-change-submit").addEventListener("click", () => whileBusy(["password-change-submit"], () => run("password",
    { current: $("password-change-current").value, password: $("password-change-new").value },
    async () => { clear("password-change-current", "password-change-new"); say(t("care.password_changed")); })));
  $("recovery-codes-new").addEventListener("click", () => whileBusy(["recovery-codes-new"], () => run("recovery-codes",
    { password: $("recovery-codes-password").value }, async (r) => { clear("recovery-codes-password"); showCodes(r.recovery_codes); })));
  $("account-export").addEventListener("click", () => whileBusy(["account-export"], exportData));
  $("account-delete").addEventListener("click", () => whileBusy(["account-delete"], () => run("delete",
    { password: $("account-delete-password").value }, async (r) => {
      clear("account-delete-password"); Object.assign(ME, r); showCodes(null); await C.refresh(); say(t("care.deleted"));
    })));
  $("recover").addEventListener("click", () => whileBusy(["recover"], () => run("recover",
    { username: $("recover-name").value, code: $("recover-code").value, password: $("recover-password").value }, async (r) => {
      clear("recover-code", "recover-password"); Object.assign(ME, r); await C.refresh();
      say(t("care.recovered", { n: r.recovery_codes_left }));
    })));
}

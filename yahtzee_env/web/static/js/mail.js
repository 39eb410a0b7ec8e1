// E-mail in the account (issue 62): an address, confirmed by the link the server mails to
// it, and the choices of mail ("your turn", invitations). The address is the account's own:
// no other player sees it. Without `yahtzee serve --smtp` the page says e-mail is not
// available on this server.
import { $, el } from "./page.js";
import { api } from "./net.js";
import { I18N, errorText, t } from "./words.js";

const M = { state: null, note: "" };

function check(id, key, on) {
  const label = el("label", { class: "check", for: id });
  const box = el("input", { id, type: "checkbox", "data-testid": id });
  box.checked = Boolean(on);
  box.addEventListener("change", () => send("choices", {
    turns: $("email-turns").checked, invites: $("email-invites").checked, lang: I18N.lang,
  }, "email.saved"));
  label.append(box, " ", t(key));
  return label;
}

async function send(what, body, noteKey) {
  const path = what ? `/api/email/${what}` : "/api/email";
  try { M.state = { available: true, ...await api(path, body, { retries: 0 }) }; M.note = t(noteKey); }
  catch (err) { M.note = errorText(err); }
  render();
}

function render() {
  const box = $("email");
  const s = M.state;
  box.replaceChildren(el("h3", {}, t("email.title")));
  if (!s) return;
  if (!s.available) {
    box.append(el("p", { class: "note", "data-testid": "email-unavailable" }, t("email.unavailable")));
    return;
  }
  const form = el("form", { class: "care-form", id: "email-form" });
  const input = el("input", { id: "email-address", "data-testid": "email-address", type: "email", autocomplete: "email", maxlength: "254" });
  input.value = s.address || "";
  const save = el("button", { type: "submit", "data-testid": "email-save" }, t("email.save"));
  form.append(el("label", { for: "email-address" }, t("email.address")), input, save);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    send("", { address: input.value.trim(), lang: I18N.lang }, "email.sent");
  });
  box.append(form);
  if (s.address) {
    const state = el("p", { class: "note", "data-testid": "email-state" }, t(s.confirmed ? "email.confirmed" : "email.unconfirmed"));
    box.append(state);
    if (!s.confirmed) {
      const resend = el("button", { type: "button", "data-testid": "email-resend" }, t("email.resend"));
      resend.addEventListener("click", () => send("resend", {}, "email.sent"));
      box.append(resend);
    }
    box.append(check("email-turns", "email.turns", s.turns), check("email-invites", "email.invites", s.invites));
    const remove = el("button", { type: "button", "data-testid": "email-remove" }, t("email.remove"));
    remove.addEventListener("click", () => send("remove", {}, "email.removed"));
    box.append(remove);
  }
  box.append(el("p", { class: "status-line", role: "status", "data-testid": "email-status" }, M.note));
}

// The account's e-mail, read again (each time the account is shown).
export async function load() {
  if (!$("email")) return;
  try { M.state = await api("/api/email"); } catch { M.state = null; }
  render();
}

export function setup() {
  const box = el("div", { id: "email", class: "email", "data-testid": "email" });
  $("care").before(box);
}

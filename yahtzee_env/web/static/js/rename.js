// "Someone here is already called Hostie: you play as Hostie 2", and the form to choose
// another name for this table (POST /api/tables/CODE/rename). The join reply says when the
// server changed the name (`joined_as`); the lobby keeps it for the table's page here.
import { $ } from "./page.js";
import { api } from "./net.js";
import { errorText, t } from "./words.js";

const key = (code) => `yz.renamed.${code}`;

export function rememberRename(code, joinedAs) {
  try {
    if (joinedAs && joinedAs.renamed) sessionStorage.setItem(key(code), JSON.stringify(joinedAs));
  } catch { /* private mode: no notice */ }
}

function recalled(code) {
  try { return JSON.parse(sessionStorage.getItem(key(code))); } catch { return null; }
}
function forget(code) { try { sessionStorage.removeItem(key(code)); } catch { /* private mode */ } }

// Show (or hide) the notice for table `code`, where this page plays `seat` (undefined: none).
export function renderRename(code, seat) {
  const note = recalled(code);
  const box = $("renamed");
  box.hidden = !(note && seat !== undefined);
  if (box.hidden) return;
  $("renamed-text").textContent = t("names.renamed", { asked: note.asked, name: note.name });
  box.dataset.seat = String(seat);
  if (!$("rename-input").value) $("rename-input").value = note.asked;
}

// Wire the form once: `code()` is the table's code, `receive(state)` takes the new state.
export function setupRename(code, receive) {
  $("rename-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("rename-error").textContent = "";
    try {
      const seat = Number($("renamed").dataset.seat);
      const state = await api(`/api/tables/${code()}/rename`, { seat, name: $("rename-input").value }, { retries: 0 });
      forget(code());
      $("renamed").hidden = true;
      await receive(state);
    } catch (err) {
      $("rename-error").textContent = errorText(err);
    }
  });
  $("rename-ok").addEventListener("click", () => { forget(code()); $("renamed").hidden = true; });
}

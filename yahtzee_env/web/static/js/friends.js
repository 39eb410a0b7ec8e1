// Friends and invitations (issue 62): the lobby's line of how many are online and wait in
// quick match, the Friends panel (follow by user name; a friend's presence and open table),
// the invitations (a notice on every view: accept or decline), and at a table not yet
// started the invitation of a friend by name and, for the host, "friends only". The server
// decides who is a friend (both follow, no block) and what each may see; this asks and shows.
import { $, el, go } from "./page.js";
import { ME, api, loadSession, whileBusy } from "./net.js";
import { errorText, t, tn } from "./words.js";

const POLL_MS = 20000;  // presence: the server counts a player online for two minutes
const F = { data: null, poll: null, table: null, answered: new Set() };

// ------------------------------------------------------------------ polling
async function refresh() {
  try { F.data = await api("/api/friends", undefined, { retries: 0 }); } catch { return; }
  render();
}

function schedule() {
  if (F.poll) clearInterval(F.poll);
  F.poll = setInterval(() => { if (document.visibilityState !== "hidden") refresh(); }, POLL_MS);
}

export function render() { renderNow(); renderFriends(); renderNotices(); }
export const redraw = render;

// ------------------------------------------------------------------ the lobby
function renderNow() {
  const node = $("lobby-now");
  if (!F.data) { node.textContent = ""; return; }
  node.textContent = `${tn("friends.online", F.data.online)} · ${tn("friends.waiting", F.data.waiting)}`;
}

function tableLine(x) {
  if (x.started) return t("friends.at_table_playing", { code: x.code });
  return tn("friends.at_table", x.free, { code: x.code });
}

function friendItem(f) {
  const li = el("li", { "data-testid": `friend-${f.name}` });
  const info = el("span", { class: "info" });
  info.append(el("span", {}, f.name));
  let status = t("friends.not_mutual");
  if (f.friend) status = f.online ? t("friends.online_now") : t("friends.offline");
  info.append(el("small", { "data-testid": `friend-status-${f.name}`, class: f.online ? "online" : "" }, status));
  li.append(info);
  for (const x of f.tables || []) {
    info.append(el("small", {}, tableLine(x)));
    if (!x.started && x.free) {
      const join = el("button", { type: "button", class: "primary", "data-testid": `friend-join-${x.code}` }, t("open.join"));
      join.addEventListener("click", () => whileBusy([], () => joinTable(x.code, "friends-error")));
      li.append(join);
    }
  }
  const drop = el("button", { type: "button", "data-testid": `unfollow-${f.name}`, "aria-label": t("friends.unfollow_name", { name: f.name }) }, t("friends.unfollow"));
  drop.addEventListener("click", () => whileBusy([], () => unfollow(f.name)));
  li.append(drop);
  return li;
}

function renderFriends() {
  const signedIn = Boolean(ME.account);
  $("follow-form").hidden = !signedIn;
  $("friends-signed-out").hidden = signedIn;
  const list = $("friends-list");
  const following = (F.data && F.data.following) || [];
  if (!signedIn) { list.replaceChildren(); return; }
  if (!following.length) { list.replaceChildren(el("li", {}, t("friends.none"))); return; }
  list.replaceChildren(...following.map(friendItem));
}

export async function followName(name, errorId = "friends-error") {
  $(errorId).textContent = "";
  try {
    const reply = await api("/api/friends/follow", { name }, { retries: 0 });
    $("friends-said").textContent = t(reply.friend ? "friends.now_friends" : "friends.followed", { name: reply.following });
    await refresh();
    return true;
  } catch (err) { $(errorId).textContent = errorText(err); return false; }
}

async function unfollow(name) {
  try { await api("/api/friends/unfollow", { name }, { retries: 0 }); } catch (err) { $("friends-error").textContent = errorText(err); }
  await refresh();
}

// A follow button (the leaderboard's rows): shown to an account for another's name.
export function followButton(name) {
  if (!ME.account || name === ME.account) return null;
  const known = F.data && F.data.following.some((f) => f.name === name);
  const button = el("button", { type: "button", class: "small", "data-testid": `follow-${name}` }, t(known ? "friends.following" : "friends.follow"));
  button.disabled = Boolean(known);
  button.addEventListener("click", () => whileBusy([], async () => {
    if (await followName(name, "board-error")) { button.textContent = t("friends.following"); button.disabled = true; }
  }));
  return button;
}

// A follow button for seat `seat` at table `code` (the table's people): the server
// finds the seat's account; the button then says whom you follow.
export function followSeatButton(code, seat) {
  const button = el("button", { type: "button", class: "small", "data-testid": `follow-seat-${seat}` }, t("friends.follow"));
  button.addEventListener("click", () => whileBusy([], async () => {
    try {
      const reply = await api("/api/friends/follow", { code, seat }, { retries: 0 });
      button.textContent = t("friends.following");
      button.disabled = true;
      button.title = reply.following;
      refresh();
    } catch (err) { $("error").textContent = errorText(err); }
  }));
  return button;
}

// ------------------------------------------------------------------ invitations
function renderNotices() {
  const box = $("invite-notices");
  const invites = ((F.data && F.data.invites) || []).filter((i) => !F.answered.has(i.code));
  box.hidden = !invites.length;
  box.replaceChildren(...invites.map((i) => {
    const div = el("div", { class: "invite", role: "status", "data-testid": `invite-${i.code}` });
    div.append(el("p", {}, t("friends.invited_you", { name: i.from_name, code: i.code })));
    const yes = el("button", { type: "button", class: "primary", "data-testid": `invite-accept-${i.code}` }, t("friends.accept"));
    const no = el("button", { type: "button", "data-testid": `invite-decline-${i.code}` }, t("friends.decline"));
    yes.addEventListener("click", () => whileBusy([], () => answer(i.code, true)));
    no.addEventListener("click", () => whileBusy([], () => answer(i.code, false)));
    div.append(yes, no);
    return div;
  }));
}

async function answer(code, accept) {
  F.answered.add(code);
  renderNotices();
  try {
    await api(`/api/friends/${accept ? "accept" : "decline"}`, { code }, { retries: 0 });
    if (accept) await joinTable(code, "friends-error");
  } catch (err) { $("friends-error").textContent = errorText(err); }
}

async function joinTable(code, errorId) {
  try {
    const name = (ME.player && ME.player.name) || ME.account;
    try { await api(`/api/tables/${code}/join`, { name }, { retries: 0 }); } catch (err) { if (err.code !== "already_seated") throw err; }
    go(`/t/${code}`);
  } catch (err) { $(errorId).textContent = errorText(err); }
}

// ------------------------------------------------------------------ at a table
// Before the start: a seated account invites a friend by name; the host may seat friends
// (and the invited) only.
export async function renderTableTools(state, { host, seated }) {
  const box = $("invite-box");
  box.hidden = !(ME.account && seated && state.online !== false);
  $("friends-only-row").hidden = !host;
  if (box.hidden || F.table === state.code) return;
  F.table = state.code;
  $("invite-said").textContent = "";
  $("invite-error").textContent = "";
  const friends = ((F.data && F.data.following) || []).filter((f) => f.friend);
  $("invite-friends").replaceChildren(...friends.map((f) => el("option", { value: f.name })));
  if (host) {
    try { $("friends-only").checked = (await api(`/api/tables/${state.code}/friends-only`)).friends_only; } catch { /* shown unchecked */ }
  }
}

async function invite() {
  $("invite-said").textContent = "";
  $("invite-error").textContent = "";
  const name = $("invite-name").value.trim();
  try {
    const reply = await api("/api/friends/invite", { code: F.table, name }, { retries: 0 });
    $("invite-said").textContent = t("friends.invite_sent", { name: reply.invited });
    $("invite-name").value = "";
  } catch (err) { $("invite-error").textContent = errorText(err); }
}

async function setFriendsOnly() {
  const box = $("friends-only");
  $("invite-error").textContent = "";
  try { box.checked = (await api(`/api/tables/${F.table}/friends-only`, { on: box.checked }, { retries: 0 })).friends_only; }
  catch (err) { box.checked = !box.checked; $("invite-error").textContent = errorText(err); }
}

// ------------------------------------------------------------------ setup
export async function show() {
  if (!ME.loaded) await loadSession();
  render();
  await refresh();
}

export function setup() {
  $("follow-form").addEventListener("submit", (e) => {
    e.preventDefault();
    whileBusy(["follow"], async () => { if (await followName($("friend-name").value.trim())) $("friend-name").value = ""; });
  });
  $("invite-form").addEventListener("submit", (e) => { e.preventDefault(); whileBusy(["invite"], invite); });
  $("friends-only").addEventListener("change", () => whileBusy([], setFriendsOnly));
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") refresh(); });
}

// Once the words are loaded: the poll that keeps the notices and the presence fresh.
export function start() { schedule(); refresh(); }

// Which of a table's states the page shows (no DOM: Node tests it). States come by the
// socket, by HTTP answers and by polls, not always in the order they were made; one is shown
// if it is not older than the one shown: by its game and move (`version`: [game, seq]), then
// by the database's revision (`rev`), which a change with no move bumps too (a client seed,
// a name). A copy read before such a change (a socket's first state, a poll) that comes
// after it must not undo it (issue 58). An in-page game's states have no `rev`: by version.
export function newer(state, shown) {
  const [a, b] = [state.version, shown.version];
  if (a[0] !== b[0]) return a[0] > b[0];
  if (a[1] !== b[1]) return a[1] > b[1];
  return state.rev === undefined || shown.rev === undefined || state.rev >= shown.rev;
}

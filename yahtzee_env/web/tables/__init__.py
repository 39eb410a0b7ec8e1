"""The tables: the one authority on every game.

`authority` (``Tables``: the tables of this process, each one's copy, its lock, its moves),
`deal` (a table's games from its seed), `coaches` (coaches prepared in a child process),
`review` (a finished game graded by the solver), `names` (what a name may hold), `renames`
(a seat's name at a table), `movelog` (a game's narrated moves), `locks` (one lock per
table), `batch` (moves queued together: one worker call, one commit).
"""

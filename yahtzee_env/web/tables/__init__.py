"""The tables: the one authority on every game.

`authority` (``Tables``: the tables of this process: created, loaded, locked, acted on) and
its named parts, each one concern (as lila's Rematcher and Moretimer): `seating` (joining,
starting, leaving, a seat handed over), `clock` (the turn clock), `replicas` (this process's
copies, kept equal to the database's), `reviews` (who may open a finished game's review),
`seeds` (the seats' client seeds for the dice);
`table` (a table in memory: seats, games, the action log, its views), `secrecy` (what a
duplicate game in play shows each seat and the spectators: no die a seat has not rolled), `deal`
(a table's games from its seed), `coaches` (coaches prepared in a child process), `review`
(a finished game graded by the solver), `renames` (a seat's
name at a table), `movelog` (a game's narrated moves), `locks` (one lock per table), `batch`
(moves queued together: one worker call, one commit), `offline_games` (a game played offline
in the page, replayed by the engine before it is kept).
"""

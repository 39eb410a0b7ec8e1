"""The door: how a request or a socket reaches the server, and how states go back out.

`app` (``create_app``: builds the server object, lists every route), `service` (the server
object: one method per intent, whichever door it comes in by), `routes` (the HTTP routes:
one line each into `service` or a helper it holds), `asks` (what every intent reads of its
asker: the JSON body, the session's player, the budget's key), `social` (the helper of the
table's people: chat, reports, blocks, kicks, reviews), `sign_ins` (the helper of guest
sessions, sign in, sign up, sign out, and the turn of a user name to have a secret
checked), `account_desk` (the helper of account care: passwords, recovery codes, delete,
export), `place` (the helper of a place to
play: quick match, open tables, ratings, spectator links), `friendship` (the helper of friends and
invitations: follows, presence, invitations, friends-only tables), `tourneys` (the helper
of tournaments: create, join, the bracket, the server's step), `records` (the helper of a
player's records: statistics, offline games, open tables), `postman` (e-mail: the helper
of an account's address, and the worker thread that sends through ``--smtp``), `site` (the
page's files, the lobby's config, health), `sockets` (a table's WebSocket), `watch` (a
spectator's socket), `spectators` (the spectators of each table: the link, their redacted
states), `fanout` (states to the sockets, other processes' changes too), `hub` (the open
sockets: a bounded send queue each), `guard` (security headers, cross-site checks,
per-address limits), `memory` (the heap given back after sockets close), `server` (uvicorn
as ``yahtzee serve`` runs it), `local_server` and `local_postgres` (``yahtzee serve`` and a
PostgreSQL cluster as loopback child processes, for tests and benchmarks).
"""

"""The people: who plays, and how they meet.

`accounts` (sessions, sign-up, sign-in), `logins` (the bounds on checking a name's
secrets, the browser's device cookie), `account_care` (password, recovery codes, delete,
export), `chat` (chat, emotes, reports, blocks, kicks), `ratings` (openskill's
Plackett-Luce; the CPU levels' fixed ratings in ``cpu_ratings.json``), `matchmaking` (the
quick-match queue), `friends` (follows, presence, invitations, friends-only tables),
`mail` (an account's e-mail address, its choices, the mails), `tournaments` (knockout and
Swiss tournaments: entrants, rounds of ordinary tables, the winner), `swiss` (the Swiss
pairings, points and standings, pure), `stats` (my statistics),
`profiles` (``/p/NAME``: what an account shows, and to whom) and
`achievements` (the feats its stored games earned).
"""

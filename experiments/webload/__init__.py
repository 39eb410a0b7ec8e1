"""The load benchmark of ``yahtzee serve`` (`experiments/bench_web.py`, its thin command).

`clients` (the simulated players over HTTP and WebSocket, and the hostile clients: slow
sockets, fresh connections), `measures` (what the servers spent: CPU by the kernel's and
the server's own accounting, memory, threads, bytes, the database's round trips; the meter
read at the window's edges), `report` (the numbers as the command prints them: the load,
the fan-out, the attacks, the profiles) and `run` (the servers started, the load and the
crash check run).
"""

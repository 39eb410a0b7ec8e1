"""The server's CPU per solo game against a level (issue 50): dealt by the server (a table,
every move sent) or played in the page ("Play in this page": one POST of the finished game).

    nice -n 5 python experiments/bench_solo.py --out data/web_solo/bench_solo.json

The logic is `webload.solo` (its docstring says what is measured and how).
"""

from webload.solo import main

if __name__ == "__main__":
    main()

"""``python -m yahtzee_agents.ppo_jax CONFIG [OPTIONS]`` is ``yahtzee train CONFIG --set
train.engine=jax [OPTIONS]`` (an alias; ``--resume RUN_DIR``: the run's config names its
engine). The JAX engine itself is `yahtzee_agents.jax.ppo`."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from yahtzee_env.commands.cli import main as yahtzee

    args = list(sys.argv[1:] if argv is None else argv)
    return yahtzee(["train", *args, *([] if "--resume" in args else ["--set", "train.engine=jax"])])


if __name__ == "__main__":
    sys.exit(main())

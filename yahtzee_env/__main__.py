import sys

from yahtzee_env.commands.cli import main

sys.exit(main())

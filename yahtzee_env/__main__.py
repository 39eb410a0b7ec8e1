import sys

from yahtzee_env.cli import main

sys.exit(main())

"""A human at the terminal: the game loop and its I/O (`terminal`), and the solver's coach
there (`terminal_coach`). The browser game is `yahtzee_env.web`."""

"""The Gymnasium and PettingZoo adapters over the engine: `Yahtzee-v0` (`yahtzee`), its
native vector env (`vector`), `YahtzeeVs-v0` (`versus`), the PettingZoo env
(`multiplayer`), the multi-player observation (`seat_view`), the info dict (`info`), what
every env checks the same way (`checks`) and the wrappers (`wrappers`)."""

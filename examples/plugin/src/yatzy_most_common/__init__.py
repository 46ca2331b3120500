"""A yatzy-harness plugin: one bot, found through the ``yatzy_harness.strategies`` entry point."""

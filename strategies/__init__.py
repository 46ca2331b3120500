"""Built-in bots, one family per module; each registers itself with harness.game.registry."""

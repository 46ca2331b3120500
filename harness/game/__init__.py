"""The game layer: rule sets, dice, the seeded stream, scoring, outcomes, the batched engine and the bot contract."""

"""The reports layer: summaries, reports, reviews, plots, game quality and comparisons."""

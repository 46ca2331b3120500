"""The decisions layer: every option's exact value, luck and regret, per-player analysis."""

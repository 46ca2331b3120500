"""Studies built on many exact evaluations: the depth of skill and its chains, sweeps of a setting, and what they cost."""

"""The numba kernels of the exact layer: the solver's lattice, the exact evaluation's forward pass, target tables."""

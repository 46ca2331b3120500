"""The bottom layer: errors, JSON, bot specs, progress, numba set-up, the cache folder, rendering and fixed-order sums."""

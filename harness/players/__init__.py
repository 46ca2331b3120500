"""The players layer: player models, levels, opponents from logs, calibration."""

"""The play layer: the registry, run configs, the runner with its workers and backends, external engines."""

"""Exact jobs: where many exact evaluations run (this process, forked workers, a Dask cluster) and how they are driven."""

"""Processes beyond pytest's own: ranks spawned for the distributed checks, background CPU jobs, their environment."""

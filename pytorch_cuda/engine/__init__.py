"""The engine room: BuildKit builds and the Docker SDK (inspect, tag, run, prune)."""

"""The run's results: the recorder (a pytest plugin writing results.json), the run's identity, the printed summary."""

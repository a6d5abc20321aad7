"""Console output: progress lines and the build report."""

"""Host probes: the CA bundle and the package index, checked before a build."""

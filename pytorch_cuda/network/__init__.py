"""The host's network facts, checked before a build: the CA bundle, and whether the package index answers."""

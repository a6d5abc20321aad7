"""Pipeline steps: base image, in-image checks, SBOM, tag promotion, publish (and remote_names: where a push puts
the tags)."""

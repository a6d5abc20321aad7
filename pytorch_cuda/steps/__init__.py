"""Pipeline steps: base image, in-image checks, tag promotion (push and SBOM join them)."""

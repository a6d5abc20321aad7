"""The one OCI registry client (the distribution API through oras-py, with docker login's credentials): manifests and
blobs by exact bytes, uploads, and an image's config. bump reads what a base's tag serves with it; release signs,
attests, indexes, promotes and verifies with it. Pushing a built image stays with the engine (steps/publish.py):
the image lives in the Docker engine, and the engine's logins and insecure-registry rules apply to it."""

"""One build: its plan (``build_plan``, decided before the engine is touched), a flavour's lineage, the pipeline
that runs a plan through ``steps``, the per-variant mutex, the source facts and the content hash of an image."""

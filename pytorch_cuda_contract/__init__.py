"""The contract between the builder, the image and the reports. Standard library only.

One home for what several parts must agree on: the in-image paths (``paths``), the build manifest
(``manifest``, ``base_record``), the results file (``metrics`` writes a metric, ``results_file`` reads a
run through ``results_model``), the GPU facts (``gpu``: compute capability -> what it runs natively;
``peaks``: datasheet peaks), what a run means for the user (``advice``: which precision; ``claims``: the seed
article's claims, checked), and the driver and host facts (``driver``, ``versions``, ``shared_memory``).
The builder, the entry banner, precision-check, the report and the suite import it; it imports nothing of
theirs. In the image it sits next to the suite under ``paths.SHARE_DIR``.
"""

"""pytorch-cuda: build, check and tag PyTorch + CUDA container images.

A build reads ``matrix`` (matrix.yaml, typed), whose templates ``render`` writes to images/ and whose
hash locks ``locks`` makes; ``planning`` and ``plan`` make the plan of each variant, and ``pipeline``
runs it through ``steps`` (base image, in-image checks, SBOM, tags), talking to Docker only through
``engine``. The commands are in ``cli``; ``precision_report`` turns conformance result files into the
precision report. The ``conformance`` suite never imports this package.
"""

__version__ = "0.1.0"

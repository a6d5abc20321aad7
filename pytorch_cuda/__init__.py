"""pytorch-cuda: build, check and tag PyTorch + CUDA container images.

A build reads ``matrix`` (matrix.yaml as typed data: variants, flavours, tags, labels, the manifest), whose
templates ``render`` writes to images/ and whose hash locks ``locks`` makes; ``build`` makes the plan of each
variant (``build.build_plan``) and runs it (``build.pipeline``) through ``steps`` (base image, in-image checks,
SBOM, tags, push), talking to Docker only through ``engine``. The commands are in ``cli``; ``precision_report``
turns conformance results files into the precision report, ``run_store`` keeps them and ``site`` publishes them.
The ``conformance`` suite and ``precision_check`` never import this package, nor this package them.
"""

__version__ = "0.1.0"

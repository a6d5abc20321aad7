"""pytorch-cuda: build, check and tag PyTorch + CUDA container images.

The package is one flow with one module per step: ``matrix`` (data) ->
``render`` (templates to Dockerfiles) -> ``engine`` (BuildKit and the Docker
SDK) -> in-image checks -> ``report``. Each module only imports modules
upstream of it. The ``conformance`` suite never imports this package.
"""

__version__ = "0.1.0"

"""A re-export for release/commands.py only, until issue 40's work on that file lands: the registry client is
pytorch_cuda/oci/registry_client.py. Import it from there."""

from pytorch_cuda.oci.registry_client import open_image, reference

__all__ = ["open_image", "reference"]

"""What a user meets first in a pytorch-cuda image: the entry banner and `pytorch-cuda-info`.

Standard library only (torch and pynvml are imported lazily by the probes), so it
runs in every flavour and bare on any host. It reads the driver and /dev/shm
judgements from pytorch_cuda_contract; it never imports the builder or the suite.
"""

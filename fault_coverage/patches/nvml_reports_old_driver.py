"""Fault: an NVIDIA driver too old for the CUDA runtime (470.57.02, a CUDA 11.4 driver) as NVML reports it, the
first source the suite reads the driver version from. Installed as sitecustomize: it replaces
pynvml.nvmlSystemGetDriverVersion (the host's real driver still runs everything else)."""

try:
    import pynvml
except ImportError:  # no nvidia-ml-py: the suite reads /proc/driver/nvidia/version, which this cannot change
    pynvml = None

if pynvml is not None:
    pynvml.nvmlSystemGetDriverVersion = lambda: "470.57.02"

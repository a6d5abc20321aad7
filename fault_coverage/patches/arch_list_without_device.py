"""Fault: a torch build without kernels for this GPU (a wheel built only for newer architectures, as a cu13x wheel
is for pre-Turing GPUs): the arch list torch reports lacks every sm_/compute_ entry up to the device's capability.
Installed as sitecustomize: it wraps torch.cuda.get_arch_list."""

import re

import torch

_get_arch_list = torch.cuda.get_arch_list


def get_arch_list() -> list[str]:
    major, minor = torch.cuda.get_device_capability(0)
    kept = []
    for entry in _get_arch_list():
        match = re.match(r"^(?:sm|compute)_(\d+)(\d)[a-z]?$", entry)
        if match is None or (int(match.group(1)), int(match.group(2))) > (major, minor):
            kept.append(entry)
    return kept


torch.cuda.get_arch_list = get_arch_list

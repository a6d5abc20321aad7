"""Fault: device-side assertions that never reach Python (a runtime or build that drops kernel errors, as with
asserts compiled out): torch._assert_async on a false value returns quietly. Installed as sitecustomize, so it
applies in the check's subprocess too (PYTHONPATH is inherited)."""

import torch


def _assert_async(*args: object, **kwargs: object) -> None:
    return None


torch._assert_async = _assert_async

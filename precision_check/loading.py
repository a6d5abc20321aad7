"""Find the user's FACTORY: `path/to/file.py:factory` or `package.module:factory`."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from precision_check.bad_input import PrecisionCheckError, describe_exception

_FORM = "give MODULE:FACTORY as path/to/file.py:factory or package.module:factory"


def split_target(target: str) -> tuple[str, str]:
    module, sep, factory = target.rpartition(":")
    if not sep or not module or not factory.isidentifier():
        raise PrecisionCheckError(f"{target!r} is not of the form MODULE:FACTORY", _FORM)
    return module, factory


def _from_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise PrecisionCheckError(f"the file {path} does not exist", f"check the path; {_FORM}")
    name = f"precision_check_user_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PrecisionCheckError(f"{path} cannot be imported as Python", f"give a .py file; {_FORM}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.resolve().parent))  # so the file can import its neighbours
    spec.loader.exec_module(module)
    return module


def _from_import(dotted: str) -> ModuleType:
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.import_module(dotted)
    except ModuleNotFoundError as exc:
        if exc.name and (dotted == exc.name or dotted.startswith(exc.name + ".")):
            raise PrecisionCheckError(
                f"no module named {dotted!r} (looked on sys.path from {Path.cwd()})",
                f"run from the folder that holds it, set PYTHONPATH, or {_FORM}",
            ) from exc
        raise


def load_factory(target: str) -> Callable[..., object]:
    """Import the module and return FACTORY; every failure is a PrecisionCheckError."""
    module_part, factory_name = split_target(target)
    is_file = module_part.endswith(".py") or "/" in module_part
    try:
        module = _from_file(Path(module_part)) if is_file else _from_import(module_part)
    except PrecisionCheckError:
        raise
    except Exception as exc:
        raise PrecisionCheckError(
            f"importing {module_part} raised {describe_exception(exc)}",
            "fix the module so that it imports (try `python -c 'import ...'`)",
        ) from exc
    factory = getattr(module, factory_name, None)
    if factory is None:
        public = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_"))
        shown = ", ".join(public[:8]) or "none"
        raise PrecisionCheckError(
            f"{module_part} has no {factory_name!r} (its functions and classes: {shown})",
            f"name an existing function; {_FORM}",
        )
    if not callable(factory):
        raise PrecisionCheckError(
            f"{module_part}:{factory_name} is a {type(factory).__name__}, not a function",
            "point at a function that takes no arguments and returns the model, batch and loss",
        )
    return factory  # type: ignore[no-any-return]


def _takes_device(factory: Callable[..., object]) -> bool:
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a builtin or C callable: no signature to read
        return False
    return "device" in parameters and parameters["device"].kind is not inspect.Parameter.POSITIONAL_ONLY


def call_factory(factory: Callable[..., object], target: str, device: str) -> object:
    """FACTORY(), or FACTORY(device="cuda"/"cpu") when it has a `device` parameter."""
    try:
        return factory(device=device) if _takes_device(factory) else factory()
    except Exception as exc:
        raise PrecisionCheckError(
            f"{target}() raised {describe_exception(exc)}",
            "FACTORY must take no arguments (or only `device`) and return the model, batch function and loss",
        ) from exc

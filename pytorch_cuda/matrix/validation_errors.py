"""matrix.yaml's validation errors in words: a missing key, an unknown key (with "did you mean"), a bad value."""

from __future__ import annotations

import difflib
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from pytorch_cuda.errors import MatrixError


def _strip(tp: Any) -> Any:
    """The type inside Optional[...] and Annotated[...]."""
    while typing.get_origin(tp) in (typing.Union, types.UnionType, typing.Annotated):
        tp = next(a for a in typing.get_args(tp) if a is not type(None))
    return _strip(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType, typing.Annotated) else tp


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _model_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The pydantic model of the mapping at `loc` (a dict's key or a list's index steps to its item), if any."""
    current: Any = model
    for part in loc:
        current = _strip(current)
        if _is_model(current):
            field = current.model_fields.get(str(part))
            if field is None:
                return None
            current = field.annotation
        else:  # a container: this part is its key or index
            items = [a for a in typing.get_args(current) if a is not Ellipsis]
            if not items:
                return None
            current = items[-1]
    current = _strip(current)
    return current if _is_model(current) else None


def _keys(model: type[BaseModel] | None) -> list[str]:
    return [] if model is None else [field.alias or name for name, field in model.model_fields.items()]


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


def _describe(model: type[BaseModel], err: ErrorDetails) -> str:
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    parent, key = loc[:-1], str(loc[-1]) if loc else ""
    if err["type"] == "missing":
        return f"the key {_where(loc)!r} is missing (required)"
    if err["type"] == "extra_forbidden":
        allowed = _keys(_model_at(model, parent))
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}?" if close else f"allowed here: {', '.join(allowed)}"
        return f"the key {_where(loc)!r} is not one this file knows ({hint})"
    value = err.get("input")
    shown = "a mapping" if isinstance(value, dict) else repr(value)
    message = err["msg"].removeprefix("Value error, ")
    if isinstance(value, dict):
        return f"at key {_where(loc)!r}: {message}"
    return f"at key {_where(loc)!r} the value {shown} is invalid: {message}"


def format_validation_error(model: type[BaseModel], path: Path, exc: ValidationError) -> MatrixError:
    """One paragraph: every problem (an unknown key first, then the key it may have meant as missing)."""
    errors = sorted(exc.errors(include_url=False), key=lambda e: e["type"] != "extra_forbidden")
    problems = [_describe(model, err) for err in errors]
    listed = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
    return MatrixError(
        cause=f"{path} does not validate: {listed}",
        fix=f"edit {path} so every key holds an allowed value (see the comments in that file and "
        "matrix.schema.json, which an editor with the YAML language server checks as you type), then run "
        "`python build.py list` to check it",
    )

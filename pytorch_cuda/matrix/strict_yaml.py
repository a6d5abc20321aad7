"""YAML as the project reads its own files (matrix.yaml, fleet.yaml, release-policy.yaml, the triage file):
PyYAML's safe loader, but a key given twice in one mapping is an error, not a silent
last-wins (YAML 1.2 requires keys to be unique; PyYAML keeps the last)."""

from __future__ import annotations

from typing import Any

import yaml


class UniqueKeyLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses a mapping holding one key twice, naming both lines."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in first:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"key {key!r} is given twice in one mapping (first at line {first[key]}): keep one",
                    key_node.start_mark,
                )
            first[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def load_unique(text: str) -> Any:
    """The document in ``text``; yaml.YAMLError (with its mark) on bad YAML or a key given twice."""
    return yaml.load(text, Loader=UniqueKeyLoader)

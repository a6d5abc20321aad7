"""The C compiler Inductor would use: $CC (a wrapper such as ccache kept), else one on PATH; a missing one named."""

from __future__ import annotations

from conformance.support.probes.c_compiler import CompilerChoice, CompilerProblem, resolve_c_compiler


def test_compiler_resolution() -> None:
    def which(name: str) -> str | None:
        return {"gcc": "/usr/bin/gcc", "ccache": "/usr/bin/ccache"}.get(name)

    assert resolve_c_compiler({}, which) == CompilerChoice(("/usr/bin/gcc",), "PATH")
    assert resolve_c_compiler({"CC": "ccache gcc"}, which) == CompilerChoice(("/usr/bin/ccache", "gcc"), "CC")
    missing = resolve_c_compiler({"CC": "/nope/cc"}, which)
    assert isinstance(missing, CompilerProblem)
    assert "CC='/nope/cc'" in missing.message
    none = resolve_c_compiler({"PATH": "/empty"}, lambda name: None)
    assert isinstance(none, CompilerProblem)
    assert "no C compiler" in none.message

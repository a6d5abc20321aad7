"""The shape of a catalogue entry: a case (a fault or a control), how it is injected, and what it must do."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Final, Literal

PATCHES: Final = Path(__file__).resolve().parent / "patches"
EVERY_MARKER: Final = "cpu or gpu or multigpu"
UNTOUCHED: Final = "untouched"  # the control every matrix is read against
DETERMINISTIC: Final = "torch.use_deterministic_algorithms(True)"  # what the suite's skips under it name
DETERMINISTIC_WORKSPACE: Final = ":4096:8"  # the cuBLAS workspace PyTorch's reproducibility notes ask for
TIMED_SUFFIX: Final = ".timed"  # a control's run of the timed checks, with the GPU to itself: CASE.timed.json
# What a fault changes. "environment" (a variable, a library on the loader's path, a busy GPU, a small /dev/shm, an
# installed package) and "setting" (a public torch switch flipped at start, as a framework or a startup hook does)
# are real faults: a user's host can have them as they are. "library patch" replaces the torch function a check
# calls with a wrong one: the way to model a kernel that computes wrong results, which no setting produces.
# "replaced value" makes a function or a file report another value (a version, an arch list): kept only where no
# real fault can be made on the host (an older driver, a torch build without this GPU's kernels).
FaultKind = Literal["environment", "setting", "library patch", "replaced value"]
FAULT_KINDS: Final[tuple[FaultKind, ...]] = ("environment", "setting", "library patch", "replaced value")
REAL_KINDS: Final[frozenset[FaultKind]] = frozenset({"environment", "setting"})


@dataclass(frozen=True)
class Injection:
    """How a case changes the environment the suite runs in. Several parts may combine."""

    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    patch: str | None = None  # a module of fault_coverage/patches/, run at interpreter start as sitecustomize
    patch_kind: FaultKind = "library patch"  # what the patch does: flips a setting, patches, or replaces a value
    preload_copy: str | None = None  # a torch CUDA library (file-name glob), copied out of the wheels and LD_PRELOADed
    library_path_copy: str | None = None  # likewise, but the copy's folder goes first on LD_LIBRARY_PATH
    preload_host: str | None = None  # the host's own copy of a CUDA library (a soname, from `ldconfig -p`, outside
    # torch's wheels: a distribution's libcudnn9 package, a CUDA toolkit), LD_PRELOADed
    library_path_host: str | None = None  # likewise, but its folder goes first on LD_LIBRARY_PATH
    busy_gpu: bool = False  # another process keeps the GPU busy with bf16 GEMMs during the run
    shm_mib: int | None = None  # a private /dev/shm of this size (a mount namespace; root only)
    expectations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # fields of the host's
    # expectations file changed (`pins.torch`, `python`, `min_driver`): an environment that drifted from its pins
    image_variant: str | None = None  # Dockerfile instructions run as root on top of the built image (the Docker
    # integration tier builds and checks these variants; this harness, on a bare GPU host, does not)
    uid: int | None = None  # run the suite as this uid and gid (no passwd entry), from a readable copy of the suite
    deterministic: bool = False  # reproducible training as PyTorch's notes advise, under the rest of the injection:
    # torch.use_deterministic_algorithms(True) at start (before the patch, if any), CUBLAS_WORKSPACE_CONFIG=:4096:8

    def describe(self) -> str:
        parts = [f"{key}={value}" for key, value in self.env.items()]
        if self.deterministic:
            parts.append(f"{DETERMINISTIC} at start with CUBLAS_WORKSPACE_CONFIG={DETERMINISTIC_WORKSPACE}")
        if self.patch:
            parts.append(f"sitecustomize fault_coverage/patches/{self.patch}.py")
        if self.expectations:
            changed = ", ".join(f"{key}={value}" for key, value in self.expectations.items())
            parts.append(f"the expectations file (--manifest) says {changed}")
        if self.preload_copy:
            parts.append(f"LD_PRELOAD of a copy of {self.preload_copy}")
        if self.library_path_copy:
            parts.append(f"LD_LIBRARY_PATH with a copy of {self.library_path_copy}")
        if self.preload_host:
            parts.append(f"LD_PRELOAD of the host's own {self.preload_host} (outside torch's wheels)")
        if self.library_path_host:
            parts.append(f"LD_LIBRARY_PATH first: the folder of the host's own {self.library_path_host}")
        if self.busy_gpu:
            parts.append("a second process running bf16 GEMMs on the GPU")
        if self.shm_mib is not None:
            parts.append(f"/dev/shm of {self.shm_mib} MiB")
        if self.uid is not None:
            parts.append(f"uid and gid {self.uid} (no passwd entry; USER and an empty HOME as the image's entry gives)")
        if self.image_variant:
            parts.append(f"an image variant: {self.image_variant}")
        return "; ".join(parts) or "nothing (untouched)"

    def patch_file(self) -> Path | None:
        return None if self.patch is None else PATCHES / f"{self.patch}.py"


@dataclass(frozen=True)
class Case:
    """A fault (it must trip the checks in ``trips``) or a control (it must trip nothing; ``skips`` name the checks
    that must skip, with a text their reason contains)."""

    name: str
    kind: Literal["fault", "control"]
    models: str  # the real-world failure (fault) or the legitimate setup (control), one sentence
    injection: Injection
    trips: tuple[str, ...] = ()  # check names: `test_x[param]`, or `test_x` for every parameter of it
    # (check, the host's condition): checks it trips only where the host has the condition; tripped there, and not a
    # finding where it passes (the condition is on the page)
    trips_where: tuple[tuple[str, str], ...] = ()
    select: str | None = None  # pytest -k: the checks it targets, plus the control check that must still pass
    markers: str = EVERY_MARKER
    skips: tuple[tuple[str, str], ...] = ()
    where: str = "gpu"  # "gpu": the GPU host's runs; "image": the Docker integration tier (not run by this harness)
    alone: bool = False  # it runs checks that time kernels: it needs the GPU to itself (the others run side by side)
    gap: str | None = None  # why this fault may trip nothing in one run on one GPU (then it is a gap the page shows
    # with this reason, not a finding): a second GPU needed, or only the history of runs can see it (issue 37)

    @property
    def fault_kind(self) -> FaultKind | None:
        """What a fault changes (None for a control): its patch's kind, "replaced value" for a rewritten
        expectations file, else "environment"."""
        if self.kind == "control":
            return None
        if self.injection.patch is not None:
            return self.injection.patch_kind
        return "replaced value" if self.injection.expectations else "environment"

    @property
    def real(self) -> bool:
        """A real fault: the environment or a setting, as a user's host can have it (not a patch, not a value)."""
        return self.fault_kind in REAL_KINDS

    def expects_to_trip(self, check: str) -> bool:
        """It targets ``check``: always (``trips``) or where the host has a condition (``trips_where``)."""
        return self.must_trip(check) or any(matches(pattern, check) for pattern, _ in self.trips_where)

    def must_trip(self, check: str) -> bool:
        """A pass of ``check`` under this fault is a finding."""
        return any(matches(pattern, check) for pattern in self.trips)


def matches(pattern: str, check: str) -> bool:
    """`test_x[fp16]` matches itself; `test_x` matches `test_x` and every `test_x[...]`."""
    return check == pattern or check.split("[", 1)[0] == pattern


def check_name(nodeid: str) -> str:
    """A check's short name: the test function with its parameters (unique across the suite)."""
    return nodeid.rsplit("::", maxsplit=1)[-1]


def env(**values: str) -> Injection:
    return Injection(env=MappingProxyType(values))


def patch(name: str, kind: FaultKind = "library patch") -> Injection:
    """A sitecustomize of fault_coverage/patches/ (``kind``: a setting flipped, a library patch, a value replaced)."""
    return Injection(patch=name, patch_kind=kind)


def expecting(**fields: str) -> Injection:
    """The host's expectations file with these fields changed (`pins__torch` stands for `pins.torch`)."""
    return Injection(expectations=MappingProxyType({k.replace("__", "."): v for k, v in fields.items()}))

"""The binding's address parse (binding_parse.cpp) at each stage of one process, printed as it goes, so a crash names
its stage: before torch, after its import, after CUDA init, after Triton's driver, at each kernel load (with the
libstdc++ and OpenMP runtimes then mapped), then an Inductor CPU compile and call.  argv[1]: the built
binding_parse module.  Run by gpu/inductor_cpu_diagnosis.py."""

import importlib.util
import json
import os
import sys


def say(stage: str, value: object) -> None:
    print(f"STAGE {stage}: {json.dumps(value)}", flush=True)


spec = importlib.util.spec_from_file_location("binding_parse", sys.argv[1])
assert spec is not None
assert spec.loader is not None
bp = importlib.util.module_from_spec(spec)
os.environ["_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR"] = "140719011151296"
say("env", {k: v for k, v in os.environ.items() if k.startswith(("LC_", "LANG"))})
spec.loader.exec_module(bp)
say("loaded", "binding_parse")
say("before-torch", bp.parse())
import torch  # noqa: E402

say("after-import-torch", bp.parse())
if torch.cuda.is_available():
    torch.cuda.init()
    say("after-cuda-init", bp.parse())
try:
    from triton.runtime import driver

    driver.active.utils  # noqa: B018 - loads Triton's cuda_utils, as a compile on a GPU host does
    say("after-triton-driver", bp.parse())
except Exception as exc:  # no GPU, or no Triton: said, and the stages go on
    say("triton-driver", repr(exc)[:300])

from torch._inductor import codecache  # noqa: E402

inner = codecache.CppPythonBindingsCodeCache._load_library_inner.__func__


def load_and_parse(cls: type, path: str, key: str) -> object:
    """Inductor's kernel load, then the parse and the runtimes mapped, before the kernel is first called."""
    module = inner(cls, path, key)
    seen = bp.parse()
    seen["torch_address"] = torch._C._dynamo.guards._torchinductor_pyobject_tensor_data_ptr
    with open("/proc/self/maps", encoding="utf-8") as maps:
        seen["maps"] = sorted({line.split()[-1] for line in maps if "libstdc++" in line or "libgomp" in line})
    say("at-kernel-load", seen)
    return module


codecache.CppPythonBindingsCodeCache._load_library_inner = classmethod(load_and_parse)
compiled = torch.compile(lambda x: (x.sin() + 1.0) * 2.0)
x = torch.randn(64)
say("compiling", "")
error = float((compiled(x) - (x.sin() + 1.0) * 2.0).abs().max())
say("call", f"returned, max |error| {error:g}")
say("after-compile", bp.parse())

"""The binding's address parse (binding_parse.cpp) at each stage of one process, printed as it goes, so a crash names
its stage; then an Inductor CPU compile and call.  argv[1]: the built binding_parse module."""

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
compiled = torch.compile(lambda x: (x.sin() + 1.0) * 2.0)
x = torch.randn(64)
say("compiling", "")
error = float((compiled(x) - (x.sin() + 1.0) * 2.0).abs().max())
say("call", f"returned, max |error| {error:g}")
say("after-compile", bp.parse())

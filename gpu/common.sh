# shellcheck shell=bash
# What the gpu/*.sh scripts start with, sourced by each (`. "$(dirname "$0")/common.sh"`); it runs nothing itself.
#
# The stack: every script runs on the stack the image ships (torch, its CUDA wheels, Triton, from the image's lock),
# carried to this host by `python -m shipped_stack plan` and made into a venv there, unless STACK=host asks for the
# bare host's own torch (the second row, named as such). PYTHON=... names another interpreter outright.

SHIPPED_STACK_VENV="${SHIPPED_STACK_VENV:-/var/tmp/pytorch-cuda-stack/current}"

# gpu_python: PY, the Python to run: $PYTHON; else the carried stack's venv (STACK=shipped, the default), with
# PYTORCH_CUDA_MANIFEST set to the carried variant's manifest so that the pins are judged; else (STACK=host) python3.
# No carried stack and no STACK=host: one paragraph and exit 3, never a silent fall back to the host's torch.
gpu_python() {
  if [ -n "${PYTHON:-}" ]; then
    PY="$PYTHON"
    return 0
  fi
  case "${STACK:-shipped}" in
    host) PY=python3 ;;
    shipped)
      if [ ! -x "$SHIPPED_STACK_VENV/bin/python" ] || [ ! -f "$SHIPPED_STACK_VENV/carried-stack.json" ]; then
        echo "gpu: the shipped stack is not on this host ($SHIPPED_STACK_VENV has no carried venv). Carry it first:" \
          "run \`.venv/bin/python -m shipped_stack plan\` on the build machine and send each call it prints, back to" \
          "back; or set STACK=host to run on the bare host's own torch (a second row, not the image's)." >&2
        exit 3
      fi
      PY="$SHIPPED_STACK_VENV/bin/python"
      local repo variant
      repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
      # the marker read by the contract's one reader (a marker it cannot read: the paragraph, exit 3)
      if ! variant=$(PYTHONPATH="$repo" "$PY" -c 'import sys
from pytorch_cuda_contract.carried_stack import find_carried_stack
print(find_carried_stack(sys.argv[1]).variant)' "$SHIPPED_STACK_VENV" 2>&1); then
        echo "gpu: the carried stack's marker in $SHIPPED_STACK_VENV cannot be read ($variant); carry it again." >&2
        exit 3
      fi
      export PYTORCH_CUDA_MANIFEST="${PYTORCH_CUDA_MANIFEST:-$repo/images/$variant/manifest.json}"
      ;;
    *) echo "gpu: STACK=${STACK} is neither shipped (the default) nor host" >&2; exit 2 ;;
  esac
  # shellcheck disable=SC2034  # PY is for the script that sources this file
  export PY
}

# gpu_out DEFAULT: OUT (DEFAULT where OUT is unset; with an empty DEFAULT, OUT must be set), created; PY (gpu_python).
gpu_out() {
  if [ -z "$1" ]; then
    : "${OUT:?set OUT to the directory that comes back}"
  fi
  OUT="${OUT:-$1}"
  mkdir -p "$OUT"
  gpu_python
}

# gpu_host PYTHON: the host, for the evidence: each GPU's name, driver and memory, then the stack (shipped or host)
# and Python's, torch's, CUDA's, cuDNN's, NCCL's and Triton's versions as PYTHON sees them.
gpu_host() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  echo "stack: ${STACK:-shipped}${PYTHON:+ (PYTHON=$PYTHON)}"
  "$1" -c 'import sys, torch
nccl = ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else None
try:
    import triton; tv = triton.__version__
except ImportError:
    tv = None
print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda,
      "cudnn", torch.backends.cudnn.version(), "nccl", nccl, "triton", tv, "from", torch.__file__)'
}

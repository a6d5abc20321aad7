#!/usr/bin/env bash
# The entry banner, a CUDA extension build and the AMP notebook, on a bare GPU host
# (the carried shipped stack, gpu/common.sh; STACK=host for the host's torch; no Docker, no network).
# Run from the repository root:  OUT=/some/dir gpu/entry-extension-notebook.sh
#   1. the entry banner and `pytorch-cuda-info` (text and --json) against the real GPUs and driver;
#   2. the tiny CUDA extension in examples/cuda_extension/, built with torch.utils.cpp_extension and run;
#      it needs nvcc: from $CUDA_HOME or PATH, else from CUDA 13 wheels carried in gpu/wheels/ (see below);
#   3. examples/amp-fp16-bf16.ipynb executed (fp32, fp16 + GradScaler, bf16), saved with its output.
# Everything it prints and writes goes to $OUT/. Exit status: 0 when all three worked.
#
# Wheels for step 2 when the host has no nvcc (run on a machine with PyPI, then carry gpu/wheels/);
# take the versions of the CUDA 13.0 release that torch's nvidia-cuda-runtime pin belongs to
# (this script prints that pin first; 13.0.96 is CUDA 13.0.2, whose nvcc is 13.0.88):
#   pip download --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 -d gpu/wheels \
#     nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-cccl==13.0.85 ninja==1.13.2
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=gpu/common.sh
. gpu/common.sh
gpu_out "$PWD/gpu-out"
status=0
log() { printf '\n==> %s\n' "$*" | tee -a "$OUT/summary.txt"; }

log "host"
{
  gpu_host "$PY"
  "$PY" - <<'PY'
import importlib.metadata as md
for name in ("nvidia-cuda-runtime", "nvidia-cuda-runtime-cu13", "nvidia-cuda-nvrtc", "nvidia-cuda-nvcc", "ninja"):
    try:
        print(f"{name}=={md.version(name)}")
    except md.PackageNotFoundError:
        pass
PY
} 2>&1 | tee -a "$OUT/summary.txt"

log "1. banner and pytorch-cuda-info (manifest: images/cu130-runtime/manifest.json)"
export PYTORCH_CUDA_MANIFEST="$PWD/images/cu130-runtime/manifest.json"
PYTHONPATH="$PWD" "$PY" -m pytorch_cuda_entry.banner 2>&1 | tee "$OUT/banner.txt" || status=1
PYTHONPATH="$PWD" "$PY" -m pytorch_cuda_entry.info 2>&1 | tee "$OUT/info.txt" || status=1
PYTHONPATH="$PWD" "$PY" -m pytorch_cuda_entry.info --json > "$OUT/info.json" || status=1
grep -q '"native_bf16": true' "$OUT/info.json" && echo "info.json: a GPU with native bf16 is listed" | tee -a "$OUT/summary.txt"

log "2. CUDA extension (examples/cuda_extension) with torch.utils.cpp_extension"
work="$(mktemp -d)"
if [ -z "${CUDA_HOME:-}" ] && ! command -v nvcc >/dev/null; then
  if ls gpu/wheels/*.whl >/dev/null 2>&1; then
    "$PY" -m pip install --no-index --no-deps --quiet --target "$work/wheels" gpu/wheels/*.whl
    site="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    PYTHONPATH="$PWD" "$PY" -m pytorch_cuda_entry.cuda_home "$work/cuda" --nvidia "$work/wheels/nvidia" --nvidia "$site/nvidia" \
      2>&1 | tee -a "$OUT/summary.txt"
    export CUDA_HOME="$work/cuda" PATH="$work/cuda/bin:$work/wheels/bin:$PATH"
  else
    echo "NO NVCC: no \$CUDA_HOME, no nvcc on PATH and no gpu/wheels/*.whl; see the pip download line at the top" \
      | tee -a "$OUT/summary.txt"
  fi
fi
if [ -n "${CUDA_HOME:-}" ] || command -v nvcc >/dev/null; then
  (nvcc --version || "$CUDA_HOME/bin/nvcc" --version) 2>&1 | tail -2 | tee -a "$OUT/summary.txt"
  export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}" EXTENSION_BUILD_DIR="$work/build"
  "$PY" examples/cuda_extension/build_and_run.py 2>&1 | tee "$OUT/cuda-extension.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
else
  status=1
fi

log "3. examples/amp-fp16-bf16.ipynb"
"$PY" examples/run_notebook.py examples/amp-fp16-bf16.ipynb "$OUT/amp-fp16-bf16.ipynb" 2>&1 | tee "$OUT/notebook.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

log "done: exit status $status (outputs in $OUT)"
exit "$status"

# shellcheck shell=bash
# What the gpu/*.sh scripts start with, sourced by each (`. "$(dirname "$0")/common.sh"`); it runs nothing itself.

# gpu_out DEFAULT: OUT (DEFAULT where OUT is unset; with an empty DEFAULT, OUT must be set), created;
# PY: the Python to run ($PYTHON, else python3).
gpu_out() {
  if [ -z "$1" ]; then
    : "${OUT:?set OUT to the directory that comes back}"
  fi
  OUT="${OUT:-$1}"
  mkdir -p "$OUT"
  # shellcheck disable=SC2034  # PY is for the script that sources this file
  PY="${PYTHON:-python3}"
}

# gpu_host PYTHON: the host, for the evidence: each GPU's name, driver and memory, then Python's, torch's and
# CUDA's versions as PYTHON sees them. What nvidia-smi cannot say is printed in its place.
gpu_host() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  "$1" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
}

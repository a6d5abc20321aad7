#!/usr/bin/env bash
# Issue 12 on a GPU host, bare (python3 + torch 2.11 + pytest; no Docker, no network), from a copy of the
# repository root:   OUT=/some/dir gpu/issue-12.sh
# Runs precision-check on the three examples at their GPU size (the factories get device="cuda": compute-bound
# sizes), the CNN at its CPU size too (small: expect "not faster"), and the transformer under torch.compile;
# then the precision-check unit tests. Every run's terminal output is tee'd to $OUT/<name>.txt, its report
# is $OUT/<name>.json, and its exit code goes to $OUT/summary.txt; a failing run does not stop the others.
# About 3 to 4 minutes on an H200 (the compile run is the longest: two torch.compile's of the transformer).
# Look for:
#   transformer       fp32 loss falling steadily (first -> last printed below), "fp32 noise floor" far
#                     below 1%, and a half-precision verdict with its speedup, memory saving and agreement;
#   cnn               a dtype with its numbers; fp16's skipped step(s) and fp32 trained skipping them;
#                     cnn-small: "fp32: not faster (...)";
#   overflow_mlp      "fp16 overflows in `expand` at step 0 (|x| = inf/nan > 65504): use bf16 (N.Nx faster ...)";
#   transformer-compile  "with torch.compile: bf16 runs at N.NNx compiled fp32's speed".
# Exit status: 0 when every run exited 0 and every check at the end held, else 1.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
py="${PYTHON:-python3}"
status=0
started=$SECONDS
: >"$OUT/summary.txt"

run() { # run NAME TIMEOUT_S ARGS...: precision-check ARGS --json $OUT/NAME.json, tee'd to $OUT/NAME.txt
  local name=$1 limit=$2
  shift 2
  printf '\n=== %s: precision-check %s\n' "$name" "$*"
  local began=$SECONDS
  timeout "$limit" "$py" -m precision_check "$@" --json "$OUT/$name.json" 2>&1 | tee "$OUT/$name.txt"
  local rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || status=1
  printf '=== %s: exit %s after %ss\n' "$name" "$rc" "$((SECONDS - began))" | tee -a "$OUT/summary.txt"
}

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  "$py" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'gpu', torch.cuda.get_device_name(0))"
} 2>&1 | tee "$OUT/host.txt"

T=examples/precision_check
run transformer 150 "$T/transformer.py:factory" --steps 80 --dtypes fp32,tf32,fp16,bf16
run cnn 60 "$T/cnn.py:factory" --steps 100
run overflow_mlp 60 "$T/overflow_mlp.py:factory" --steps 50
PRECISION_CHECK_EXAMPLE_SIZE=small run cnn-small 60 "$T/cnn.py:factory" --steps 50
run transformer-compile 200 "$T/transformer.py:factory" --steps 10 --timed-steps 10 --dtypes fp32,bf16 --compile

printf '\n=== unit tests: tests/precision_check (verdicts from recorded runs, contract, report)\n'
timeout 120 "$py" -m pytest -q -p no:cacheprovider tests/precision_check/test_verdict.py \
  tests/precision_check/test_agreement.py tests/precision_check/test_report.py \
  tests/precision_check/test_contract.py tests/precision_check/test_measure.py \
  tests/precision_check/test_skipped_steps.py tests/precision_check/test_same_skips_run.py 2>&1 | tee "$OUT/unit-tests.txt"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || status=1
echo "=== unit tests: exit $rc" | tee -a "$OUT/summary.txt"

printf '\n=== verdicts, loss curves, noise floors and checks\n'
"$py" - "$OUT" <<'PY' 2>&1 | tee -a "$OUT/summary.txt"
import json, pathlib, sys

out = pathlib.Path(sys.argv[1])
failed = []


def check(ok, what):
    print(f"  CHECK {'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        failed.append(what)


docs = {}
for name in ("transformer", "cnn", "overflow_mlp", "cnn-small", "transformer-compile"):
    path = out / f"{name}.json"
    if not path.exists():
        print(f"\n{name}: no report (see {name}.txt)")
        failed.append(f"{name}: no report")
        continue
    doc = docs[name] = json.loads(path.read_text())
    print(f"\n{name}: {doc['verdict']['headline']}")
    fp32 = doc["runs"]["fp32"]["losses"]
    print(f"  fp32 loss: {' '.join(f'{x:.3f}' if x is not None else 'nan' for x in fp32[:3])} ... "
          f"{' '.join(f'{x:.3f}' if x is not None else 'nan' for x in fp32[-3:])}")
    floor = doc.get("noise_floor")
    if floor:
        print(f"  fp32 noise floor: end {floor['rel_diff_final']}, max {floor['rel_diff_max']} "
              f"(step {floor['rel_diff_max_step']}), non-finite {len(floor['nonfinite_steps'])}")
    for dtype, run in doc["runs"].items():
        t, c = run["timing"] or {}, run["compiled"]
        print(
            f"  {dtype}: final loss {run['final_loss']}, rel diff end {run['rel_diff_final']}, "
            f"max {run['rel_diff_max']} (step {run['rel_diff_max_step']}), non-finite {len(run['nonfinite_steps'])}, "
            f"step {t.get('median_ms')} ms, peak {run['peak_mem_mib']} MiB"
            + (f", skipped {len(run['scaler']['skipped_steps'])}, scale {run['scaler']['scale'][-1]}" if run["scaler"] else "")
            + (f", zero grads {run['zero_grads']}" if run["zero_grads"] else "")
            + (f", overflow {run['overflows'][0]}" if run["overflows"] else "")
            + (f", compiled {c['timing']['median_ms']} ms (compile {c['compile_s']:.1f} s)" if c else "")
        )
    print("  numbers:", json.dumps(doc["verdict"]["numbers"]))

print()
if "transformer" in docs:
    doc = docs["transformer"]
    fp32 = doc["runs"]["fp32"]["losses"]
    check(None not in fp32 and sum(fp32[-10:]) < sum(fp32[:10]) - 2.0, "transformer: fp32 loss falls (mean of the last 10 < first 10 - 0.2)")
    check((doc["noise_floor"] or {}).get("rel_diff_max", 1.0) < 0.01, "transformer: fp32 noise floor below 1%")
    check(doc["verdict"]["dtype"] in ("bf16", "fp16"), "transformer: half precision recommended on the H200")
if "overflow_mlp" in docs:
    v = docs["overflow_mlp"]["verdict"]
    check(v["dtype"] == "bf16" and "`expand`" in v["headline"], "overflow_mlp: use bf16, naming `expand`")
for name, doc in docs.items():
    fp16 = doc["runs"].get("fp16")
    # a run that ends non-finite is compared with nothing, so it gets no same-skips curve
    if fp16 and fp16["scaler"] and fp16["scaler"]["skipped_steps"] and fp16["final_loss"] is not None:
        same = fp16["scaler"].get("fp32_same_skips")
        check(same is not None and len(same) == doc["steps"], f"{name}: fp16 skipped steps {fp16['scaler']['skipped_steps'][:5]}, and fp32 skipping them was measured")
        print("   ", next((r for r in doc["verdict"]["reasons"] if r.startswith("fp16")), "no fp16 reason"))
if "cnn-small" in docs:
    check(docs["cnn-small"]["verdict"]["dtype"] == "fp32", "cnn-small: not faster, stays in fp32")
if "transformer-compile" in docs:
    check(any("with torch.compile" in r for r in docs["transformer-compile"]["verdict"]["reasons"]), "transformer-compile: compiled speed reported")
print(f"\nchecks failed: {len(failed)}" + (f" ({'; '.join(failed)})" if failed else ""))
sys.exit(1 if failed else 0)
PY
[ "${PIPESTATUS[0]}" = 0 ] || status=1

echo "=== done in $((SECONDS - started))s: exit status $status (outputs in $OUT)" | tee -a "$OUT/summary.txt"
exit "$status"

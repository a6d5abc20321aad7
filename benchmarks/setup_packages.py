"""The Debian packages README command 1 installs beside those only the tests need (issue 54), side by side.

    .venv/bin/python benchmarks/setup_packages.py [--image pytorch-cuda-base/debian:trixie]

A new machine's setup is mostly apt: scripts/setup.sh (command 1) installs what the build needs, scripts/setup-tests.sh
(command 2) adds what only the tests need. Each set is installed in a fresh container of the project's bootstrapped
Debian base, which has no package lists and no package cache, as a new machine has none: `apt-get update`, then
`apt-get install --no-install-recommends`, each timed, and the download size apt reports. One container per set,
one after the other; both are removed. It prints one JSON object. Measured 2026-12-07 on the 2-core machine, loaded
by other jobs, twice: command 1's set 60 and 61 s (75 MB), the tests' set 148 and 123 s (242 MB); README cites them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

# What the setup scripts install with apt where it is missing (a machine with an engine skips docker.io).
SETS = {
    "command 1 (scripts/setup-docker.sh)": ("docker.io", "mmdebstrap", "uidmap"),
    "tests only (setup-browser.sh, setup-registry.sh)": ("chromium", "skopeo", "docker-registry", "curl"),
}
PROBE = r"""
export DEBIAN_FRONTEND=noninteractive
s=$(date +%s%N); apt-get update -q > /dev/null 2>&1 || exit 3; u=$(date +%s%N)
apt-get install -y -q --no-install-recommends "$@" > /tmp/log 2>&1 || { tail -5 /tmp/log >&2; exit 4; }; e=$(date +%s%N)
printf '{"update_s": %s, "install_s": %s, "download": "%s"}\n' "$(( (u - s) / 1000000 ))e-3" \
  "$(( (e - u) / 1000000 ))e-3" "$(grep -o 'Need to get [^ ]* [kMG]B' /tmp/log | head -1 | cut -d' ' -f4-)"
"""


def measure(image: str, packages: tuple[str, ...]) -> dict[str, object]:
    argv = ["docker", "run", "--rm", image, "bash", "-c", PROBE, "bash", *packages]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        raise SystemExit(f"setup_packages: {' '.join(packages)}: exit {done.returncode}: {done.stderr.strip()}")
    result: dict[str, object] = json.loads(done.stdout)
    return {"packages": list(packages), **result}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--image", default="pytorch-cuda-base/debian:trixie", help="a Debian image with apt sources")
    args = parser.parse_args()
    print(json.dumps({name: measure(args.image, packages) for name, packages in SETS.items()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

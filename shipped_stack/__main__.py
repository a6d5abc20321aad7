"""python -m shipped_stack {lock | pack | plan | receive | versions}: carry the image's stack to a bare GPU host.

Here (the build machine, in the checkout's .venv):
  lock                    resolve shipped_stack/locks/<variant>.py312.lock from the image's lock (same versions)
  pack [--part-mib N]     install that lock with --require-hashes, pack it into parts (kept until the lock changes)
  plan [--part-mib N]     pack if needed, stage one folder per device call, print each call's command and carry
There (the GPU host, its python3, from the checkout's root):
  receive FOLDER          keep the carried part(s) in /var/tmp/pytorch-cuda-stack, check their sha256; when every
                          part is there, make the venv and print its torch, CUDA, cuDNN, NCCL and Triton
  versions                print the current venv's versions (exit 3 when no stack was made on this host)
Exit status: 0 done, 2 bad input here, 3 a part missing or corrupt there (one paragraph; never the host's torch).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from shipped_stack.layout import CURRENT_LINK, VARIANT


def _here(args: argparse.Namespace) -> int:
    from pytorch_cuda.errors import UserError
    from shipped_stack import host_lock, pack, plan
    from shipped_stack.layout import host_lock_path

    def log(line: str) -> None:
        print(f"shipped-stack: {line}", file=sys.stderr, flush=True)

    try:
        if args.command == "lock":
            host_lock_path().write_text(host_lock.resolve(), encoding="utf-8")
            drift = host_lock.drift()
            log(f"wrote {host_lock_path().name}" + (f"; differs from the image's lock: {drift}" if drift else ""))
            return 1 if drift else 0
        if host_lock.stale() or host_lock.drift():
            raise UserError(
                cause=f"{host_lock_path().name} was not resolved from the image's current lock",
                fix="run `python -m shipped_stack lock` and commit it",
            )
        started = time.monotonic()
        index = pack.build(args.part_mib, log)
        log(
            f"pack ready in {time.monotonic() - started:.1f} s: {index.packed_bytes / 2**20:,.0f} MiB in "
            f"{len(index.parts)} parts ({index.unpacked_bytes / 2**20:,.0f} MiB unpacked)"
        )
        if args.command == "plan":
            calls = plan.stage(index, pack.pack_dir(VARIANT))
            print(json.dumps([{"command": c.command, "carry": [c.carry]} for c in calls]))
            log(
                f"{len(calls)} calls, one part each, back to back (the largest carries "
                f"{max(c.travelling_bytes for c in calls) / 2**20:.1f} MiB with the checkout); then, there, run the "
                f"suite with {CURRENT_LINK}/bin/python (gpu/*.sh do by default)"
            )
    except UserError as exc:
        print(f"shipped-stack: {exc.cause}. Fix: {exc.fix}.", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shipped_stack", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("lock")
    for name in ("pack", "plan"):
        sub = commands.add_parser(name)
        sub.add_argument("--part-mib", type=int, default=38, help="each part's size (default 38 MiB)")
    commands.add_parser("receive").add_argument("folder")
    commands.add_parser("versions")
    args = parser.parse_args(argv)
    if args.command in ("receive", "versions"):
        from shipped_stack import receive

        if args.command == "receive":
            return receive.main(args.folder)
        return receive.print_versions()
    return _here(args)


if __name__ == "__main__":
    sys.exit(main())

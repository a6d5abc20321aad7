"""`build.py bump`: move matrix.yaml's pins to the newest versions its policy allows, then re-lock and re-render.

- bump_policy: the `policy:` section of matrix.yaml, parsed into typed rules (and the locks' age gate from it).
  The index's files come from the package_index room.
- resolver: the newest allowed, installable, non-yanked version of one package, and what policy holds back.
- torch_pins: the triton, cuDNN and NCCL versions a torch wheel pins exactly (its core metadata).
- matrix_edit: rewrite scalar pins in matrix.yaml, keeping its comments and layout.
- bump_plan: the whole bump of a matrix: one Move per pin, the bases' digests and Debian's updates.
- apply_plan: that plan written into the checkout (matrix.yaml, images/, the locks), all or nothing; `audit --fix`
  re-locks through it too.
- preview_plan: `bump --dry-run`'s lock changes: apply_plan on a scratch copy, read back as a diff.
- base_digest: a registry base's `digest:` against what its tag serves now (policy `base: follow|pinned`).
- record_debian: `bump --record-debian IMAGE` writes images/debian-<base>.lock (its format: locks/debian_record.py).
- debian_archive: those against the suite, -updates and -security Packages indexes, in Debian's version order;
  check_bases walks each base's record for bump's plan (debian_plan) and audit's findings alike.
- bump_flow: the whole flow, `run_bump(BumpRequest) -> BumpOutcome` (cli/bumping.py only parses and prints),
  and `record_debian` for `--record-debian`.
- plan_output: what bump prints (or its JSON) and its exit status (0 current, 3 rebuild needed).
"""

#!/usr/bin/env bash
# Lint the CI configuration, offline, with the linters pinned in pyproject.toml (.venv):
#   actionlint (shellcheck on PATH checks every run: script) on .github/workflows/*.yml,
#   zizmor (.github/zizmor.yml), offline: every uses: pinned by commit SHA, template injection, excessive
#     permissions, credential persistence, dangerous triggers, Dependabot cooldown...; findings at medium
#     severity or above fail,
#   no $(jq ...) inside another command's arguments (echo "x=$(jq ...)"), where a failing jq goes unnoticed,
#   no workflow a pull request triggers reaches a self-hosted runner (scripts/pr_runner_reach.py): a fork's pull
#     request runs its own copy of the workflow, so runs-on must be a GitHub-hosted image named literally,
#   check-jsonschema: the workflows and .github/dependabot.yml against their vendored schemas,
#   hadolint (.hadolint.yaml) on the rendered images/*/Dockerfile,
#   kubernetes-validate --strict on deploy/k8s/*.yaml (the Kubernetes schemas ship in its wheel).
# Every linter runs; the exit status is 1 when any of them found something.
# `scripts/lint-ci.sh ROOT` lints another tree (the tests break a copy of the workflows on purpose).
# LINT_CI_ONLY="NAME,NAME" runs only the linters whose names (as printed) start with one of those, and says so
# (each of the tests' broken copies needs only the linters it names; every linter takes 0.2-2 s).
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="${1:-$here}"
bin="$here/.venv/bin"
[ -x "$bin/actionlint" ] || { echo "lint-ci: $bin/actionlint is missing; run scripts/setup-python.sh" >&2; exit 2; }
export PATH="$bin:$PATH"  # actionlint finds shellcheck here
cd "$root" || exit 2

failed=()
skipped=()
ran=0
selected() {  # $1: a linter's name; true when LINT_CI_ONLY is unset or names its start
  local only
  [ -z "${LINT_CI_ONLY:-}" ] && return 0
  IFS=, read -ra only <<<"$LINT_CI_ONLY"
  for prefix in "${only[@]}"; do [[ "$1" == "$prefix"* ]] && return 0; done
  return 1
}
run() {
  local name="$1"
  shift
  if ! selected "$name"; then skipped+=("$name"); return 0; fi
  printf 'lint-ci: %s\n' "$name"
  ran=$((ran + 1))
  "$@" || failed+=("$name")
}

shopt -s nullglob
workflows=(.github/workflows/*.yml .github/workflows/*.yaml)
[ ${#workflows[@]} -gt 0 ] || { echo "lint-ci: no workflow under $root/.github/workflows" >&2; exit 2; }
run "actionlint + shellcheck (${#workflows[@]} workflows)" \
  actionlint -config-file .github/actionlint.yaml "${workflows[@]}"
run "zizmor (medium and above)" zizmor --offline --no-progress --min-severity medium "${workflows[@]}" \
  .github/dependabot.yml
hidden_jq() {
  # a $(jq ...) that is not the whole right-hand side of NAME=: its exit status is lost
  if grep -nE '\$\(jq[[:space:]]' "$@" | grep -vE '^[^:]+:[0-9]+:[[:space:]]*[A-Za-z_][A-Za-z0-9_]*=\$\(jq[[:space:]]'; then
    echo "lint-ci: assign each \$(jq ...) to a variable of its own (x=\$(jq ...)), then use \$x: bash -e sees jq's exit status only there"
    return 1
  fi
}
run "jq exit status" hidden_jq "${workflows[@]}"
run "self-hosted reach: pull-request workflows" "$bin/python" "$here/scripts/pr_runner_reach.py" .
run "check-jsonschema: workflows" check-jsonschema --builtin-schema vendor.github-workflows "${workflows[@]}"
run "check-jsonschema: dependabot" check-jsonschema --builtin-schema vendor.dependabot .github/dependabot.yml
run "hadolint: images/*/Dockerfile" hadolint --config .hadolint.yaml images/*/Dockerfile
run "kubernetes-validate: deploy/k8s" kubernetes-validate --strict --quiet deploy/k8s/*.yaml

if [ "$ran" -eq 0 ]; then
  echo "lint-ci: LINT_CI_ONLY=$LINT_CI_ONLY names no linter; the names: $(IFS=,; echo "${skipped[*]}")" >&2
  exit 2
fi
if [ ${#skipped[@]} -gt 0 ]; then
  printf 'lint-ci: not run (LINT_CI_ONLY=%s): %s\n' "$LINT_CI_ONLY" "$(IFS=,; echo "${skipped[*]}")"
fi
if [ ${#failed[@]} -gt 0 ]; then
  printf 'lint-ci: FAILED: %s\n' "$(IFS=,; echo "${failed[*]}")" >&2
  exit 1
fi
if [ ${#skipped[@]} -gt 0 ]; then echo "lint-ci: the selected CI linters passed"; exit 0; fi
echo "lint-ci: all CI linters passed"

#!/usr/bin/env bash
# Push HEAD to a bot's branch (bump/pins, security/fixes) unless someone else has pushed to it, as Renovate does:
#   scripts/push-bot-branch.sh [--check] REMOTE BRANCH BASE BOT_EMAIL
# The branch on REMOTE is fetched; every commit on it that BASE lacks must be the bot's (author and committer
# email BOT_EMAIL), or a clean merge of BASE into it (GitHub's "Update branch" button). Then HEAD replaces it
# with --force-with-lease on the fetched commit, so a push that lands between the fetch and ours is refused too.
# Exit 0: pushed (or the branch did not exist: created); 3: someone else's commits are there (listed on stdout,
# one `SHA author-email subject` a line): nothing was pushed, the workflow comments on the pull request instead;
# 2: bad arguments; any other: git failed. --check pushes nothing and answers the same question (exit 0: the
# branch is absent or only the bot's, so bump.yml may close its overtaken pull request; 3: keep it, as Renovate does).
set -euo pipefail
check=false
if [ "${1:-}" = --check ]; then check=true; shift; fi
[ $# -eq 4 ] || { echo "usage: push-bot-branch.sh [--check] REMOTE BRANCH BASE BOT_EMAIL" >&2; exit 2; }
remote="$1" branch="$2" base="$3" bot="$4"
git fetch --quiet "$remote" "+refs/heads/$base:refs/remotes/$remote/$base"
if ! git fetch --quiet "$remote" "+refs/heads/$branch:refs/remotes/$remote/$branch" 2>/dev/null; then
  if [ "$check" = true ]; then echo "push-bot-branch: $branch does not exist" >&2; exit 0; fi
  git push --quiet "$remote" "HEAD:refs/heads/$branch"
  echo "push-bot-branch: created $branch" >&2
  exit 0
fi
lease="$(git rev-parse "refs/remotes/$remote/$branch")"
# GitHub's "Update branch" (a clean merge of BASE into the branch, by whoever pressed it) adds nothing of its own:
# a merge whose second parent is on BASE and whose tree is what merging its parents gives. The bot goes on over it.
update_merge() {
  local parents tree
  read -r -a parents <<< "$(git rev-list --parents -n 1 "$1")"
  [ "${#parents[@]}" -eq 3 ] || return 1
  git merge-base --is-ancestor "${parents[2]}" "refs/remotes/$remote/$base" || return 1
  tree="$(git merge-tree --write-tree "${parents[1]}" "${parents[2]}" 2> /dev/null)" || return 1
  [ "$tree" = "$(git rev-parse "$1^{tree}")" ]
}
others=""
while IFS=$'\t' read -r sha author committer subject; do
  [ -n "$sha" ] || continue
  if [ "$author" = "$bot" ] && [ "$committer" = "$bot" ]; then continue; fi
  if update_merge "$sha"; then
    echo "push-bot-branch: ${sha:0:12} is an update from $base (\"Update branch\"); going on over it" >&2
    continue
  fi
  others+="$sha $author $subject"$'\n'
done < <(git log --format='%H%x09%ae%x09%ce%x09%s' "refs/remotes/$remote/$base..$lease")
others="${others%$'\n'}"
if [ -n "$others" ]; then
  echo "$others"
  echo "push-bot-branch: $branch has commits by someone else; not pushing over them" >&2
  exit 3
fi
if [ "$check" = true ]; then echo "push-bot-branch: $branch has only the bot's commits" >&2; exit 0; fi
git push --quiet --force-with-lease="refs/heads/$branch:$lease" "$remote" "HEAD:refs/heads/$branch"
echo "push-bot-branch: replaced $branch (was ${lease:0:12})" >&2

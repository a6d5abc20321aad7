"""The bot of bump.yml and security.yml, in Python (`build.py bot`; the workflows only call it).

- github_rest: the few GitHub REST calls it makes (pull requests, comments, labels, an issue, a workflow's runs).
- branch_guard: push to a bot branch only while no one else's commits are on it (as Renovate does).
- bot_pull_request: commit on the bot's branch, push through the guard, open or update the pull request with its
  labels, or comment when blocked; close an overtaken pull request unless someone else's work is on it.
- bump_bot: bump.yml's steps: the planning run, a group's pull request, closing overtaken groups, the GPU fleet's
  one comment, the dashboard's failed group runs.
- security_bot: security.yml's issue per advisory without a fixed release.
"""

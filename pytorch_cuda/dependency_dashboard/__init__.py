"""The dependency dashboard that acts, as Renovate's does: bump's dashboard (pytorch_cuda/bump/dashboard.py: pending,
held back, waiting, unreachable, failed, and its rebase, approve and skip-age boxes) plus what makes it start work.

- group_boxes: one box per update group (security, major, minor, patch) and one for lock maintenance, shown on
  every render; a ticked box asks for that group's run. The bot's open pull requests, whatever their branch.
- page: the whole issue body (also when the bump's JSON is missing because its job failed), and every request of
  its ticked boxes, as the JSON that dashboard.yml dispatches from.
"""

"""The precision support report on the host: report.html, report.md and report.json from result files.

``python build.py report RESULTS.json [...] --out DIR``. Reads every conformance results file through
pytorch_cuda_contract.results_file and computes the recommendation with
pytorch_cuda_contract.advice. A precision-check
report (``precision-check ... --json``) among them becomes its own page, precision-check-<name>.html, which shows
the lines precision-check judged and wrote into it (pytorch_cuda_contract.precision_check_file reads them).
"""

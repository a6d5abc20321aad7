"""`build.py site --store STORE --out DIR`: the static site of a results store (pytorch_cuda/run_store).

A home table image x GPU (recommendation, GEMM and AMP speed-ups, last run; failures and regressions marked and
linked), a page per GPU (the article's claims, regressions beyond each history's learned noise, history charts with the
noise band, the runs), per image and per run, 'can I use bf16 on X?' for GPUs never measured (expected, not
measured), and each cell's JSON. Plain HTML and inline SVG: no JavaScript.
"""

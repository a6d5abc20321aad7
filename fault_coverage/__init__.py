"""Fault coverage of the conformance suite: run it under a catalogue of real faults and legitimate controls on one
GPU host, and write the fault x check matrix (JSON and Markdown) with the coverage figure.

Standard library only (it runs bare on a GPU host: python3, torch, pytest). It never imports the suite: it runs
``python3 -m pytest conformance`` as a user would and reads the results files through ``pytorch_cuda_contract``.

- ``catalogue``: the faults (what real failure each models, how it is injected, which checks it must trip) and the
  controls (legitimate setups that must trip nothing);
- ``injection``: turns a case into a command, an environment and the helpers it needs (a sitecustomize, a copied
  library, a busy GPU, a small /dev/shm, another uid);
- ``runner``: runs the cases, one results file each;
- ``matrix``: the fault x check matrix and the coverage from those files;
- ``patches/``: the sitecustomize bodies of the faults injected by patching a torch function at interpreter start.

Usage: ``python3 -m fault_coverage --help``.
"""

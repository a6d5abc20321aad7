# The Dockerfile a user writes by hand, for comparison (benchmarks/compare.py builds it):
# one stage, one `pip install` with a cache mount, on the same base with the same packages.
ARG BASE_IMAGE=pytorch-cuda-base/debian:trixie
FROM ${BASE_IMAGE}
ARG REQUIREMENTS=images/cu128-runtime/requirements.txt
ENV DEBIAN_FRONTEND=noninteractive PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN apt-get update && apt-get install -y --no-install-recommends \
      ca-certificates g++ gcc libc6-dev python3 python3-dev python3-venv tini \
 && rm -rf /var/lib/apt/lists/*
COPY ${REQUIREMENTS} /tmp/requirements.txt
RUN --mount=type=cache,id=bench-naive-pip,target=/root/.cache/pip \
    --mount=type=secret,id=pip_ca \
    if [ -s /run/secrets/pip_ca ]; then export PIP_CERT=/run/secrets/pip_ca; fi \
 && python3 -m venv /opt/venv && pip install -r /tmp/requirements.txt
COPY conformance /opt/conformance

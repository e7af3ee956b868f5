#!/usr/bin/env bash
# Set everything up on a fresh machine and diagnose a bundled real failure.
# Creates .venv (no TensorFlow needed to analyse logs), then runs
# `mwms-doctor analyze` on fixtures/runs/oom/logs and writes reports/.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e .
echo "== mwms-doctor analyze fixtures/runs/oom/logs"
set +e
.venv/bin/mwms-doctor analyze fixtures/runs/oom/logs --out reports
rc=$?
set -e
# analyze exits 1 when it finds a failure, which is what this example holds.
if [ "$rc" -ne 1 ]; then
  echo "demo: expected the bundled failure to be found (exit 1), got exit $rc" >&2
  exit 1
fi
echo "== open reports/oom-logs.html in a browser"

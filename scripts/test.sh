#!/usr/bin/env bash
# Run the whole test suite, end-to-end tests with real TensorFlow included.
# Installs what it needs into .venv (TensorFlow 2.21 CPU + tf-keras: ~1 GB).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev,tf]"
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  # Headless Chromium for the tests that look at reports as a browser lays them out.
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing chromium and chromium-driver (Debian)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1 \
      || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium chromium-driver >/dev/null; }
  fi
fi
echo "== ruff"
.venv/bin/ruff check analyzer rules tests fixtures/harness benchmarks
echo "== mypy (strict)"
bash scripts/typecheck.sh
echo "== pytest"
export MWMS_REQUIRE_E2E=1   # a missing TensorFlow fails the run instead of skipping e2e
# A missing browser fails the run where one could be installed (root with apt-get).
if command -v chromium >/dev/null || { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }; then
  export MWMS_REQUIRE_BROWSER=1
fi
set +e
.venv/bin/python -m pytest -ra --durations=10 "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "test.sh: pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit "$rc"

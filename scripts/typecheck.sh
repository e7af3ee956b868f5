#!/usr/bin/env bash
# mypy --strict over the whole package, as it is installed.
# The package is laid out by pyproject's package-dir mapping (analyzer/ is
# mwms_doctor, rules/ is mwms_doctor.rules), which mypy cannot follow through
# an editable install's import hook. So the installed layout is rebuilt from
# symbolic links under build/typecheck/ and mypy reads that: every module is
# checked under its real name, with the settings in pyproject.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
MYPY=${MYPY:-.venv/bin/mypy}
tree=build/typecheck/mwms_doctor
rm -rf build/typecheck
mkdir -p "$tree"
for f in analyzer/*; do
  case "$f" in analyzer/__pycache__) continue ;; esac
  ln -s "$PWD/$f" "$tree/"
done
ln -s "$PWD/rules" "$tree/rules"
"$MYPY" "$tree"

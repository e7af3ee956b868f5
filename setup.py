"""The package list, found rather than kept by hand: analyzer/ is installed as
mwms_doctor and rules/ as mwms_doctor.rules (pyproject.toml's package-dir),
with every subpackage under them (a new rule family is found by itself).
Everything else about the package is in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=[
        "mwms_doctor",
        *(f"mwms_doctor.{p}" for p in find_packages("analyzer")),
        "mwms_doctor.rules",
        *(f"mwms_doctor.rules.{p}" for p in find_packages("rules")),
    ]
)

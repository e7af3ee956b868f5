"""The wheel holds one import package, every rule family and the report's data."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from .paths import ROOT


def test_wheel_contents(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("mwms_doctor-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"mwms_doctor"}
    assert "mwms_doctor/report/templates/report.html.j2" in names
    assert "mwms_doctor/report/report.schema.json" in names
    # Every module, found without a hand-kept list of packages.
    for folder, package in (("analyzer", "mwms_doctor"), ("rules", "mwms_doctor/rules")):
        for module in (ROOT / folder).rglob("*.py"):
            assert f"{package}/{module.relative_to(ROOT / folder).as_posix()}" in names
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    runtime = [
        line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    assert not any("tensorflow" in line for line in runtime), runtime

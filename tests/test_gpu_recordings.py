"""Real GPU failure text recorded on an NVIDIA H100 (fixtures/evidence/gpu_h100,
by fixtures/harness/gpu/record_gpu.sh). TensorFlow could not be installed on
that machine, so these are the emitters TensorFlow shares, driven by other
frameworks: the TSL BFC allocator through JAX's GPU client, and NCCL 2.28
through torch.distributed. Each is read as a worker's log would be."""

from __future__ import annotations

import shutil
from pathlib import Path

from mwms_doctor.ingest.lines import parse_header
from mwms_doctor.pipeline import run_job

from .paths import FIXTURES

GPU = FIXTURES / "evidence" / "gpu_h100"


def test_nccls_own_header_keeps_its_words() -> None:
    # NCCL's WARN header (src/debug.cc): "[time] host:pid:tid [cudaDev] file:line NCCL WARN msg".
    line = next(ln for ln in (GPU / "nccl_dup-rank0.log").read_text().splitlines() if "NCCL WARN" in ln)
    h = parse_header(line, 2026)
    assert h is not None
    assert h.msg.startswith("NCCL WARN Duplicate GPU detected : rank 0 and rank 1")
    assert (h.severity, h.origin) == ("warning", "init.cc:904")
    assert h.ts is not None and h.ts.isoformat().startswith("2026-11-27T18:54:59")


def test_two_ranks_on_one_gpu_is_an_nccl_error_in_nccls_words(tmp_path: Path) -> None:
    for r in (0, 1):
        shutil.copy(GPU / f"nccl_dup-rank{r}.log", tmp_path / f"rank{r}.log")
    v = run_job(tmp_path, formats=()).model.verdict
    assert v["class"] == "nccl_error"
    assert "Duplicate GPU detected" in v["summary"]


def test_a_device_allocation_failure_in_the_bfc_allocator_is_an_oom(tmp_path: Path) -> None:
    shutil.copy(GPU / "bfc_oom.log", tmp_path / "worker-0.log")
    v = run_job(tmp_path, formats=()).model.verdict
    assert (v["class"], v["root_workers"]) == ("oom", ["worker:0"])
    assert "GPU_0_bfc" in v["summary"]

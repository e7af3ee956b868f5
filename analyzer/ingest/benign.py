"""Lines printed at warning or error level that are known to be harmless.

One place for all of them, each with why it is harmless and where that was
seen or stated. A record that matches one is kept (it is evidence that the
worker was alive) and marked ``benign``: rules never count it as a failure,
and the unknown verdict never lists it as a worker's first error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Benign:
    kind: str
    pattern: re.Pattern[str]
    reason: str
    source: str
    sig: str  # for the scanner (see templates.Template.sig)


def _b(kind: str, pattern: str, reason: str, source: str, sig: str) -> Benign:
    return Benign(kind, re.compile(pattern), reason, source, sig)


BENIGN: tuple[Benign, ...] = (
    _b(
        "benign.plugin_factory",
        r"Unable to register (?:cuDNN|cuFFT|cuBLAS) factory: Attempting to register factory for plugin",
        "TF 2.14+ registers the CUDA plugins twice when both TF and XLA load them; E-level, harmless",
        "tensorflow/tensorflow#62075 (maintainers: a known, harmless log message)",
        "Unable to register cu(DNN|FFT|BLAS) factory",
    ),
    _b(
        "benign.end_of_sequence_rendezvous",
        r"Local rendezvous is aborting with status: OUT_OF_RANGE: End of sequence"
        r"|\[_Derived_\]\s*OUT_OF_RANGE: End of sequence",
        "TF 2.10+ logs the end of a finite dataset at every epoch end while training goes on",
        "tensorflow/tensorflow#62963 (the W/I-level line at epoch ends; training continues)",
        "Local rendezvous is aborting with status: OUT_OF_RANGE|OUT_OF_RANGE: End of sequence",
    ),
    _b(
        "benign.cpu_instructions",
        r"This TensorFlow binary is optimized to use available CPU instructions"
        r"|Your CPU supports instructions that this TensorFlow binary was not compiled to use"
        r"|oneDNN custom operations are on",
        "build notices printed at every start",
        "TensorFlow source code (cpu_feature_guard.cc, util.cc)",
        "binary is optimized to use available CPU|Your CPU supports instructions|oneDNN custom operations",
    ),
    _b(
        "benign.tensorrt_missing",
        r"TF-TRT Warning: Could not find TensorRT",
        "TensorRT is optional; TF warns when it is absent",
        "tensorflow/tensorflow#61468",
        "TF-TRT Warning: Could not find TensorRT",
    ),
    _b(
        "benign.cuda_library_missing",
        r"Could not load dynamic library '(?:libcudart|libcublas|libcudnn|libcufft|libcurand|libcusolver"
        r"|libcusparse|libnvinfer|libnvinfer_plugin)[^']*'"
        r"|Cannot dlopen some GPU libraries"
        r"|Could not find cuda drivers on your machine, GPU will not be used",
        "on a machine without a GPU (or where none is meant to be used) TF falls back to the CPU",
        "TF 2.x dso_loader.cc messages; harmless unless a GPU was expected (then the job runs slowly, not fails)",
        "Could not load dynamic library|Cannot dlopen some GPU libraries|Could not find cuda drivers",
    ),
    # A structured log entry pasted field by field (Cloud Logging, a JSON
    # logger): its level field says how the entry was filed (stderr is filed
    # as ERROR), not what happened; what happened is its message field, which
    # is read on its own line.
    _b(
        "benign.cloud_logging_severity",
        r'^\s*"?(?:severity|levelname|levelName|level|log_?level)"?\s*[:=]\s*"?\**'
        r'(?:ERROR|WARNING|WARN|CRITICAL|FATAL)\**"?,?\s*$',
        "a log entry's level field alone: Cloud Logging and JSON loggers file whatever a process writes "
        "to stderr as ERROR (TF logs INFO there); the entry's message says what happened",
        "tensorflow/tensorflow#48010 (an ERROR entry every step whose payload is an INFO line; "
        "its severity and jsonPayload.levelname fields both say ERROR)",
        '(severity|levelname|levelName|level|log_?level)"? *[:=] *"?[*]*(ERROR|WARNING|WARN|CRITICAL|FATAL)',
    ),
    _b(
        "benign.cuinit",
        r"failed call to cuInit",
        "cuInit fails on a machine without a GPU; TF then runs on the CPU",
        "recorded on this project's CPU machines (TF 2.21)",
        "failed call to cuInit",
    ),
)


def benign_kind(text: str) -> str | None:
    """The benign entry a record matches, if any."""
    for b in BENIGN:
        if b.pattern.search(text):
            return b.kind
    return None


REASONS = {b.kind: b.reason for b in BENIGN}

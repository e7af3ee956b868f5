"""Batch triage: many failed jobs in one run, one index page, one table: what
``mwms-doctor triage`` and ``mwms_doctor.triage()`` run (the package is named
apart from that function, which an import of a ``triage`` package would hide).

Each job goes through the one-job pipeline (``pipeline.run_job``), the very
same one ``analyze`` uses, so a job's row says what ``analyze`` of it alone
says. Around it, triage adds:

* finding the jobs under one or more roots (by default each immediate
  subfolder of a root is one job, whatever it holds; ``depth`` goes deeper);
* a process pool over jobs (``jobs``; one process per core by default): the
  interpreter and the compiled matchers are paid once per process, not once
  per job; rows come back in the order of the jobs, whatever the pool did;
* per job, its reports under ``jobs/<unique name>/``, written as it finishes;
* a recurring-failure *signature*: the class, the root's role and the masked
  template of the root's first error; jobs sharing one are one cluster;
* ``triage.jsonl`` and ``triage.parquet`` (schema ``TRIAGE_SCHEMA``,
  versioned) and ``index.html``;
* with ``since`` (a previous triage's folder), each cluster is new,
  recurring, or gone.

A job that cannot be analysed is a row with ``status: error`` and the reason;
the run goes on.
"""

from __future__ import annotations

# find.py finds the jobs, run.py runs them (a process pool or Dask), group.py
# says what recurs, table.py writes the rows; the page is report/triage.py.
from .find import JobRef, find_jobs, is_url
from .group import signature
from .history import clusters
from .run import run_triage, triage_one
from .table import COLUMNS, TRIAGE_SCHEMA_VERSION, arrow_table

__all__ = [
    "COLUMNS",
    "TRIAGE_SCHEMA_VERSION",
    "JobRef",
    "arrow_table",
    "clusters",
    "find_jobs",
    "is_url",
    "run_triage",
    "signature",
    "triage_one",
]

"""JUnit XML for CI: one test case per job, so Jenkins, GitLab and GitHub
Actions show a night's failures in their own test views.

A failed job is a ``<failure>`` (its class as the type, its verdict as the
message, its signature and report in the text); a job that could not be
analysed is an ``<error>``; a warning passes with its verdict in
``<system-out>``; a healthy job passes.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any


def junit_xml(rows: list[dict[str, Any]], name: str = "mwms-doctor triage") -> str:
    failures = sum(r["status"] == "failure" for r in rows)
    errors = sum(r["status"] == "error" for r in rows)
    suites = ET.Element(
        "testsuites", name=name, tests=str(len(rows)), failures=str(failures), errors=str(errors)
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=name,
        tests=str(len(rows)),
        failures=str(failures),
        errors=str(errors),
        skipped="0",
        time="0",
    )
    for r in rows:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"mwms-doctor.{r['class'] or r['status']}",
            name=str(r["job"]),
            time="0",
        )
        detail = "\n".join(
            x
            for x in (
                f"signature: {r['signature']}" if r.get("signature") else "",
                f"root workers: {', '.join(r['root_workers'])}" if r.get("root_workers") else "",
                f"report: {r['report']}" if r.get("report") else "",
            )
            if x
        )
        if r["status"] == "failure":
            el = ET.SubElement(case, "failure", message=str(r["summary"])[:500], type=str(r["class"]))
            el.text = detail
        elif r["status"] == "error":
            el = ET.SubElement(case, "error", message=str(r["error"])[:500], type="could not be analysed")
        elif r["status"] == "warning":
            out = ET.SubElement(case, "system-out")
            out.text = f"warning ({r['class']}): {r['summary']}\n{detail}"
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"

"""How much of each emitter's error and warning vocabulary the catalogue recognises.

    python scripts/coverage.py                      # the table, from fixtures/emitters/*.jsonl
    python scripts/coverage.py --markdown           # the same table as Markdown (README)
    python scripts/coverage.py --unrecognised NAME  # the format strings of one scope it does not recognise
    python scripts/coverage.py extract              # re-extract the format strings from the sources

``extract`` reads each emitter's source (mirrors of public repositories under
``$MIRRORS``, default /work/.mirror, at the commits pinned in SCOPES, and the
installed TensorFlow wheel's Python files) and writes, per scope, every error
and warning format string it prints: C++ ``errors::X(...)``, ``absl::XError``,
``LOG(ERROR|WARNING|FATAL) << ...``, NCCL's ``WARN(...)``, Python ``raise
...Error(...)`` and ``logging.warning/error(...)``. A literal's parts are
kept, every computed part becomes ``{}``. The files are committed
(fixtures/emitters), so the table needs no sources; the next TF release is one
re-run of ``extract`` with a scope added.

The table fills each format string's gaps (``{}``) with each of FILLERS in
turn (a name, a task, a number, a status) and classifies its words with the catalogue exactly as a log record's are classified. It is
*recognised by its words* when a message of the catalogue matches them (the
status code, log level or ``NCCL WARN`` it is printed with set apart). Every
other one is still read as an error or
warning of its level, and listed among the errors no rule explains; its
meaning is not pinned.

Many format strings in scope are a server's own argument checks that no
training job prints; the count is over all of them, unweighted.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fixtures" / "emitters"
TABLE = ROOT / "analyzer" / "ingest" / "emitted_table.py"
MIRRORS = Path(os.environ.get("MIRRORS", "/work/.mirror"))


@dataclass(frozen=True)
class Scope:
    name: str
    emitter: str
    eras: str
    repository: str  # owner/name, or "wheel:<package>" for an installed package
    commit: str  # in the mirror; "" for an installed package
    paths: str  # regex over the file paths in scope
    language: str  # cpp | py | nccl


SCOPES = (
    Scope(
        "tf1-runtime",
        "TensorFlow 1.15 (C++): distributed runtime, collectives, BFC allocator",
        "TF 1.15",
        "fqararyah/tf_15",
        "afbc8a3829d69648b04087f170b248aff640e1aa",
        r"^tensorflow/core/(distributed_runtime/.*|common_runtime/(base_collective_executor|collective_\w+"
        r"|ring_\w+|hierarchical_tree_broadcaster|bfc_allocator)|kernels/collective_ops)\.cc$",
        "cpp",
    ),
    Scope(
        "tsl-runtime",
        "TensorFlow 2.x (TSL, C++): coordination service, gRPC runtime, preemption, BFC allocator",
        "TF 2.13-2.16 (TSL before its move into XLA)",
        "google/tsl",
        "5410c9b0",
        r"^tsl/(distributed_runtime/.*|framework/bfc_allocator)\.cc$",
        "cpp",
    ),
    Scope(
        "tf2-distribute",
        "TensorFlow 2.21 (Python): tf.distribute for multi-worker, its cluster resolver and failure handling",
        "TF 2.21",
        "wheel:tensorflow",
        "",
        r"^python/distribute/(collective_all_reduce_strategy|multi_worker_util|cross_device_ops"
        r"|cross_device_utils|collective_util|input_lib|distribute_lib|distribute_coordinator\w*"
        r"|cluster_resolver/tfconfig_cluster_resolver|failure_handling/\w+)\.py$",
        "py",
    ),
    Scope(
        "tf-keras",
        "tf-keras (Python): callbacks and distribution",
        "tf-keras 2.x",
        "keras-team/tf-keras",
        "dd0a7237b9b24132dba3f491f3c84b0094ab796e",
        r"^tf_keras/(src/)?(callbacks|distribute/\w+)\.py$",
        "py",
    ),
    Scope(
        "horovod",
        "Horovod (C++): its core (controller, operations, stall inspector)",
        "Horovod 0.2x",
        "horovod/horovod",
        "2626dc87a3a8eb8fb7d2216198ce45bce0f9e65a",
        r"^horovod/common/\w+\.cc$",
        "cpp",
    ),
    Scope(
        "nccl",
        "NCCL: its WARN messages",
        "NCCL 2.x",
        "NVIDIA/nccl",
        "5067397c2676d5aed50042fc39e5c8ee96eb0027",
        r"^src/.*\.(cc|h)$",
        "nccl",
    ),
)

_TEST = re.compile(r"(_test|_benchmark|test_util|testlib|_testing)\.(cc|py)$|/tests?/")


# --- extraction --------------------------------------------------------------------------


def _files(scope: Scope) -> Iterator[tuple[str, str]]:
    """(path, text) of the files in scope."""
    pat = re.compile(scope.paths)
    if scope.repository.startswith("wheel:"):
        import importlib.util

        spec = importlib.util.find_spec(scope.repository.split(":", 1)[1])
        assert spec is not None and spec.submodule_search_locations, scope.repository
        base = Path(next(iter(spec.submodule_search_locations)))
        for p in sorted(base.rglob("*.py")):
            rel = p.relative_to(base).as_posix()
            if pat.search(rel) and not _TEST.search(rel):
                yield rel, p.read_text(errors="replace")
        return
    git = MIRRORS / scope.repository.replace("/", "+") / "repo"
    names = subprocess.run(
        ["git", "-C", str(git), "ls-tree", "-r", "--name-only", scope.commit],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\n")
    for rel in names:
        if rel and pat.search(rel) and not _TEST.search(rel):
            blob = subprocess.run(
                ["git", "-C", str(git), "show", f"{scope.commit}:{rel}"], check=True, capture_output=True
            )
            yield rel, blob.stdout.decode(errors="replace")


_CPP_STATUS = re.compile(
    r"\b(?:errors::|absl::|tsl::errors::|::tensorflow::errors::)"
    r"(Aborted|Unavailable|Internal|InvalidArgument|FailedPrecondition|DeadlineExceeded|NotFound"
    r"|AlreadyExists|Cancelled|ResourceExhausted|Unknown|OutOfRange|Unimplemented|DataLoss"
    r"|PermissionDenied|Unauthenticated)(?:Error)?\("
)
_HVD_STATUS = re.compile(r"\bStatus::(\w+)\(")
_CPP_LOG = re.compile(r"\bLOG(?:_EVERY_N(?:_SEC)?|_FIRST_N)?\((ERROR|WARNING|FATAL)(?:,[^)]*)?\)\s*<<")
_NCCL_WARN = re.compile(r"\bWARN\(")
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_PRINTF = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t|L|PRI\w+)?[sdiufgxXpceEGlz]")


def _balanced(text: str, start: int) -> tuple[str, int]:
    """The text inside the parenthesis opened just before ``start`` and the index after it."""
    depth, i, n = 1, start, len(text)
    while i < n and depth:
        c = text[i]
        if c == '"':
            m = _STRING.match(text, i)
            i = m.end() if m else i + 1
            continue
        if c == "'" and i + 2 < n:
            j = text.find("'", i + 1 + (text[i + 1] == "\\"))
            i = j + 1 if 0 < j - i <= 4 else i + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        i += 1
    return text[start : i - 1], i


def _split_top(args: str, sep: str = ",") -> list[str]:
    out, depth, cur, i = [], 0, [], 0
    while i < len(args):
        c = args[i]
        if c == '"':
            m = _STRING.match(args, i)
            j = m.end() if m else i + 1
            cur.append(args[i:j])
            i = j
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if depth == 0 and args.startswith(sep, i):
            out.append("".join(cur))
            cur = []
            i += len(sep)
            continue
        cur.append(c)
        i += 1
    out.append("".join(cur))
    return [a.strip() for a in out]


def _unescape(s: str) -> str:
    return s.replace('\\"', '"').replace("\\n", " ").replace("\\t", " ").replace("\\\\", "\\")


def _cpp_arg(arg: str) -> str:
    """One argument of a StrCat-like call (or one << operand) as text: a literal's
    words, a nested StrCat's or StrFormat's, else ``{}``."""
    arg = arg.strip()
    lits = _STRING.findall(arg)
    if lits and _STRING.sub("", arg).strip() in ("", "_s"):
        return _PRINTF.sub("{}", "".join(_unescape(x) for x in lits))
    m = re.match(
        r"(?:absl::|strings::|tsl::strings::|::tensorflow::strings::)?(StrCat|StrFormat|Printf|StrAppend)\(",
        arg,
    )
    if m:
        inner, _ = _balanced(arg, m.end())
        parts = _split_top(inner)
        if m.group(1) in ("StrFormat", "Printf"):
            return _cpp_arg(parts[0]) if parts else "{}"
        return "".join(_cpp_arg(p) for p in parts)
    return "{}"


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _cpp(rel: str, text: str, horovod: bool) -> Iterator[dict[str, object]]:
    text = re.sub(r"//[^\n]*", "", text)
    for m in _CPP_STATUS.finditer(text):
        inner, _ = _balanced(text, m.end())
        words = "".join(_cpp_arg(a) for a in _split_top(inner))
        yield {"level": m.group(1), "text": words, "file": rel, "line": _line_of(text, m.start())}
    if horovod:
        for m in _HVD_STATUS.finditer(text):
            if m.group(1) in ("OK", "InProgress"):
                continue
            inner, _ = _balanced(text, m.end())
            words = "".join(_cpp_arg(a) for a in _split_top(inner))
            yield {"level": m.group(1), "text": words, "file": rel, "line": _line_of(text, m.start())}
    for m in _CPP_LOG.finditer(text):
        end = text.find(";", m.end())
        # a ';' inside a string literal does not end the statement
        while end != -1 and text.count('"', m.end(), end) % 2:
            end = text.find(";", end + 1)
        body = text[m.end() : end]
        words = "".join(_cpp_arg(a) for a in _split_top(body, "<<"))
        yield {"level": m.group(1), "text": words, "file": rel, "line": _line_of(text, m.start())}


def _nccl(rel: str, text: str) -> Iterator[dict[str, object]]:
    for m in _NCCL_WARN.finditer(text):
        if text[max(0, m.start() - 8) : m.start()].rstrip().endswith("define"):
            continue
        inner, _ = _balanced(text, m.end())
        parts = _split_top(inner)
        if parts and _STRING.match(parts[0].strip()):
            words = _PRINTF.sub("{}", "".join(_unescape(x) for x in _STRING.findall(parts[0])))
            yield {"level": "WARN", "text": words, "file": rel, "line": _line_of(text, m.start())}


_PY_LOG = {"warning", "warn", "error", "fatal", "exception", "critical"}


def _py_text(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_py_text(v) if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _py_text(node.left) + _py_text(node.right)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _PRINTF.sub("{}", re.sub(r"%\(\w+\)", "%", _py_text(node.left)))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return re.sub(r"\{[^{}]*\}", "{}", _py_text(node.func.value))
    return "{}"


def _py(rel: str, text: str) -> Iterator[dict[str, object]]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            f = node.exc.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name.endswith(("Error", "Exception")) or name in ("StopIteration",):
                yield {"level": name, "text": _py_text(node.exc.args[0]), "file": rel, "line": node.lineno}
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _PY_LOG
            and node.args
            and "log" in ast.unparse(node.func.value).lower()
        ):
            level = "warning" if node.func.attr == "warn" else node.func.attr
            # logging formats its arguments into the message lazily, with %
            text = _PRINTF.sub("{}", re.sub(r"%\(\w+\)", "%", _py_text(node.args[0])))
            yield {"level": level, "text": text, "file": rel, "line": node.lineno}


def extract(scope: Scope) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    seen: set[tuple[str, str]] = set()
    for rel, text in _files(scope):
        if scope.language == "py":
            found = _py(rel, text)
        elif scope.language == "nccl":
            found = _nccl(rel, text)
        else:
            found = _cpp(rel, text, horovod=scope.name == "horovod")
        for row in found:
            words = re.sub(r"\s+", " ", str(row["text"])).strip()
            # a message with no words of its own ("{}", a bare variable) says nothing to match
            if len(re.sub(r"\{\}|[^A-Za-z]", "", words)) < 6 or (row["level"], words) in seen:
                continue
            seen.add((str(row["level"]), words))
            out.append({**row, "text": words})
    return out


# --- what each format string means ---------------------------------------------------------
#
# Each format string in scope gets a meaning, read from its words, its status
# code or level and its source file: a verdict class it points at, or a role
# (a report of an earlier error, shutdown noise, the user's misuse of an API,
# an internal error, a hint). The first rule that matches decides. A format
# string with too few literal words to be told apart in a log (``Shutdown``,
# ``worker {}``) gets none. ``generate`` writes the result to
# analyzer/ingest/emitted_table.py, which the analyzer reads.

# Roles that are not verdict classes.
ROLES = {
    "echo": "reports an error that happened earlier or elsewhere (a peer's, the leader's): not a root cause",
    "shutdown": "printed while the runtime shuts down or cleans up: harmless after the job finished",
    "misuse": "a TF or Keras API called with arguments it refuses: the script's own bug",
    "internal": "an internal check of the runtime failed: a TF bug or a corrupted state, no class of its own",
    "runtime": "the runtime refused or failed a request: an error from TF, of no pinned class",
    "hint": "a warning about configuration or performance: no failure by itself",
}

_PY_EXC = r"(?:\w*Error|\w*Exception)"
# (meaning, words, file, levels): words and file are regexes (searched), levels a regex (full match).
MEANINGS: tuple[tuple[str, str, str, str], ...] = (
    # A peer that died or restarted.
    (
        "peer_died",
        r"heartbeat timeout|remote task has (?:failed|restarted)|Incarnation ID mismatch"
        r"|leader has restarted|worker (?:was|just) restarted|master has restarted|Connection closed by remote peer"
        r"|context was GC'd|does not seem to exist|disconnected task",
        "",
        "",
    ),
    # Reports of an error that happened before or elsewhere.
    (
        "echo",
        r"earlier error|Check the (?:task |task leader's |leader's )?logs|only expected if one of the tasks"
        r"|Encountered another error|Ignoring an error|set to ERROR|already in error|Barrier failed from a"
        r"|Aborting Ring|Bad status from|RPC failed with status|Too many retries|is cancelled|was cancelled"
        r"|Cancelling|returned error",
        "",
        "",
    ),
    (
        "shutdown",
        r"shutting down|is being deleted|Shutdown is triggered|Session is closed|shutdown|Cleanup"
        r"|already disconnected|not connected",
        "",
        "",
    ),
    ("preemption", r"[Pp]reempt", r"preemption|failure_handling", r"(?!NotImplementedError|warning).*"),
    (
        "hint",
        r"Garbage collection: deallocate|deprecated|will be ignored|fallback to|not using nccl"
        r"|is not supported in TensorFlow 2|not configured at program startup|does not support usage",
        "",
        "",
    ),
    ("version_skew", r"Mismatched \w+ version|version mismatch|has incompatible version", "", ""),
    (
        "tf_config_mismatch",
        r"TF_CONFIG|cluster_spec|ClusterSpec|ClusterDef|cluster specification|task_type"
        r"|task_id|task index|host-port pair|Duplicate job ID|not in the cluster|Unexpected task"
        r"|not defined in sparse job|Invalid target|Replica ID must be 0|at most one '|multiple matching tasks"
        r"|`chief` or `worker`|`worker`, `chief`|Could not parse worker name|Incomplete worker name|valid leader"
        r"|Could not find worker with target|non-participating task|Conflicting tasks|Disallowed task type"
        r"|exceeds the maximum id|Duplicate option name|Invalid rank requested",
        "",
        "",
    ),
    ("handshake_deadlock", r"Timeout waiting for the cluster|waiting for the cluster", "", ""),
    ("grpc_message_size", r"message (?:too large|larger than max)|Received message larger", "", ""),
    ("data_exhaustion", r"End of sequence|ran out of data", "", ""),
    ("nan_loss", r"Invalid loss|\bNaN\b|non-finite", "", ""),
    (
        "oom",
        r"\bOOM\b|out of memory|Failed to (?:CUDA )?[cm]alloc|calloc|returned null|[Aa]llocation of"
        r"|[Aa]llocator|Ran out of memory",
        r"",
        r"(?!warning|WARNING).*",
    ),
    (
        "collective_mismatch",
        r"shape|group_size|group_key|group \{\}|[Ii]nstance \{\}|doesn't match|does not match"
        r"|Inconsistent|rank \{\}|ranks must",
        r"collective|ring_|hierarchical_tree|cross_device|nccl|/src/",
        "",
    ),
    ("nccl_error", r"", r"^src/", r"WARN"),
    ("misuse", r"", r"", _PY_EXC + r"|TypeError|ValueError|InvalidArgument"),
    ("internal", r"", r"", r"Internal|FATAL|Unknown|DataLoss"),
    ("hint", r"", r"", r"WARNING|warning"),
    ("runtime", r"", r"", r".*"),
)

MIN_LITERAL = 14  # the longest literal part of a format string kept as a message


def meaning(scope: Scope, row: dict[str, object]) -> str | None:
    """The class or role a format string points at; None when its words are too few to recognise it by."""
    from mwms_doctor.ingest.emitted import literal_parts

    text, file, level = str(row["text"]), str(row["file"]), str(row["level"])
    parts = literal_parts(text)
    if not parts or max(len(p.strip()) for p in parts) < MIN_LITERAL or len(" ".join(parts).split()) < 3:
        return None
    where = file if scope.language != "nccl" else "src/" + file.removeprefix("src/")
    for name, words, files, levels in MEANINGS:
        if words and not re.search(words, text):
            continue
        if files and not re.search(files, where):
            continue
        if levels and not re.fullmatch(levels, level):
            continue
        return name
    return None


def generate() -> str:
    """The source of analyzer/ingest/emitted_table.py."""
    head = [
        '"""The emitters\' error and warning format strings, each with its meaning.',
        "",
        "Generated by ``python scripts/coverage.py generate`` from fixtures/emitters/*.jsonl",
        "(themselves extracted from each emitter's source at the commit named in SCOPES)",
        "and the MEANINGS table of that script. Do not edit: re-run it.",
        '"""',
        "",
        "# scope -> (emitter, eras, repository, commit)",
        "SCOPES = {",
    ]
    for scope in SCOPES:
        head.append(
            f"    {scope.name!r}: ({scope.emitter!r}, {scope.eras!r}, {scope.repository!r}, {scope.commit!r}),"
        )
    head += ["}", "", "# (scope, file, line, level, format string, meaning)", "STRINGS = ("]
    for scope in SCOPES:
        path = OUT / f"{scope.name}.jsonl"
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            row = json.loads(line)
            m = meaning(scope, row)
            if m is None:
                continue
            head.append(
                f"    ({scope.name!r}, {row['file']!r}, {row['line']!r}, {row['level']!r}, {row['text']!r}, {m!r}),"
            )
    head += [")", ""]
    return "\n".join(head)


# --- the table ---------------------------------------------------------------------------


# What a gap holds in TF's messages, most often: a name, a task, a number, a status.
FILLERS = ("X1", "/job:worker/replica:0/task:1", "1", "UNAVAILABLE: X1")


def instances(row: dict[str, object]) -> list[tuple[str, str]]:
    """(the message's words as printed, the filler in its gaps), each filler in turn."""
    text = str(row["text"])
    return [(text.replace("{}", f), f) for f in FILLERS] if "{}" in text else [(text, "")]


def recognised(words: list[tuple[str, str]]) -> str | None:
    """The catalogue's kind for a message's own words (the status code or log
    level it comes with set apart) with any of the fillers; a kind the filler
    alone has (a task's name read as a script's 'task 1') is not the words'."""
    from mwms_doctor.ingest.templates import classify

    for text, filler in words:
        kind = classify(text)[0]
        if kind is not None and (not filler or kind != classify(filler)[0]):
            return kind
    return None


@dataclass(frozen=True)
class Count:
    scope: Scope
    total: int
    words: int  # recognised by the hand-written catalogue's words
    meant: int  # given a meaning from source (the generated vocabulary), or by the words
    classes: int  # of those, a meaning that is a verdict class


def _meaning_now(words: list[tuple[str, str]]) -> str | None:
    """The meaning the analyzer reads in a format string printed with the fillers: the generated vocabulary's."""
    from mwms_doctor.ingest.emitted import lookup

    for text, _ in words:
        if (e := lookup(text)) is not None:
            return e.meaning
    return None


def table() -> list[Count]:
    from mwms_doctor.classes import CLASSES

    rows = []
    for scope in SCOPES:
        path = OUT / f"{scope.name}.jsonl"
        if not path.exists():
            continue
        texts = [instances(json.loads(line)) for line in path.read_text().splitlines()]
        words = [recognised(t) is not None for t in texts]
        meant = [_meaning_now(t) for t in texts]
        rows.append(
            Count(
                scope,
                len(texts),
                sum(words),
                sum(w or m is not None for w, m in zip(words, meant, strict=True)),
                sum(m in CLASSES for m in meant),
            )
        )
    return rows


def unrecognised(name: str) -> list[str]:
    out = []
    for line in (OUT / f"{name}.jsonl").read_text().splitlines():
        row = json.loads(line)
        if recognised(instances(row)) is None and _meaning_now(instances(row)) is None:
            out.append(f"{row['file']}:{row['line']} [{row['level']}] {row['text']}")
    return out


def _pct(n: int, total: int) -> str:
    return f"{n} ({n / total:.0%})"


def markdown() -> str:
    lines = [
        "| emitter (scope) | source | error and warning format strings | recognised by the catalogue's words "
        "| known with a meaning (catalogue or source) | meaning is a verdict class |",
        "|---|---|---|---|---|---|",
    ]
    for c in table():
        src = c.scope.repository + (f" @{c.scope.commit[:8]}" if c.scope.commit else "")
        lines.append(
            f"| {c.scope.emitter} | `{src}` | {c.total} | {_pct(c.words, c.total)} | {_pct(c.meant, c.total)} "
            f"| {_pct(c.classes, c.total)} |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv[:1] == ["extract"]:
        OUT.mkdir(parents=True, exist_ok=True)
        for scope in SCOPES:
            if argv[1:] and scope.name not in argv[1:]:
                continue
            rows = extract(scope)
            (OUT / f"{scope.name}.jsonl").write_text(
                "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)
            )
            levels = Counter(str(r["level"]) for r in rows)
            print(f"{scope.name}: {len(rows)} format strings ({dict(levels.most_common(6))})")
        return 0
    if argv[:1] == ["generate"]:
        TABLE.write_text(generate())
        print(f"wrote {TABLE.relative_to(ROOT)}")
        return 0
    if argv[:1] == ["--unrecognised"]:
        print("\n".join(unrecognised(argv[1])))
        return 0
    if argv[:1] == ["--markdown"]:
        print(markdown())
        return 0
    print(f"{'scope':16} {'format strings':>14} {'by words':>14} {'with meaning':>14} {'a class':>14}")
    for c in table():
        print(
            f"{c.scope.name:16} {c.total:14} {_pct(c.words, c.total):>14} {_pct(c.meant, c.total):>14} "
            f"{_pct(c.classes, c.total):>14}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Find a job's evidence: which files are worker logs, which are exit records,
environment dumps and profiler traces.

No naming convention is required: the readers (``ingest.readers``) say from
a file's content which of them it belongs to, whatever it is called. File
names only give a *hint* of the worker (``worker-1.log``,
``tfjob-abc-worker-1.log``, ``logs/chief-0/stdout.txt``); ``ingest.identity``
prefers what the content says.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import errno
import os
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from .errors import UserError
from .ingest.blackbox import blackbox_text, is_blackbox
from .ingest.exit_status import EXIT_SUFFIXES
from .ingest.exports import convert as convert_export
from .ingest.exports import notebook_text, printed_text
from .ingest.exports import sniff as sniff_export
from .ingest.identity import unit_of
from .ingest.readers import claim, claim_by_name
from .ingest.source import NotRegular, file_type, plain_name
from .ingest.source import detect as detect_source
from .inputs import JobInputs, LogInput, display, name_hint

# Enough to see past a long banner or a pip dump before the first TF line.
SNIFF_BYTES = 256 * 1024

# Environment files that tell how a process ended, not only what it ran on.
_PLATFORM_KINDS = ("kernel", "k8s_pod", "docker_inspect", "k8s_events", "slurm")
_LOG_SUFFIXES = (".gz", ".log", ".txt", ".out", ".err", ".stdout", ".stderr")


def _stem(name: str) -> str:
    changed = True
    while changed:
        changed = False
        for suffix in (*_LOG_SUFFIXES, *EXIT_SUFFIXES):
            if name.endswith(suffix) and len(name) > len(suffix):
                name = name[: -len(suffix)]
                changed = True
    return name


def read_head(path: Path, n: int = SNIFF_BYTES) -> str:
    """The first ``n`` bytes of a file's text: decompressed when its content
    is compressed (whatever its name), UTF-16 turned to text; undecodable
    bytes become U+FFFD. Raises OSError (NotRegular for a FIFO or a device)."""
    src = detect_source(path)
    with src.open() as fh:
        data = fh.read(n)
        damage = getattr(fh, "damage", None)
    if damage and not data.strip():
        raise OSError(damage)
    return data.decode("utf-8", "replace")


# Names a log has (``worker-2.log``, ``stdout.txt``, ``slurm-1_2.out``, no suffix).
_TEXT_LOG_NAME = re.compile(r"(?:\.(?:log|txt|out|err)(?:\.\d+)?(?:\.gz)?|^[^.]+)$", re.I)
# Programs and their configuration, by name.
_PROGRAM = re.compile(
    r"\.(?:js|mjs|cjs|ts|py|sh|bash|zsh|ps1|bat|rb|pl|toml|ini|cfg|conf|tf|hcl|nf|groovy|mk)$|^(?:Makefile|Dockerfile|Jenkinsfile|Procfile)$",
    re.I,
)
_NOT_KNOWN = "not a log, trace or environment dump this tool knows (first 256 KiB read)"


def discover(root: Path) -> JobInputs:
    """Classify every file under ``root``. Raises UserError when there is nothing to analyse."""
    if not root.exists():
        raise UserError(f"{root}: no such file or directory", "pass the folder that holds the workers' logs")
    job = JobInputs(root if root.is_dir() else root.parent)
    files = [root] if not root.is_dir() else _walk(root, job.skipped)
    if not files and not job.skipped:
        raise UserError(f"{root}: the directory is empty", "pass the folder that holds the workers' logs")
    files = _unpack_archives(files, job)
    exit_files: list[Path] = []
    unsure: list[LogInput] = []
    programs: list[LogInput] = []
    for path in files:
        rel = job.source_of(path)
        by_name = claim_by_name(path)
        if by_name is not None and by_name.reader == "exit":
            exit_files.append(path)
            continue
        try:
            mtime = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc)
            if by_name is not None and by_name.reader == "trace":
                job.traces.append(LogInput(path, rel, name_hint(rel), mtime))
                continue
            head = read_head(path)
        except NotRegular as exc:
            job.skipped.append((rel, f"skipped: {exc.args[0].rsplit(': ', 1)[-1]}"))
            continue
        except OSError as exc:
            job.skipped.append((rel, f"could not be read: {exc.strerror or exc}"))
            continue
        if is_blackbox(path.name):
            # A worker's black box (mwms_doctor.capture): its records as a log's lines.
            converted = _convert_export(path, rel, "blackbox", job)
            if converted is not None:
                job.logs.append(LogInput(converted, rel, name_hint(rel), mtime))
                continue
        if head.strip() and (export := sniff_export(head)) is not None:
            # A log viewer's export: its entries, in time order, as the lines of a log.
            converted = _convert_export(path, rel, export, job)
            if converted is not None:
                job.logs.append(LogInput(converted, rel, name_hint(rel), mtime))
                continue
        found = claim(head, rel) if head.strip() else None
        if not head.strip():
            job.skipped.append((rel, "empty file"))
        elif found is not None and found.reader == "env":
            job.env_files.append((LogInput(path, rel, name_hint(rel), mtime), str(found.kind)))
        elif found is not None and found.reader == "log" and _PROGRAM.search(plain_name(path.name)):
            # A program or its configuration (pm2's ecosystem.config.js, a
            # launcher script) names workers and TF_CONFIGs without being any
            # worker's log: read only when nothing else is.
            programs.append(LogInput(path, rel, name_hint(rel), mtime))
        elif found is not None and found.reader == "log":
            job.logs.append(LogInput(path, rel, name_hint(rel), mtime))
        elif found is not None and found.reader == "document":
            job.skipped.append((rel, f"{found.kind} that no reader of this tool claims (not a log)"))
        elif _TEXT_LOG_NAME.search(path.name) and "\x00" not in head:
            # Named like a worker's log but without a TF line: a worker that
            # never reached TensorFlow (stuck downloading data, say), or the
            # other stream of a process whose TF records are in its stderr.
            # Decided below, once we know the job's other logs.
            unsure.append(LogInput(path, rel, name_hint(rel), mtime))
        else:
            job.skipped.append((rel, _NOT_KNOWN))
    if root.is_file() and not job.logs and not job.traces and not job.unpacked:
        # One file handed over on its own (a paste, one worker's tail, an
        # excerpt from a ticket): whatever it holds is the evidence. It is
        # read as a log too when it is also an environment dump (a kubectl
        # describe, a dmesg excerpt), so what it says of errors is not lost.
        rel = root.name
        if not any(s == rel and why == "empty file" for s, why in job.skipped):
            job.skipped = [(s, why) for s, why in job.skipped if s != rel]
            job.logs.append(LogInput(root, rel, name_hint(rel), _mtime(root)))
    programs = [lg for lg in programs if lg.path not in {x.path for x in job.logs}]
    # A task's own script beside its log (Nextflow's .command.sh, a per-task
    # run.sh) sets the TF_CONFIG the process ran with: whose the log is.
    folders = {lg.path.parent for lg in job.logs}
    own = [lg for lg in programs if lg.path.parent in folders and _sets_one_tf_config(lg.path)]
    job.env_files += [(lg, "env_dump") for lg in own]
    programs = [lg for lg in programs if lg not in own]
    if job.logs or job.env_files:
        job.skipped += [(lg.source, "a program or configuration file, not a log") for lg in programs]
    else:
        job.logs += programs
    taken = {lg.name_hint for lg in job.logs}
    # A process's other stream (``slurm-9_2.out`` beside its ``.err``, whose
    # TF records it lacks): what it printed is the same worker's evidence.
    units = {unit_of(lg.source) for lg in job.logs}
    held = {lg.path for lg in job.logs}
    for lg in unsure:
        if lg.path in held:
            continue  # the one file handed over, already read as it is
        if job.logs and (
            (lg.name_hint is not None and lg.name_hint not in taken) or unit_of(lg.source) in units
        ):
            job.logs.append(lg)
        else:
            job.skipped.append((lg.source, _NOT_KNOWN))
    for path in exit_files:
        rel = job.source_of(path)
        log = _pair(path, job.logs)
        if log is None and (named := name_hint(path.name)) is not None and named not in job.named_exits:
            # Its worker may be one of a combined log's tags: decided once
            # the workers are known (ingest).
            job.named_exits[named] = path
        elif log is None:
            job.skipped.append((rel, "exit record with no worker log beside it"))
        elif log.source in job.exits:
            job.skipped.append((rel, f"a second exit record for {log.source} (the first one was read)"))
        else:
            job.exits[log.source] = path
    if not job.logs and not job.env_files:
        # No file looks like a log: any text file is still someone's evidence
        # (a pasted fragment without TF's headers). Only binaries and empty
        # files are left out.
        by_source = {job.source_of(p): p for p in files}
        for source, why in list(job.skipped):
            path = by_source.get(source, job.root / source)
            if why == _NOT_KNOWN and _is_text(path):
                job.skipped.remove((source, why))
                job.logs.append(LogInput(path, source, name_hint(source), _mtime(path)))
    if not job.logs:
        # Only platform records (a dmesg excerpt, a kubectl describe, Slurm's
        # messages): what they say of how a process ended is read as a log too.
        job.logs += [item for item, kind in job.env_files if kind in _PLATFORM_KINDS]
    if not job.logs and not job.env_files:
        detail = "; ".join(f"{s}: {why}" for s, why in job.skipped[:5])
        raise UserError(
            f"{root}: no worker log found ({len(files)} file(s) looked at: {detail})",
            "a worker log holds TensorFlow output such as 'I0000 00:00:... file.cc:N] ...'",
        )
    return job


# Archives a job's logs come in (``logs.tar.gz``, ``job.zip``): their files are read as if unpacked.
_ARCHIVE = re.compile(r"\.(?:tar|tgz|tbz2?|txz|tzst|zip|tar\.(?:gz|bz2|xz|zst|zstd))$", re.I)
_ZSTD = re.compile(r"\.(?:tzst|tar\.zstd?)$", re.I)
# Nesting read (an archive of per-host archives), and the most unpacked from one job.
_ARCHIVE_DEPTH = 2
_UNPACK_LIMIT = 32 * 1024**3


# An export is read whole to be put in time order: a cap on what is read so.
_EXPORT_LIMIT = 512 << 20


def _convert_export(path: Path, rel: str, kind: str, job: JobInputs) -> Path | None:
    """A log viewer's export as JSON lines in time order, in a temporary file
    named as the export in every output; None (read as it is) when it cannot
    be converted."""
    try:
        if path.stat().st_size > _EXPORT_LIMIT:
            job.skipped.append(
                (rel, f"a {kind} export over {_EXPORT_LIMIT >> 20} MiB: read as it is, not reordered")
            )
            return None
        src = detect_source(path)
        with src.open() as fh:
            text = fh.read(_EXPORT_LIMIT).decode("utf-8", "replace")
        if kind == "notebook":
            lines = notebook_text(text)
        elif kind == "printed":
            lines = printed_text(text)
        elif kind == "blackbox":
            lines = blackbox_text(text)
        else:
            lines, line_map = convert_export(text, kind)
            if line_map is not None:
                job.line_maps[rel] = line_map
    except (OSError, ValueError, TypeError, AttributeError, KeyError, IndexError, SyntaxError) as exc:
        # An export of an unexpected shape (a field of another type, a file cut
        # short): its text is still read, as it is.
        job.skipped.append((rel, f"a {kind} export that could not be read as one ({exc}): read as it is"))
        return None
    if not lines:
        return None
    into = Path(tempfile.mkdtemp(prefix="mwms-doctor-export-"))
    atexit.register(shutil.rmtree, into, True)
    out = into / (path.name + (".txt" if kind in ("notebook", "printed", "blackbox") else ".jsonl"))
    out.write_text(lines, encoding="utf-8")
    job.unpacked[out] = rel
    return out


def _unpack_archives(files: list[Path], job: JobInputs, depth: int = 0) -> list[Path]:
    """``files`` with every archive among them replaced by the files it holds,
    unpacked into a temporary folder removed when the process ends; each
    unpacked file is named ``<archive>/<path inside it>`` in every output.
    An archive that cannot be read is said (skipped), never dropped silently."""
    out: list[Path] = []
    for path in files:
        if depth >= _ARCHIVE_DEPTH or not _ARCHIVE.search(path.name):
            out.append(path)
            continue
        rel = job.source_of(path)
        try:
            inner = _unpack(path, rel, job)
        except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
            job.skipped.append((rel, f"archive could not be unpacked: {exc}"))
            continue
        if not inner:
            job.skipped.append((rel, "archive holds no files"))
        out += _unpack_archives(inner, job, depth + 1)
    return out


def is_archive(path: Path) -> bool:
    """Whether a file's name says it is an archive this tool unpacks."""
    return bool(_ARCHIVE.search(path.name))


def unpack_archive(path: Path) -> tuple[Path, list[tuple[str, str]]]:
    """An archive of several jobs (``triage nightly.tar.gz``): unpacked, with
    the same care as a job's, into a temporary folder removed when the
    process ends; (that folder, what was not unpacked and why)."""
    job = JobInputs(path.parent)
    into = Path(tempfile.mkdtemp(prefix="mwms-doctor-archive-"))
    atexit.register(shutil.rmtree, into, True)
    try:
        _unpack(path, path.name, job, into)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        raise UserError(f"{path}: the archive could not be unpacked: {exc}") from exc
    return into, job.skipped


def _unpack(path: Path, rel: str, job: JobInputs, into: Path | None = None) -> list[Path]:
    """Unpack one archive's regular files (no links, no device files, no name
    that leaves the folder) into a fresh temporary folder."""
    if into is None:
        into = Path(tempfile.mkdtemp(prefix="mwms-doctor-archive-"))
        atexit.register(shutil.rmtree, into, True)
    out: list[Path] = []
    budget = _UNPACK_LIMIT

    def place(name: str, size: int) -> Path | None:
        nonlocal budget
        parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", ".", "/")]
        # The same hidden names as on disk: junk folders and hidden files that are no log.
        hidden = any(p in _JUNK_FOLDERS for p in parts[:-1]) or (
            parts and parts[-1].startswith(".") and not _HIDDEN_LOG.search(parts[-1])
        )
        if not parts or ".." in parts or hidden:
            if parts:
                job.skipped.append((f"{rel}:{name}", "skipped: a hidden file or a name outside the archive"))
            return None
        if size > budget:
            job.skipped.append((f"{rel}:{name}", "skipped: the archive unpacks to more than this tool reads"))
            return None
        budget -= size
        target = into.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        job.unpacked[target] = display(f"{rel}:{'/'.join(parts)}")
        out.append(target)
        return target

    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                if (target := place(info.filename, info.file_size)) is not None:
                    with zf.open(info) as src, target.open("wb") as dst:
                        shutil.copyfileobj(src, dst)
        return out
    with _open_tar(path) as tf:
        for member in tf:
            if member.isdir():
                continue
            if not member.isreg():
                job.skipped.append((f"{rel}:{member.name}", "skipped: not a regular file in the archive"))
                continue
            if (target := place(member.name, member.size)) is not None:
                data = tf.extractfile(member)
                if data is not None:
                    with data, target.open("wb") as dst:
                        shutil.copyfileobj(data, dst)
    return out


@contextlib.contextmanager
def _open_tar(path: Path) -> Iterator[tarfile.TarFile]:
    """A tar archive, compressed with gzip, bzip2, xz or zstd (tarfile reads
    the first three itself; zstd is read as a stream, member after member)."""
    if not _ZSTD.search(path.name):
        with tarfile.open(path, "r:*") as tf:
            yield tf
        return
    try:
        import zstandard
    except ImportError as exc:
        raise ValueError("zstd-compressed; install the 'zstandard' package to read it") from exc
    with (
        path.open("rb") as raw,
        zstandard.ZstdDecompressor().stream_reader(raw) as stream,
        tarfile.open(fileobj=stream, mode="r|") as tf,
    ):
        yield tf


# Hidden folders of version control, editors, caches and environments: never a job's evidence.
_JUNK_FOLDERS = frozenset(
    {".git", ".svn", ".hg", ".venv", ".env", ".cache", ".ipynb_checkpoints", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".tox", ".idea", ".vscode", ".Trash", ".local", ".npm", ".conda"}
)  # fmt: skip
# A hidden file that is a program's log or stream (Nextflow's .command.out,
# .command.err, .command.log, .exitcode and .nextflow.log): read like any other;
# so is the script a task ran (Nextflow's .command.sh): it sets its TF_CONFIG.
_HIDDEN_LOG = re.compile(r"\.(?:log|out|err|txt|exitcode)(?:\.\d+)?(?:\.gz)?$|^\.command\.(?:sh|run)$", re.I)


_SETS_TF_CONFIG = re.compile(r"^\s*(?:export\s+|ENV\s+|set\s+)?TF_CONFIG\s*=", re.M)


def _sets_one_tf_config(path: Path) -> bool:
    """A shell script that sets one TF_CONFIG, with its task (one task's script)."""
    if not path.name.endswith((".sh", ".bash", ".run")):
        return False
    try:
        head = read_head(path)
    except (OSError, NotRegular):
        return False
    return len(_SETS_TF_CONFIG.findall(head)) == 1 and '"task"' in head.replace("'task'", '"task"')


def _walk(root: Path, skipped: list[tuple[str, str]]) -> list[Path]:
    """Every regular file under ``root``, hidden ones left out. Whatever is
    not read is said, never dropped silently: special files (FIFOs, devices,
    sockets), symbolic links that leave the folder or loop, folders that
    cannot be listed. A link to a file inside the folder is read (a link to
    a folder is not followed: the folder is read where it is)."""
    out: list[Path] = []
    base = root.resolve()

    def rel(p: Path) -> str:
        return display(p.relative_to(root).as_posix())

    def on_error(exc: OSError) -> None:
        where = Path(exc.filename) if exc.filename else root
        with contextlib.suppress(ValueError):
            skipped.append((rel(where) or ".", f"could not be listed: {exc.strerror or exc}"))

    for folder, dirs, names in os.walk(root, onerror=on_error):
        here = Path(folder)
        for d in dirs:
            if d in _JUNK_FOLDERS:
                skipped.append((rel(here / d), "skipped: a hidden folder"))
        # Other hidden folders are read: tools keep their logs in them
        # (~/.apptainer/instances/logs, .snakemake/log, .nextflow).
        dirs[:] = sorted(d for d in dirs if d not in _JUNK_FOLDERS)
        for d in dirs:
            if (here / d).is_symlink():
                skipped.append((rel(here / d), "skipped: a symbolic link to a folder (not followed)"))
        dirs[:] = [d for d in dirs if not (here / d).is_symlink()]
        for name in sorted(names):
            if name.startswith(".") and not _HIDDEN_LOG.search(name):
                skipped.append((rel(here / name), "skipped: a hidden file"))
                continue
            p = here / name
            try:
                st = p.lstat()
                if stat.S_ISLNK(st.st_mode):
                    target = p.resolve(strict=True)
                    if not target.is_relative_to(base):
                        skipped.append((rel(p), "skipped: a symbolic link pointing outside the job folder"))
                        continue
                    st = target.stat()
                if not stat.S_ISREG(st.st_mode):
                    skipped.append((rel(p), f"skipped: {file_type(st.st_mode)}, not a regular file"))
                    continue
            except RuntimeError:
                skipped.append((rel(p), "skipped: a symbolic link in a loop"))
                continue
            except OSError as exc:
                why = "a symbolic link in a loop" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
                what = "skipped" if exc.errno == errno.ELOOP else "could not be read"
                if exc.errno == errno.ENOENT and p.is_symlink():
                    what, why = "skipped", "a broken symbolic link"
                skipped.append((rel(p), f"{what}: {why}"))
                continue
            out.append(p)
    return out


def _mtime(path: Path) -> dt.datetime:
    return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc)


def _is_text(path: Path) -> bool:
    try:
        head = read_head(path)
    except OSError:
        return False
    return bool(head.strip()) and "\x00" not in head


def _pair(exit_path: Path, logs: list[LogInput]) -> LogInput | None:
    """The log an exit record belongs to: same stem in the same folder, else the
    only log in that folder (``<host>/stdout.txt`` + ``<host>/exit_code``)."""
    same_dir = [lg for lg in logs if lg.path.parent == exit_path.parent]
    stem = _stem(exit_path.name)
    for lg in same_dir:
        if _stem(lg.path.name) == stem:
            return lg
    named = name_hint(exit_path.name)
    if named is not None:
        # Another suffix on the log (``worker-0.exit`` beside Docker's
        # ``worker-0.json.log`` or ``worker-0.out``/``.err``): the record is
        # the process the two names share.
        mates = sorted((lg for lg in same_dir if lg.name_hint == named), key=lambda lg: lg.source)
        if mates and len({unit_of(lg.source) for lg in mates}) == 1:
            return mates[0]
    if len({unit_of(lg.source) for lg in same_dir}) == 1 and len(same_dir) > 1:
        # The streams of one process (``<host>/stdout.log`` + ``<host>/stderr.log``):
        # the record is that process's; the first of its files carries it.
        same_dir = sorted(same_dir, key=lambda lg: lg.source)[:1]
    if len(same_dir) != 1:
        return None
    # The only log beside it, unless the record names another worker
    # (``worker-0.exit`` beside ``worker-2.log`` when worker-0's log is empty).
    return same_dir[0] if named is None or named == same_dir[0].name_hint else None

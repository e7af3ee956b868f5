"""Pass 1 over a log: find the lines that matter without parsing the rest.

The file is read in blocks (memory stays flat whatever its size). Each block
is cut into ~64 KiB slices at line ends and RE2 (pyarrow's regex engine, a
DFA) tests every slice against one alternation of all signatures; only the
rare slices that match are cut into lines and tested line by line. The
result is where each matching line is (byte offset, line number) and how
many lines the file has; ``worker_log`` then parses only those lines' records
plus the head and the tail of the file.

A ``.gz`` log is decompressed once, to a temporary file, so pass 2 can seek.
"""

from __future__ import annotations

import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pyarrow as pa
import pyarrow.compute as pc

from .signatures import combined

BLOCK = 8 << 20  # bytes read at a time
SLICE = 64 << 10  # bytes per coarse RE2 test
# A line longer than this is scanned in pieces (a progress bar redrawn with
# \r for a whole epoch can be megabytes long without a newline).
MAX_CARRY = 16 << 20


@dataclass(frozen=True, slots=True)
class Hit:
    line: int  # 1-based
    start: int  # byte offset of the line's first byte
    end: int  # byte offset just past the line (its \n included)
    alarm: bool  # a warning or worse: parse it with context
    frequent: bool = False  # an epoch line and the like: printed over and over


@dataclass
class Scan:
    path: Path  # the file to read in pass 2 (the decompressed copy of a .gz)
    size: int
    n_lines: int
    n_newlines: int
    hits: list[Hit] = field(default_factory=list)


class _Matcher:
    def __init__(self) -> None:
        self.any = combined()
        self.alarm = combined("alarm")
        self.frequent = combined("frequent")

    def slices(self, buf: bytes, base: int) -> list[tuple[int, int]]:
        """(start, end) of each slice of ``buf`` (absolute offsets) with a match."""
        bounds = [0]
        n = len(buf)
        while bounds[-1] < n:
            p = bounds[-1]
            q = min(p + SLICE, n)
            if q < n:
                r = buf.rfind(b"\n", p, q)
                q = r + 1 if r >= p else q
            bounds.append(q)
        arr = pa.LargeBinaryArray.from_buffers(
            pa.large_binary(),
            len(bounds) - 1,
            [None, pa.array(bounds, pa.int64()).buffers()[1], pa.py_buffer(buf)],
        )
        mask = pc.match_substring_regex(arr, pattern=self.any)
        hot = pc.indices_nonzero(mask).to_pylist()
        return [(base + bounds[i], base + bounds[i + 1]) for i in hot]

    def lines(
        self, chunks: list[bytes]
    ) -> tuple[list[int], list[int], list[int], list[int], list[bool], list[bool]]:
        """For each matching line of any of ``chunks`` (whole lines each): which
        chunk, its index there, its start and end in that chunk (the end past its newline),
        whether it is an alarm and whether it is a frequent one.

        All chunks of a block go through RE2 together: Arrow compiles the
        pattern on every call, which costs more than scanning a slice."""
        parts: list[bytes] = []
        first: list[int] = []  # index in ``parts`` of each chunk's first line
        for chunk in chunks:
            first.append(len(parts))
            lines = chunk.split(b"\n")
            if lines and lines[-1] == b"":
                lines.pop()
            parts.extend(lines)
        arr = pa.array(parts, pa.binary())
        idx_arr = pc.indices_nonzero(pc.match_substring_regex(arr, pattern=self.any))
        if len(idx_arr) == 0:
            return [], [], [], [], [], []
        sub = arr.take(idx_arr)
        ends_all = pc.cumulative_sum(pc.add(pc.binary_length(arr), 1)).to_pylist()  # past each newline
        lengths = pc.binary_length(sub).to_pylist()
        alarm = [bool(a) for a in pc.match_substring_regex(sub, pattern=self.alarm).to_pylist()]
        frequent = [bool(a) for a in pc.match_substring_regex(sub, pattern=self.frequent).to_pylist()]
        which, index, starts, ends = [], [], [], []
        c = 0
        for g, ln in zip(idx_arr.to_pylist(), lengths, strict=True):
            while c + 1 < len(first) and first[c + 1] <= g:
                c += 1
            base = ends_all[first[c] - 1] if first[c] > 0 else 0
            end = ends_all[g] - base
            which.append(c)
            index.append(g - first[c])
            starts.append(end - ln - 1)
            ends.append(min(end, len(chunks[c])))
        return which, index, starts, ends, alarm, frequent


_MATCHER: _Matcher | None = None


def _matcher() -> _Matcher:
    global _MATCHER
    if _MATCHER is None:
        _MATCHER = _Matcher()
    return _MATCHER


def scan_file(path: Path) -> Scan:
    """Find every signature line of a plain (uncompressed) file."""
    m = _matcher()
    hits: list[Hit] = []
    newlines = 0  # lines completed before ``offset``
    offset = 0  # absolute offset of ``carry``'s first byte
    carry = b""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        while True:
            block = fh.read(BLOCK)
            buf = carry + block if carry else block
            if not block:
                cut = len(buf)  # the last line, without a newline
            else:
                cut = buf.rfind(b"\n") + 1
                if cut == 0 and len(buf) < MAX_CARRY:
                    carry = buf
                    continue
                if cut == 0:
                    cut = len(buf)
            body = buf[:cut]
            hot = m.slices(body, offset)
            if hot:
                chunks = [body[st - offset : en - offset] for st, en in hot]
                line0 = []  # line number of each hot slice's first line
                counted, counted_at = newlines, 0
                for st, _ in hot:
                    counted += body.count(b"\n", counted_at, st - offset)
                    counted_at = st - offset
                    line0.append(counted + 1)
                for c, j, st, en, a, f in zip(*m.lines(chunks), strict=True):
                    base = hot[c][0]
                    hits.append(Hit(line0[c] + j, base + st, base + en, a, f and not a))
            newlines += body.count(b"\n")
            offset += cut
            carry = buf[cut:]
            if not block:
                break
    n_lines = newlines + (1 if size and not _ends_with_newline(path, size) else 0)
    return Scan(path, size, n_lines, newlines, hits)


def _ends_with_newline(path: Path, size: int) -> bool:
    with open(path, "rb") as fh:
        fh.seek(size - 1)
        return fh.read(1) == b"\n"


@contextmanager
def plain_copy(path: Path) -> Iterator[tuple[Path, str | None]]:
    """(a plain file to read, what was wrong with it): the file itself, or a
    decompressed temporary copy of a ``.gz``. A truncated or corrupt ``.gz``
    keeps what could be decompressed, and says where it broke."""
    if path.suffix != ".gz":
        yield path, None
        return
    with tempfile.NamedTemporaryFile(prefix="mwms-", suffix=".log") as tmp:
        damage = _gunzip(path, tmp)
        tmp.flush()
        yield Path(tmp.name), damage


def _gunzip(path: Path, out: IO[bytes]) -> str | None:
    """Decompress ``path`` into ``out`` chunk by chunk, so a truncated or corrupt
    file still gives everything before the damage. Concatenated members are
    one stream (what ``cat a.gz b.gz`` and log rotators make)."""
    d = zlib.decompressobj(wbits=31)
    in_member = False
    written = 0
    with open(path, "rb") as src:
        while chunk := src.read(1 << 16):
            while chunk:
                in_member = True
                try:
                    data = d.decompress(chunk)
                except zlib.error as exc:
                    return f"could not be decompressed past byte {written} ({exc}); read up to there"
                out.write(data)
                written += len(data)
                chunk = b""
                if d.eof:
                    chunk, in_member = d.unused_data, False
                    d = zlib.decompressobj(wbits=31)
    if in_member:
        return f"could not be decompressed to the end (the file is truncated); read up to byte {written}"
    return None

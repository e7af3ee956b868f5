"""Pass 1 over a log: find the lines that matter without parsing the rest.

The file is read in blocks cut at line ends (memory stays flat whatever its
size) and every block goes through a multi-pattern engine once:

* ``hyperscan`` (Intel's SIMD matcher) when its wheel is installed: three
  databases' worth of signatures (alarms, frequent lines, the rest), each an
  alternation ending in ``[^\\n]*$`` so a matching line reports once, at its end;
* else RE2 through ``pyarrow.compute``: coarse 64 KiB slices first, then the
  lines of the rare slices that match (``MWMS_DOCTOR_SCAN_ENGINE=re2`` forces it).

Either engine hands back the line ends and group masks of one block as numpy
arrays. What is kept of them is bounded, never one Python object per hit:
per group (frequent lines such as epoch ends, and everything else) a count,
the first ``limit // 2`` and a ring of the last ones, as integers
``offset * 8 + mask``. Line numbers and starts are worked out at the end, for
the kept hits only, by re-reading the few blocks they lie in.

A file is scanned up to the size it had when the scan began (a log still
being written does not shift under the reader). A big file can be scanned in
ranges in parallel (``scan_range``) and the parts merged (``merge``).

A ``.gz`` log is decompressed once, to a temporary file, so pass 2 can seek.
"""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import multipattern
from .signatures import Signature, signatures
from .source import Reader, Source, open_regular

BLOCK = 4 << 20  # bytes read at a time
# While the first frequent lines are still wanted (read one by one, with every
# signature), and when the last ones are looked for: pieces this big, so that
# only the lines needed go through the callbacks, not a whole block's.
PIECE = 256 << 10
SLICE = 64 << 10  # bytes per coarse RE2 test
# A line longer than this is scanned in pieces (a progress bar redrawn with
# \r for a whole epoch can be megabytes long without a newline).
MAX_CARRY = 16 << 20

# Group bits of a matching line: any signature, a frequent one, an alarm.
OTHER, FREQUENT, ALARM = 1, 2, 4
# What one pass looks for: the lines that matter (alarms and the rest), the
# frequent lines (epoch lines: only the first and last few are wanted), all.
MAIN, FREQ, ALL = (ALARM, OTHER), (FREQUENT,), (ALARM, FREQUENT, OTHER)


@dataclass(frozen=True, slots=True)
class LineMatch:
    line: int  # 1-based
    start: int  # byte offset of the line's first byte
    end: int  # byte offset just past the line (its \n included)
    alarm: bool  # a warning or worse: parse it with context
    frequent: bool = False  # an epoch line and the like: printed over and over


@dataclass
class Scan:
    path: Path
    size: int  # bytes scanned: the file's (decoded) size when the scan began
    n_lines: int
    n_newlines: int
    hits: list[LineMatch] = field(default_factory=list)  # the kept ones, in file order
    n_matched: int = 0  # every line that matched a signature, kept or not
    dropped: int = 0  # warnings, errors and other signature lines only counted
    dropped_frequent: int = 0  # frequent lines only counted
    source: Source | None = None  # how to open it again (compressed, UTF-16); None: a plain file
    damage: str | None = None  # why the file could not be read to its end
    # False: frequent lines in the middle of the file were not counted one by
    # one (n_matched and dropped_frequent are then lower bounds).
    frequent_counted: bool = True

    def open(self) -> Reader:
        return self.source.open() if self.source is not None else open_regular(self.path)


# -- engines -------------------------------------------------------------------


def _groups() -> list[tuple[int, list[Signature]]]:
    sigs = signatures()
    return [
        (ALARM, [s for s in sigs if s.alarm]),
        (FREQUENT, [s for s in sigs if s.frequent and not s.alarm]),
        (OTHER, [s for s in sigs if not s.alarm and not s.frequent]),
    ]


def _alternation(sigs: list[Signature]) -> str:
    return "|".join(f"(?:{s.regex})" for s in sigs)


class _Hyperscan:
    name = "hyperscan"

    def __init__(self, hs: Any) -> None:
        groups = {bit: sigs for bit, sigs in _groups() if sigs}

        def db(bits: tuple[int, ...], single: bool = False) -> Any:
            exprs = [_alternation(groups[b]) for b in bits]
            if single:  # does any line match: one report, then hyperscan stops
                return multipattern.database(
                    hs, [e.encode() for e in exprs], list(bits), [hs.HS_FLAG_SINGLEMATCH] * len(exprs)
                )
            lines = [f"(?:{e})[^\\n]*$".encode() for e in exprs]
            return multipattern.database(hs, lines, list(bits), [hs.HS_FLAG_MULTILINE] * len(lines))

        self.dbs = {MAIN: db(MAIN), FREQ: db(FREQ), ALL: db(ALL)}
        self.freq_any = db(FREQ, single=True)

    def any_frequent(self, buf: bytes | memoryview) -> bool:
        found: list[int] = []
        self.freq_any.scan(buf, match_event_handler=lambda *a: found.append(1))
        return bool(found)

    def matches(
        self, buf: bytes | memoryview, groups: tuple[int, ...] = ALL
    ) -> tuple[np.ndarray, np.ndarray]:
        """(line ends, group masks) of the lines of ``buf`` that match a
        signature of ``groups``, in order. A line end is the offset of its
        newline (or ``len(buf)``)."""
        from array import array

        out = array("q")
        push = out.append

        def on_match(bit: int, _from: int, to: int, _flags: int, _ctx: Any) -> None:
            push(to * 8 + bit)

        self.dbs[groups].scan(buf, match_event_handler=on_match)
        if not out:
            return _EMPTY_I64, _EMPTY_U8
        v = np.sort(np.frombuffer(out, dtype=np.int64))
        ends = v >> 3
        first = np.flatnonzero(np.concatenate(([True], ends[1:] != ends[:-1])))
        masks = np.bitwise_or.reduceat(v & 7, first).astype(np.uint8)
        return ends[first], masks


class _RE2:
    """RE2 through pyarrow: coarse slices, then the lines of the hot ones."""

    name = "re2"

    def __init__(self) -> None:
        self.all_groups = [(bit, _alternation(sigs)) for bit, sigs in _groups() if sigs]

    def any_frequent(self, buf: bytes | memoryview) -> bool:
        import pyarrow as pa
        import pyarrow.compute as pc

        pattern = next((p for bit, p in self.all_groups if bit == FREQUENT), None)
        if pattern is None:
            return False
        data = buf.tobytes() if isinstance(buf, memoryview) else buf
        return bool(pc.match_substring_regex(pa.array([data], pa.large_binary()), pattern=pattern)[0].as_py())

    def matches(
        self, buf: bytes | memoryview, groups: tuple[int, ...] = ALL
    ) -> tuple[np.ndarray, np.ndarray]:
        import pyarrow as pa
        import pyarrow.compute as pc

        wanted = [(bit, p) for bit, p in self.all_groups if bit in groups]
        if not wanted:
            return _EMPTY_I64, _EMPTY_U8
        any_pattern = "|".join(f"({p})" for _, p in wanted)

        if isinstance(buf, memoryview):
            buf = buf.tobytes()
        n = len(buf)
        bounds = [0]
        while bounds[-1] < n:
            p = bounds[-1]
            q = min(p + SLICE, n)
            if q < n:
                r = buf.rfind(b"\n", p, q)
                q = r + 1 if r >= p else q
            bounds.append(q)
        offs = pa.array(bounds, pa.int64())
        arr = pa.LargeBinaryArray.from_buffers(
            pa.large_binary(), len(bounds) - 1, [None, offs.buffers()[1], pa.py_buffer(buf)]
        )
        hot = pc.indices_nonzero(pc.match_substring_regex(arr, pattern=any_pattern)).to_pylist()
        if not hot:
            return _EMPTY_I64, _EMPTY_U8
        # Every line of the hot slices, with the offset of its end in ``buf``.
        parts: list[bytes] = []
        ends: list[np.ndarray] = []
        for i in hot:
            lo, hi = bounds[i], bounds[i + 1]
            lines = buf[lo:hi].split(b"\n")
            if lines and lines[-1] == b"":
                lines.pop()
            lengths = np.fromiter((len(x) for x in lines), dtype=np.int64, count=len(lines))
            ends.append(lo + np.cumsum(lengths + 1) - 1)
            parts.extend(lines)
        line_ends = np.minimum(np.concatenate(ends), n)
        lines_arr = pa.array(parts, pa.binary())
        masks = np.zeros(len(parts), dtype=np.uint8)
        for bit, pattern in wanted:
            hit = pc.match_substring_regex(lines_arr, pattern=pattern).to_numpy(zero_copy_only=False)
            masks |= np.where(hit, bit, 0).astype(np.uint8)
        sel = masks != 0
        return line_ends[sel], masks[sel]


_EMPTY_I64 = np.zeros(0, dtype=np.int64)
_EMPTY_U8 = np.zeros(0, dtype=np.uint8)
_ENGINE: _Hyperscan | _RE2 | None = None


def engine() -> _Hyperscan | _RE2:
    """The scan engine of this process: hyperscan when it can be loaded, else RE2."""
    global _ENGINE
    if _ENGINE is None:
        hs = multipattern.hyperscan_module()
        _ENGINE = _Hyperscan(hs) if hs is not None else _RE2()
    return _ENGINE


def reset_engine() -> None:
    """Forget the engine (tests switch between them)."""
    global _ENGINE
    _ENGINE = None


# -- what is kept of the hits ----------------------------------------------------


class _Keep:
    """The first ``limit // 2`` and the last ``limit - limit // 2`` of a stream
    of encoded hits, and how many there were. ``limit`` None keeps them all."""

    def __init__(self, limit: int | None) -> None:
        self.count = 0
        self.half = limit // 2 if limit is not None else None
        self.first: list[int] = []
        self.ring: deque[int] = deque(maxlen=(limit - limit // 2) if limit is not None else None)

    def add(self, enc: np.ndarray) -> None:
        n = len(enc)
        if not n:
            return
        self.count += n
        if self.half is None:
            self.first.extend(enc.tolist())
            return
        need = self.half - len(self.first)
        if need > 0:
            self.first.extend(enc[:need].tolist())
            enc = enc[need:]
        if len(enc) and self.ring.maxlen:
            self.ring.extend(enc[-self.ring.maxlen :].tolist())

    def kept(self) -> list[int]:
        return self.first + list(self.ring)


def _ends_of(items: list[LineMatch], limit: int | None) -> list[LineMatch]:
    """The first ``limit // 2`` and the last ``limit - limit // 2`` of ``items``."""
    if limit is None or len(items) <= limit:
        return items
    half = limit // 2
    return items[:half] + items[len(items) - (limit - half) :]


@dataclass
class Part:
    """What scanning one range of a file found (line numbers relative to it)."""

    start: int
    stop: int
    n_newlines: int
    other: list[LineMatch]
    frequent: list[LineMatch]
    n_other: int
    n_frequent: int
    last_byte: bytes
    damage: str | None = None
    frequent_counted: bool = True  # False: n_frequent is a lower bound


def _source(src: Path | Source) -> Source:
    return src if isinstance(src, Source) else Source(src)


def scan_range(
    src: Path | Source, start: int, stop: int | None, limits: tuple[int | None, int | None] = (None, None)
) -> Part:
    """Scan bytes ``[start, stop)`` of a file (``stop`` None: to its end, for
    a stream whose length is not known); ``start`` is a line start.
    ``limits``: how many non-frequent and frequent hits to keep."""
    source = _source(src)
    stop = (1 << 62) if stop is None else stop
    eng = engine()
    keep_other, keep_frequent = _Keep(limits[0]), _Keep(limits[1])
    forward = True  # frequent lines still read line by line
    flagged: list[tuple[int, int]] = []  # blocks after that with frequent lines in them
    checkpoints: list[tuple[int, int]] = []  # (offset of a block's first byte, newlines before it)
    newlines = 0
    offset = start
    last = b""
    # (Keeping every hit, nothing is skipped: whole blocks.)
    piece = min(PIECE, BLOCK) if keep_frequent.half is not None else BLOCK
    with source.open() as fh:
        want = piece
        while offset < stop:
            # A block ends at its last newline; the partial line after it is
            # read again with the next block (no copying of carried bytes).
            fh.seek(offset)
            asked = min(want, stop - offset)
            block = fh.read(asked)
            if not block:
                break
            at_end = offset + len(block) >= stop or len(block) < asked
            cut = len(block) if at_end else block.rfind(b"\n") + 1
            if cut == 0:
                if want < MAX_CARRY:
                    want *= 2  # a very long line: read more of it
                    continue
                cut = len(block)  # longer than MAX_CARRY: scanned in pieces
            if at_end:
                last = block[-1:]
            checkpoints.append((offset, newlines))
            body = memoryview(block)[:cut] if cut < len(block) else block
            # Frequent lines (epoch lines, printed all run long) are read line
            # by line until the first ones are kept; after that a block is only
            # asked whether it holds any, and the last ones are read at the end.
            if forward:
                ends, masks = eng.matches(body, ALL)
                if len(ends):
                    enc = (ends + offset) * 8 + masks
                    freq = ((masks & FREQUENT) != 0) & ((masks & ALARM) == 0)  # an alarm is an alarm
                    keep_frequent.add(enc[freq])
                    keep_other.add(enc[~freq])
                forward = keep_frequent.half is None or len(keep_frequent.first) < keep_frequent.half
            else:
                ends, masks = eng.matches(body, MAIN)
                if len(ends):
                    keep_other.add((ends + offset) * 8 + masks)
                if eng.any_frequent(body):
                    flagged.append((offset, offset + cut))
            newlines += block.count(b"\n", 0, cut)
            offset += cut
            want = piece if forward else BLOCK
        damage = getattr(fh, "damage", None)
        stop = min(stop, offset)
        counted = _last_frequent(fh, eng, flagged, keep_frequent)
        found = _resolve(fh, keep_other.kept() + keep_frequent.kept(), checkpoints, stop)
    other = [h for h in found if not h.frequent]
    also_other = {h.start for h in other}  # found again in a flagged block: an alarm wins
    frequent = [h for h in found if h.frequent and h.start not in also_other]
    n_frequent = keep_frequent.count - (len(found) - len(other) - len(frequent))
    return Part(start, stop, newlines, other, frequent, keep_other.count, n_frequent, last, damage, counted)


def _split(
    ends: np.ndarray, masks: np.ndarray, f_ends: np.ndarray, f_masks: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One group per line: an alarm that is also a frequent line is an alarm;
    a frequent line that only matches other signatures too is a frequent one."""
    if not len(ends) or not len(f_ends):
        return ends, masks, f_ends, f_masks
    alarm = np.isin(f_ends, ends[(masks & ALARM) != 0])
    f_ends, f_masks = f_ends[~alarm], f_masks[~alarm]
    plain = (masks == OTHER) & np.isin(ends, f_ends)
    return ends[~plain], masks[~plain], f_ends, f_masks


def _last_frequent(fh: Reader, eng: _Hyperscan | _RE2, flagged: list[tuple[int, int]], keep: _Keep) -> bool:
    """Read the last frequent lines from the flagged blocks, last block first,
    until the ring of last ones is full; whether every frequent line was counted."""
    if not flagged:
        return True
    want = keep.ring.maxlen or 0
    found: list[np.ndarray] = []
    n = 0
    i = len(flagged)
    whole = True  # every flagged byte read
    while i > 0 and n < want:
        i -= 1
        a, b = flagged[i]
        fh.seek(a)
        raw = fh.read(b - a)
        data = memoryview(raw)
        # The block's end first, a piece at a time (cut at line starts), until enough.
        hi = len(raw)
        while hi > 0 and n < want:
            lo = raw.rfind(b"\n", 0, hi - PIECE) + 1 if hi > PIECE else 0
            part = data[lo:hi]
            ends, masks = eng.matches(part, FREQ)
            m_ends, m_masks = eng.matches(part, MAIN)
            _, _, ends, masks = _split(m_ends, m_masks, ends, masks)
            found.append((ends + a + lo) * 8 + masks)
            n += len(ends)
            hi = lo
        whole = hi == 0
    for enc in reversed(found):
        keep.add(enc)
    return i == 0 and whole


def _resolve(
    fh: Reader, encoded: list[int], checkpoints: list[tuple[int, int]], stop: int
) -> list[LineMatch]:
    """Kept hits as LineMatch objects with line numbers (relative to the range's
    start), read back from the blocks they lie in."""
    out: list[LineMatch] = []
    if not encoded:
        return out
    starts = [c[0] for c in checkpoints]
    by_block: dict[int, list[tuple[int, int]]] = {}
    for enc in encoded:
        end, mask = enc >> 3, enc & 7
        by_block.setdefault(bisect.bisect_right(starts, end) - 1, []).append((end, mask))
    for b in sorted(by_block):  # in file order: a stream is read once
        base, before = checkpoints[b]
        items = sorted(by_block[b])
        fh.seek(base)
        data = fh.read(items[-1][0] - base)
        counted, counted_at = before, 0
        for end, mask in items:
            rel_start = data.rfind(b"\n", 0, end - base) + 1
            counted += data.count(b"\n", counted_at, rel_start)
            counted_at = rel_start
            alarm = bool(mask & ALARM)
            out.append(
                LineMatch(
                    counted + 1,
                    base + rel_start,
                    min(end + 1, stop),
                    alarm,
                    bool(mask & FREQUENT) and not alarm,
                )
            )
    return out


def merge(
    src: Path | Source, size: int | None, parts: list[Part], limits: tuple[int | None, int | None]
) -> Scan:
    """One Scan from the parts of a file, in order (``size`` None: where the
    last part ended)."""
    source = _source(src)
    if size is None:
        size = parts[-1].stop if parts else 0
    other: list[LineMatch] = []
    frequent: list[LineMatch] = []
    newlines = 0
    n_other = n_frequent = 0
    for p in parts:
        for found, dst in ((p.other, other), (p.frequent, frequent)):
            dst.extend(
                h if not newlines else LineMatch(h.line + newlines, h.start, h.end, h.alarm, h.frequent)
                for h in found
            )
        newlines += p.n_newlines
        n_other += p.n_other
        n_frequent += p.n_frequent
    other, frequent = _ends_of(other, limits[0]), _ends_of(frequent, limits[1])
    last = parts[-1].last_byte if parts else b""
    n_lines = newlines + (1 if size and last != b"\n" else 0)
    hits = sorted(other + frequent, key=lambda h: h.start)
    return Scan(
        source.path,
        size,
        n_lines,
        newlines,
        hits,
        n_other + n_frequent,
        n_other - len(other),
        n_frequent - len(frequent),
        None if source.plain else source,
        next((p.damage for p in parts if p.damage), None),
        all(p.frequent_counted for p in parts),
    )


def scan_file(
    src: Path | Source, limits: tuple[int | None, int | None] = (None, None), size: int | None = None
) -> Scan:
    """Find the signature lines of a file: all of them, or the first and last
    of each group when ``limits`` says how many. A plain file is read up to
    ``size`` (default: its size now); a compressed one to its end or its cap."""
    source = _source(src)
    if size is None and source.plain:
        size = source.path.stat().st_size
    return merge(source, size, [scan_range(source, 0, size, limits)], limits)


def split_points(path: Path, size: int, pieces: int) -> list[tuple[int, int]]:
    """``[start, stop)`` ranges of about equal size, each starting at a line start."""
    if pieces <= 1 or size < 2 * BLOCK:
        return [(0, size)]
    cuts = [0]
    with open_regular(path) as fh:
        for k in range(1, pieces):
            at = max(size * k // pieces, cuts[-1])
            fh.seek(at)
            probe = fh.read(min(MAX_CARRY, size - at))
            nl = probe.find(b"\n")
            if nl < 0:
                continue
            cut = at + nl + 1
            if cuts[-1] < cut < size:
                cuts.append(cut)
    cuts.append(size)
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def count_lines(path: Path, size: int) -> tuple[int, int]:
    """(lines, newlines) of the first ``size`` bytes of a file."""
    newlines = 0
    last = b""
    with open_regular(path) as fh:
        remaining = size
        while remaining > 0 and (block := fh.read(min(BLOCK, remaining))):
            newlines += block.count(b"\n")
            remaining -= len(block)
            last = block[-1:]
    return newlines + (1 if size and last != b"\n" else 0), newlines

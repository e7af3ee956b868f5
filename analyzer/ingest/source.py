"""Open an evidence file as the bytes of its text, whatever it was stored as.

* **Compression is told by content**, not by name: gzip, bzip2, xz and zstd
  (zstd needs the ``zstandard`` package). A ``worker-1.log`` that is really
  gzip is read; a ``.gz`` that is really plain text is read as it is.
* **Decompression streams.** Nothing is written to disk and memory stays flat:
  the file is decompressed chunk by chunk as it is read. Going back (pass 2
  of the scan reads windows in order; a few kept hits are re-read) restarts
  the stream, which costs time, never disk.
* **Caps.** A file may not expand past ``ReadLimits.max_bytes``, nor more than
  ``max_ratio`` times its compressed size once ``ratio_floor`` bytes came
  out (a decompression bomb: 2 GB of zeros is a 2 MB gzip). What came out
  before the cap is read, and the file carries a note saying why it stopped.
* **Damage.** A truncated or corrupt archive gives what could be
  decompressed before the damage, plus a note.
* **Encoding.** UTF-16 (with a byte-order mark, or told by its NUL bytes) is
  turned into UTF-8 as it is read. UTF-8 and anything else pass as bytes;
  lines are decoded later (invalid UTF-8 falls back to Latin-1 there).
"""

from __future__ import annotations

import bz2
import codecs
import lzma
import os
import re
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any


@dataclass(frozen=True)
class ReadLimits:
    max_bytes: int = 16 << 30  # bytes one file may expand to
    max_ratio: float = 200.0  # expansion past this ratio ...
    ratio_floor: int = 64 << 20  # ... once this many bytes came out, is a bomb


DEFAULT_LIMITS = ReadLimits()

MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
_CHUNK = 1 << 20  # compressed bytes fed at a time
_KEEP_BACK = 32 << 20  # decoded bytes kept for short backward seeks


class NotRegular(OSError):
    """A FIFO, a device, a socket: never opened (it could block or never end)."""


def open_regular(path: Path) -> IO[bytes]:
    """Open a regular file for reading; anything else raises NotRegular
    without blocking (a FIFO is opened non-blocking, then checked)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegular(f"{path}: not a regular file ({file_type(mode)})")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def file_type(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


# A compressor's suffix on a file's name (``worker-1.exit.gz``): the file is
# still what the rest of its name says.
_COMPRESSED_NAME = re.compile(r"\.(?:gz|bz2|xz|zst|zstd)$", re.I)


def plain_name(name: str) -> str:
    """A file's name without its compressors' suffixes."""
    while (bare := _COMPRESSED_NAME.sub("", name)) != name and bare:
        name = bare
    return name


def compression_of(head: bytes) -> str | None:
    for magic, kind in MAGIC:
        if head.startswith(magic):
            return kind
    return None


def encoding_of(head: bytes) -> str | None:
    """``utf-16-le``/``utf-16-be`` when ``head`` is UTF-16 text, else None."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"  # the codec reads the mark and drops it
    sample = head[:4096]
    if len(sample) < 8:
        return None
    even, odd = sample[0::2], sample[1::2]
    if odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.05 * len(even):
        return "utf-16-le"
    if even.count(0) > 0.4 * len(even) and odd.count(0) < 0.05 * len(odd):
        return "utf-16-be"
    return None


@dataclass(frozen=True)
class Source:
    """How to read one file: its path, what it is compressed with and the
    encoding its bytes are turned from. Picklable (worker processes open it)."""

    path: Path
    compression: str | None = None
    encoding: str | None = None
    limits: ReadLimits = ReadLimits()

    @property
    def plain(self) -> bool:
        """Read as it is on disk (seekable; its size is its length)."""
        return self.compression is None and self.encoding is None

    def open(self) -> Reader:
        if self.plain:
            return open_regular(self.path)
        return Decoded(self)

    def describe(self) -> str:
        parts = [p for p in (self.compression and f"{self.compression}-compressed", self.encoding) if p]
        return ", ".join(parts)


def detect(path: Path, limits: ReadLimits = ReadLimits()) -> Source:
    """The Source of ``path``, from its first bytes (and, when compressed,
    from the first bytes of what it holds)."""
    with open_regular(path) as fh:
        head = fh.read(4096)
    compression = compression_of(head)
    if compression is not None:
        with Decoded(Source(path, compression, None, limits)) as d:
            head = d.read(4096)
    return Source(path, compression, encoding_of(head), limits)


class _Decompressor:
    """One compressed stream as chunks of decoded bytes, member after member."""

    def __init__(self, src: Source, raw: IO[bytes]) -> None:
        self.kind = src.compression
        self.raw = raw
        self.limits = src.limits
        self.consumed = 0  # compressed bytes fed
        self.produced = 0  # decompressed bytes out
        self.damage: str | None = None
        self.done = False
        self.pending = b""
        self.in_member = False
        self.d: Any = self._new()

    def _new(self) -> Any:
        if self.kind == "gzip":
            return zlib.decompressobj(wbits=31)
        if self.kind == "bzip2":
            return bz2.BZ2Decompressor()
        if self.kind == "xz":
            return lzma.LZMADecompressor()
        if self.kind == "zstd":
            try:
                import zstandard
            except ImportError:
                raise OSError(
                    f"{self.raw.name}: zstd-compressed; install the 'zstandard' package to read it"
                ) from None
            return zstandard.ZstdDecompressor().decompressobj()
        return None

    def chunk(self, want: int) -> bytes:
        """Up to ``want`` more decoded bytes; b"" at the end (or at damage/cap)."""
        if self.done:
            return b""
        try:
            out = self._step(want)
        except Exception as exc:  # noqa: BLE001 - zlib, bz2, lzma, zstd: each has its own error
            self._stop(f"could not be decompressed past byte {self.produced} ({exc}); read up to there")
            return b""
        self.produced += len(out)
        cap = self._cap()
        if cap:
            self._stop(cap)
        return out

    def _read_raw(self, size: int = _CHUNK) -> bytes:
        data = self.raw.read(size)
        self.consumed += len(data)
        return data

    def _end(self) -> bytes:
        if self.in_member:
            self._stop(
                f"could not be decompressed to the end (the file is truncated); read up to byte {self.produced}"
            )
        self.done = True
        return b""

    def _step(self, want: int) -> bytes:
        """Concatenated members (``cat a.gz b.gz``, rotated logs) are one stream."""
        gzip = self.kind == "gzip"
        while True:
            if self.d.eof:
                rest = self.d.unused_data
                self.d = self._new()
                self.in_member = False
                self.pending = rest + self.pending
                if not self.pending.strip(b"\0"):
                    self.pending = b""  # zero padding after the last member
            if self.kind == "zstd":
                # No output limit in zstd's API: small inputs keep each output
                # bounded, and the caps are checked after every one.
                if not self.pending:
                    self.pending = self._read_raw(16 << 10)
                    if not self.pending:
                        return self._end()
                data, self.pending = self.pending, b""
                self.in_member = True
                out = self.d.decompress(data)
            elif gzip:
                if not self.pending:
                    self.pending = self._read_raw()
                    if not self.pending:
                        return self._end()
                self.in_member = True
                out = self.d.decompress(self.pending, want)
                self.pending = self.d.unconsumed_tail
            else:
                data = b""
                if self.d.needs_input:
                    if not self.pending:
                        self.pending = self._read_raw()
                        if not self.pending:
                            return self._end()
                    data, self.pending = self.pending, b""
                self.in_member = True
                out = self.d.decompress(data, max_length=want)
            if out:
                return out  # type: ignore[no-any-return]

    def _cap(self) -> str | None:
        lim = self.limits
        if self.produced > lim.max_bytes:
            return (
                f"decompression stopped at {lim.max_bytes:,} bytes, the most one file may expand to; "
                "read up to there (raise it with --max-expand)"
            )
        if self.produced > lim.ratio_floor and self.produced > lim.max_ratio * max(self.consumed, 1):
            return (
                f"decompression stopped at byte {self.produced:,}: the file expands more than "
                f"{lim.max_ratio:g} times (a decompression bomb?); read up to there (raise it with --max-ratio)"
            )
        return None

    def _stop(self, why: str) -> None:
        if self.damage is None:
            self.damage = why
        self.done = True


class Decoded:
    """A compressed and/or UTF-16 file as a stream of UTF-8 bytes: read(n),
    seek(pos) (forward: read on; backward: from what is kept, else from the
    start again) and tell()."""

    def __init__(self, src: Source) -> None:
        self.src = src
        self.name = str(src.path)
        self.damage: str | None = None
        self._start()

    def _start(self) -> None:
        self.raw = open_regular(self.src.path)
        self.dec = _Decompressor(self.src, self.raw) if self.src.compression else None
        self.text = (
            codecs.getincrementaldecoder(self.src.encoding)(errors="replace") if self.src.encoding else None
        )
        self.buf = bytearray()
        self.buf_start = 0  # stream offset of buf[0]
        self.pos = 0
        self.eof = False

    def _more(self, want: int) -> bool:
        """Append decoded bytes to buf; False at the end."""
        if self.eof:
            return False
        want = min(max(want, 1 << 16), 8 << 20)
        if self.dec is not None:
            data = self.dec.chunk(want)
            if self.dec.damage:
                self.damage = self.dec.damage
        else:
            data = self.raw.read(want)
        final = not data
        if self.text is not None:
            data = self.text.decode(data, final).encode("utf-8", "surrogatepass")
        if final:
            self.eof = True
        self.buf += data
        return bool(data) or not final

    def read(self, n: int = -1, /) -> bytes:
        if n is None or n < 0:
            n = 1 << 62
        while self.buf_start + len(self.buf) - self.pos < n and self._more(n):
            pass
        lo = self.pos - self.buf_start
        out = bytes(self.buf[lo : lo + n])
        self.pos += len(out)
        # Forget what is far behind (a short step back stays cheap).
        drop = self.pos - self.buf_start - _KEEP_BACK
        if drop > 0:
            del self.buf[:drop]
            self.buf_start += drop
        return out

    def seek(self, pos: int, whence: int = 0, /) -> int:
        if whence != 0:
            raise OSError("only absolute seeks")
        if pos < self.buf_start:
            self.close()
            self._start()
        while pos > self.buf_start + len(self.buf):
            skip = pos - (self.buf_start + len(self.buf))
            if not self._more(min(skip, 8 << 20)):
                break
            drop = len(self.buf) - _KEEP_BACK
            if drop > 0:
                del self.buf[:drop]
                self.buf_start += drop
        self.pos = min(pos, self.buf_start + len(self.buf))
        return self.pos

    def tell(self) -> int:
        return self.pos

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> Decoded:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# What ``Source.open`` gives: a plain file, or a decoded stream with the same
# read/seek/tell/close (and ``damage``: why it ended early, if it did).
Reader = IO[bytes] | Decoded

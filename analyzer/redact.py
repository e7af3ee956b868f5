"""Keep secrets (and, when asked, host and user names) out of every output.

Reports are attached to incident tickets, and logs hold what jobs printed:
tokens in URLs, ``Authorization`` headers, ``export HF_TOKEN=...``. Redaction
is applied to the one report model every output is rendered from (HTML,
JSON, Markdown, the terminal) and to the tables the ``tables`` command writes,
so no renderer has to remember it. It is on by default:

* ``secrets`` (default): secret-looking tokens are replaced by ``[REDACTED]``:
  Bearer/Basic credentials, passwords in URLs, ``password=``/``token=``/
  ``..._key=`` values, AWS/GCP/Azure/Hugging Face/GitHub/GitLab/Slack/OpenAI/
  Stripe/npm token shapes, JWTs, private-key blocks;
* ``hosts`` (``--redact hosts``): also host names, IP addresses and user names,
  each replaced by a stable pseudonym (``host-1``, ``ip-1``, ``user-1``) so
  the report still reads (the same host is the same pseudonym everywhere),
  for tickets that leave the company;
* ``none`` (``--no-redact``): nothing is changed.

What rules saw is not changed: redaction is of what is shown.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

MASK = "[REDACTED]"

# Names whose value is a secret: ``HF_TOKEN``, ``db.password``, ``aws_secret_access_key``,
# ``WANDB_API_KEY``, ``AccountKey`` (not ``num_tokens``, not a collective's ``key``).
_SECRET_NAME = (
    r"(?:[A-Za-z0-9]+[_.-])*(?:password|passwd|pwd|pass|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|secret[_-]?key|private[_-]?key|client[_-]?secret|account[_-]?key|accountkey|auth[_-]?token"
    r"|credentials?|session[_-]?token|sas[_-]?token|signature|sig)"
)

_RULES: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    # Private keys: a PEM block, on real lines or with \n escaped inside JSON.
    (
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:.|\n)*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"
            r"|-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[^\"']*"
        ),
        "-----BEGIN PRIVATE KEY-----" + MASK + "-----END PRIVATE KEY-----",
    ),
    # HTTP credentials.
    (re.compile(r"(?i)\b(Bearer|Basic|Token|Digest)(\s+)[A-Za-z0-9._~+/=\-]{8,}"), rf"\1\2{MASK}"),
    # user:password@ in a URL (any scheme).
    (re.compile(r"\b([a-z][a-z0-9+.\-]*://)([^\s:/@]+):([^\s@/]+)@", re.I), rf"\1\2:{MASK}@"),
    # Token shapes of known providers.
    (re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"), MASK),  # AWS key ids
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), MASK),  # Google API key
    (re.compile(r"\bya29\.[0-9A-Za-z_\-]{20,}"), MASK),  # Google OAuth access token
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"), MASK),  # Hugging Face
    (re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}\b"), MASK),
    (re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}\b"), MASK),  # GitLab
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}\b"), MASK),  # Slack
    (re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}\b"), MASK),  # OpenAI, Anthropic
    (re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b"), MASK),  # Stripe
    (re.compile(r"\bnpm_[A-Za-z0-9]{36}\b|\bdckr_pat_[A-Za-z0-9_\-]{20,}\b"), MASK),  # npm, Docker
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), MASK),  # JWT
    # name=value, name: value, "name": "value" (env dumps, URLs' query strings, JSON, YAML).
    (
        re.compile(
            rf"(?i)(?<![A-Za-z0-9])({_SECRET_NAME})(\"?\s*[=:]\s*\"?|\s+)"
            r"(?!\[REDACTED\])([^\s\"'&;,<>]{3,})"
        ),
        lambda m: m[0] if _plain_word(m) else f"{m[1]}{m[2]}{MASK}",
    ),
)


def _plain_word(m: re.Match[str]) -> bool:
    """``token 5 of 12``, ``password: <none>``: a separator of spaces only
    needs a value that looks like a credential, not a word."""
    if m[2].strip():
        return False
    v = m[3]
    return not (len(v) >= 12 and re.search(r"\d", v) and re.search(r"[A-Za-z]", v))


# Every rule above needs one of these to match: most texts have none, and
# one search saves them the fourteen substitutions.
_MAYBE = re.compile(
    r"(?i)PRIVATE KEY|bearer|basic|token|digest|://[^\s/@]*:[^\s@/]*@|AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA"
    r"|AIza|ya29\.|hf_|gh[pousr]_|github_pat_|glpat-|xox|sk-|_live_|_test_|npm_|dckr_pat_|eyJ"
    r"|pass|pwd|secret|key|credential|signature|sig"
)


@lru_cache(maxsize=1 << 16)
def redact_secrets(text: str) -> str:
    if not text or not _MAYBE.search(text):
        return text
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    return text


# -- host and user names ----------------------------------------------------------------

_IPV4 = re.compile(r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\d.])")
_FQDN = re.compile(
    r"(?<![\w.\-/])(?:[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?\.)+"
    r"(?:com|net|org|io|ai|dev|cloud|internal|local|lan|corp|svc|cluster|edu|gov|[a-z]{2})(?![\w\-])",
    re.I,
)
_USER_PATHS = re.compile(r"(/home/|/Users/|/users/|C:\\\\Users\\\\|C:\\Users\\)([^/\\\s:]+)")
# user@host.domain (not a rule's finding id such as FW001@worker:1).
_USER_AT = re.compile(r"(?<![\w.\-])([a-z_][a-z0-9_.\-]{0,31})@(?=[a-z0-9\-]+\.[a-z0-9\-])")
# What names a host without a dot: the host part of host:port (TF_CONFIG, gRPC peers).
_HOST_PORT = re.compile(r"(?<![\w.\-/:])([A-Za-z][A-Za-z0-9\-]{1,62})(?=:\d{2,5}\b)")
# Words that look like host:port but are not hosts.
_NOT_HOSTS = frozenset(
    {
        "localhost",
        "http",
        "https",
        "grpc",
        "ipv4",
        "ipv6",
        "port",
        "line",
        "step",
        "epoch",
        "task",
        "tcp",
        "udp",
    }
    # TensorFlow's own names: tasks (worker:12) and devices (GPU:10) are not hosts.
    | {
        "worker",
        "chief",
        "master",
        "ps",
        "evaluator",
        "replica",
        "rank",
        "job",
        "cpu",
        "gpu",
        "tpu",
        "device",
    }
)
# Public names in TF's own messages: they identify nobody.
_PUBLIC_HOSTS = frozenset(
    {
        "type.googleapis.com",
        "github.com",
        "pypi.org",
        "files.pythonhosted.org",
        "tensorflow.org",
        "www.tensorflow.org",
        "developer.nvidia.com",
        "docs.nvidia.com",
        "kubernetes.io",
        "stackoverflow.com",
    }
)


class HostMasker:
    """Stable pseudonyms: the same host is ``host-3`` everywhere in one report."""

    def __init__(self) -> None:
        self.names: dict[tuple[str, str], str] = {}

    def _alias(self, kind: str, value: str) -> str:
        key = (kind, value.lower())
        if key not in self.names:
            n = sum(1 for k in self.names if k[0] == kind) + 1
            self.names[key] = f"{kind}-{n}"
        return self.names[key]

    def __call__(self, text: str) -> str:
        if not text:
            return text
        text = _USER_PATHS.sub(lambda m: m[1] + self._alias("user", m[2]), text)
        text = _USER_AT.sub(lambda m: self._alias("user", m[1]) + "@", text)
        text = _IPV4.sub(lambda m: m[0] if m[0].startswith(("0.", "127.")) else self._alias("ip", m[0]), text)
        text = _FQDN.sub(lambda m: m[0] if m[0].lower() in _PUBLIC_HOSTS else self._alias("host", m[0]), text)
        return _HOST_PORT.sub(
            lambda m: (
                m[0]
                if m[1].lower() in _NOT_HOSTS or m[1].startswith(("host-", "ip-", "user-"))
                else self._alias("host", m[1])
            ),
            text,
        )


# -- policies ---------------------------------------------------------------------------------

POLICIES = ("secrets", "hosts", "none")


def text_redactor(policy: str) -> Callable[[str], str]:
    """The function a policy applies to each piece of text."""
    if policy not in POLICIES:
        raise ValueError(f"unknown redaction {policy!r}: one of {', '.join(POLICIES)}")
    if policy == "none":
        return lambda s: s
    if policy == "secrets":
        return redact_secrets
    hosts = HostMasker()
    return lambda s: hosts(redact_secrets(s))


def redact_value(value: Any, fn: Callable[[str], str]) -> Any:
    """``value`` with ``fn`` applied to every string in it: dataclasses, dicts
    (keys too), lists and tuples are rebuilt; other values pass."""
    if isinstance(value, str):
        return fn(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: redact_value(getattr(value, f.name), fn) for f in dataclasses.fields(value) if f.init
        }
        return dataclasses.replace(value, **changes)
    if isinstance(value, dict):
        return {redact_value(k, fn): redact_value(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v, fn) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_value(v, fn) for v in value)
    return value


def redact_table(table: Any, fn: Callable[[str], str]) -> Any:
    """A pyarrow table with ``fn`` applied to every string in it (nested
    columns included), for the Parquet files of the ``tables`` command."""
    import pyarrow as pa

    columns = []
    for name in table.column_names:
        col = table.column(name)
        if _has_strings(col.type):
            values = [redact_value(v, fn) for v in col.to_pylist()]
            col = pa.chunked_array([pa.array(values, type=col.type)])
        columns.append(col)
    return pa.Table.from_arrays(columns, schema=table.schema)


def _has_strings(t: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return True
    if pa.types.is_dictionary(t):
        return _has_strings(t.value_type)
    if pa.types.is_map(t):  # before lists: a map is a list of key/item pairs
        return _has_strings(t.key_type) or _has_strings(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _has_strings(t.value_type)
    if pa.types.is_struct(t):
        return any(_has_strings(t.field(i).type) for i in range(t.num_fields))
    return False

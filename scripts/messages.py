"""docs/messages.md, generated from the message catalogue
(analyzer/ingest/messages.py) and the fixtures.

    python scripts/messages.py            # rewrite docs/messages.md
    python scripts/messages.py --check    # exit 1 when it is stale (tests/test_docs.py)

For each message, in the order records are tried: what it means, its tags,
who prints it (file, function, eras), and where the recorded runs and real
excerpts hold it. Then the phrases, and a count per emitter.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "messages.md"


def _seen() -> tuple[dict[str, Counter[str]], int]:
    """kind -> fixture -> records of that kind; and how many fixtures were read."""
    from mwms_doctor.pipeline import load_tables

    fixtures = ROOT / "fixtures"
    paths = {f"runs/{p.name}": p / "logs" for p in sorted((fixtures / "runs").iterdir())}
    paths |= {f"blind/{p.name}": p / "logs" for p in sorted((fixtures / "blind" / "runs").iterdir())}
    paths |= {
        f"excerpts/{p.parent.parent.name}/{p.parent.name}": p
        for p in sorted((fixtures / "excerpts").glob("*/*/excerpt.txt"))
    }
    seen: dict[str, Counter[str]] = defaultdict(Counter)
    for name, path in paths.items():
        events = load_tables(path)[0].events
        kinds = events.column("kind").to_pylist()
        fields = events.column("fields").to_pylist()
        for kind, f in zip(kinds, fields, strict=True):
            if kind:
                seen[kind][name] += 1
            tf_kind = dict(f or ()).get("tf_kind")
            if tf_kind:
                seen[tf_kind][name] += 1
    return seen, len(paths)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def page() -> str:
    from mwms_doctor.ingest.messages import MESSAGES, PHRASES, TIERS
    from mwms_doctor.ingest.templates import BENIGN, TEMPLATES

    seen, n_fixtures = _seen()
    out = [
        "# Messages",
        "",
        "Generated from the message catalogue (`analyzer/ingest/messages.py`) and the fixtures by",
        "`python scripts/messages.py`; `tests/test_docs.py` keeps this page current.",
        "",
        f"{len(MESSAGES)} messages ({len(BENIGN)} of them known harmless) and {len(PHRASES)} phrases. "
        "A record's kind is the first message whose regex matches it, tried in the order below: "
        f"harmless ones first (on a record's first line), then by tier ({', '.join(TIERS)}), then in "
        "catalogue order. *Seen* counts records of that kind in the "
        f"{n_fixtures} recorded runs and real excerpts of `fixtures/`.",
        "",
        "## Per emitter",
        "",
        "| emitter | messages | phrases |",
        "|---|---|---|",
    ]
    by_emitter = Counter(m.origin.emitter for m in MESSAGES)
    phrase_emitters = Counter(p.origin.emitter for p in PHRASES)
    for emitter in sorted(set(by_emitter) | set(phrase_emitters), key=lambda e: (-by_emitter[e], e)):
        out.append(f"| {emitter} | {by_emitter[emitter]} | {phrase_emitters[emitter]} |")
    out += ["", "## Messages, in the order they are tried", ""]
    for i, m in enumerate([*BENIGN, *TEMPLATES], start=1):
        where = seen.get(m.kind, Counter())
        examples = ", ".join(f"`{name}`" for name, _ in sorted(where.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
        origin = m.origin
        place = " · ".join(p for p in (f"`{origin.file}`" if origin.file else "", origin.function) if p)
        out += [
            f"### {i}. `{m.kind}`",
            "",
            _cell(m.means),
            "",
            f"- tier: {'harmless (first line)' if m.benign else m.tier}"
            + (f"; tags: {', '.join(m.tags)}" if m.tags else "")
            + (f"; severity at least {m.severity}" if m.severity else ""),
            f"- emitted by: {origin.emitter}" + (f", {place}" if place else "") + (f" ({origin.eras})" if origin.eras else ""),
            f"- seen: {sum(where.values())} record(s) in {len(where)} fixture(s)" + (f": {examples}" if examples else "")
            + (f"; also {', '.join(m.seen)}" if m.seen else ""),
            f"- regex: `{_cell(m.regex)}`",
            "",
        ]
    out += ["## Phrases", "", "Words inside messages of any kind; their tags say what they mean wherever they appear.", ""]
    out += ["| phrase | words (any case) | tags | gRPC reason | errno | emitted by |", "|---|---|---|---|---|---|"]
    for p in PHRASES:
        out.append(
            f"| `{p.name}` | `{_cell(p.regex)}` | {', '.join(p.tags)} | {p.grpc_reason or ''} | "
            f"{p.errno if p.errno is not None else ''} | {_cell(str(p.origin))} |"
        )
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    text = page()
    if "--check" in sys.argv:
        sys.exit(0 if TARGET.read_text(encoding="utf-8") == text else 1)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")

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


def _seen() -> tuple[dict[str, Counter[str]], dict[str, list[str]], int]:
    """kind -> fixture -> records of that kind; kind -> the texts of its
    records; and how many fixtures were read."""
    from mwms_doctor.pipeline import load_tables

    fixtures = ROOT / "fixtures"
    paths = {f"runs/{p.name}": p / "logs" for p in sorted((fixtures / "runs").iterdir())}
    paths |= {f"blind/{p.name}": p / "logs" for p in sorted((fixtures / "blind" / "runs").iterdir())}
    paths |= {
        f"excerpts/{p.parent.parent.name}/{p.parent.name}": p
        for p in sorted((fixtures / "excerpts").glob("*/*/excerpt.txt"))
    }
    seen: dict[str, Counter[str]] = defaultdict(Counter)
    texts: dict[str, list[str]] = defaultdict(list)
    for name, path in paths.items():
        events = load_tables(path)[0].events
        for kind, f, text in zip(
            events.column("kind").to_pylist(),
            events.column("fields").to_pylist(),
            events.column("text").to_pylist(),
            strict=True,
        ):
            for k in (kind, dict(f or ()).get("tf_kind")):
                if k:
                    seen[k][name] += 1
                    texts[k].append(text)
    return seen, texts, len(paths)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def page() -> str:
    from mwms_doctor.ingest.messages import MESSAGES, PHRASES, TIERS
    from mwms_doctor.ingest.templates import BENIGN, TEMPLATES

    seen, texts, n_fixtures = _seen()
    kinds = list(dict.fromkeys(m.kind for m in [*BENIGN, *TEMPLATES]))
    out = [
        "# Messages",
        "",
        "Generated from the message catalogue (`analyzer/ingest/messages.py`) and the fixtures by",
        "`python scripts/messages.py`; `tests/test_docs.py` keeps this page current.",
        "",
        f"{len(MESSAGES)} messages of {len(kinds)} kinds ({len(BENIGN)} messages known harmless), and "
        f"{len(PHRASES)} phrases. A record's kind is that of the first message that matches it, tried in the "
        f"order below: harmless ones first (on a record's first line), then by tier ({', '.join(TIERS)}), then "
        "in catalogue order; among one kind's messages, the one matching earliest in the record. *Seen* counts "
        f"records in the {n_fixtures} recorded runs and real excerpts of `fixtures/`.",
        "",
        "## Per emitter",
        "",
        "| emitter | messages | of them seen in the fixtures |",
        "|---|---|---|",
    ]
    seen_messages = {id(m): sum(1 for t in texts.get(m.kind, ()) if m.pattern.search(t)) for m in MESSAGES}
    by_emitter: dict[str, list[object]] = defaultdict(list)
    for m in MESSAGES:
        by_emitter[m.origin.emitter].append(m)
    for emitter, ms in sorted(by_emitter.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.append(f"| {_cell(emitter)} | {len(ms)} | {sum(1 for m in ms if seen_messages[id(m)])} |")
    out += ["", "## Messages, by kind, in the order they are tried", ""]
    for i, kind in enumerate(kinds, start=1):
        ms = [m for m in MESSAGES if m.kind == kind]
        first = ms[0]
        where = seen.get(kind, Counter())
        examples = ", ".join(f"`{n}`" for n, _ in sorted(where.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
        out += [
            f"### {i}. `{kind}`",
            "",
            _cell(first.means),
            "",
            f"- tier: {'harmless (first line)' if first.benign else first.tier}"
            + (f"; tags: {', '.join(first.tags)}" if first.tags else "")
            + (f"; severity at least {first.severity}" if first.severity else ""),
            f"- seen: {sum(where.values())} record(s) in {len(where)} fixture(s)"
            + (f": {examples}" if examples else ""),
            "",
            "| wording (regex) | emitted by | seen |",
            "|---|---|---|",
        ]
        for m in ms:
            origins = "<br>".join(_cell(str(o)) for o in m.origins)
            also = f"<br>also: {_cell('; '.join(m.seen))}" if m.seen else ""
            out.append(f"| `{_cell(m.regex)}` | {origins}{also} | {seen_messages[id(m)]} |")
        out.append("")
    out += [
        "## Phrases",
        "",
        "Words inside messages of any kind; their tags say what they mean wherever they appear.",
        "",
    ]
    out += [
        "| phrase | words (any case) | tags | gRPC reason | errno | emitted by |",
        "|---|---|---|---|---|---|",
    ]
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

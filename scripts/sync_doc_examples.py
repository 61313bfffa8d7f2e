"""Rewrite every ``<!-- example: APP/PATH -->`` block of the docs with that file of examples/, as
it is now (tests/integration/examples/test_guides_show_examples.py fails until the guide shows the file).

    .venv/bin/python scripts/sync_doc_examples.py
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"(<!-- example: ([^ ]+) -->\n```\w*\n)(.*?)(```)", re.S)


def main() -> None:
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        synced = BLOCK.sub(
            lambda m: m.group(1) + (ROOT / "examples" / m.group(2)).read_text(encoding="utf-8") + m.group(4), text
        )
        if synced != text:
            page.write_text(synced, encoding="utf-8")
            print(f"synced {page.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

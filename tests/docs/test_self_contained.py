"""The repository explains itself: no file cites documents a user of it cannot open.

Requirements that shaped a behaviour are described in the product's own words (the protocol's
name, the behaviour itself), never by a number or section of a document kept elsewhere.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).parents[2]

CITATIONS = re.compile(
    r"\.\./shared|shared/spec"  # a path outside the repository
    r"|(?<!RFC \d{4} )(?<!HTML )§"  # a section sign, except standards cited by name
    r"|\bspecs? 00\d"  # "spec 000"
    r"|(?<![\w.,:#-])00[0-4](?![\w.,%])"  # a document number: "000", "002's", "(003)"
)


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    files = [ROOT / name.decode() for name in listed if name]
    return [
        f
        for f in files
        if f.is_file() and f.suffix not in {".png", ".lock", ".ico"} and f != Path(__file__)
    ]


def test_no_file_cites_documents_outside_the_repository() -> None:
    found = []
    for path in tracked_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if CITATIONS.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert found == []

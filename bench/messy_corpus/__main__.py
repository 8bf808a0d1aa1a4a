"""``python -m bench.messy_corpus OUTPUT_DIR``: write the corpus there, to look at."""
from __future__ import annotations

import sys
from pathlib import Path

from bench.messy_corpus.build import build


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m bench.messy_corpus OUTPUT_DIR", file=sys.stderr)
        return 2
    files = build(Path(argv[0]))
    print(f"wrote {len(files)} files into {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

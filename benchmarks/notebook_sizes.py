"""How big the generated lesson notebooks are, and how much of that is a plot stored twice.

    python benchmarks/notebook_sizes.py              # notebooks/ (what students open, what the book builds)
    python benchmarks/notebook_sizes.py solutions

Every plot a widget shows is a PNG inside an ``HTMLModel``: once in the notebook's saved widget
state (the book page draws widgets from it; tests/test_book.py and tests/browser/test_site.py
require it) and once in the static HTML picture ``course_build.authoring.saved_widgets`` gives each
saved widget output (what JupyterLab shows while a freshly opened notebook is untrusted). Prints,
per lesson, the file size, the widget state's and the HTML outputs' sizes, and the bytes of PNGs
found in both; asserts nothing.
"""

import argparse
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PNG = re.compile(r"data:image/png;base64,[A-Za-z0-9+/=]+")


def html_outputs(notebook: dict) -> str:
    parts = []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            html = output.get("data", {}).get("text/html", "")
            parts.append(html if isinstance(html, str) else "".join(html))
    return "".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default="notebooks", help="notebooks or solutions")
    args = parser.parse_args()
    paths = sorted((ROOT / args.folder).glob("*.ipynb"))
    if not paths:
        raise SystemExit(f"no notebooks in {ROOT / args.folder}: run python -m course_build first")
    print(f"{'lesson':32s} {'file':>10s} {'widget state':>13s} {'HTML outputs':>13s} {'PNG in both':>12s}")
    totals = [0, 0, 0, 0]
    for path in paths:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        state = json.dumps(notebook.get("metadata", {}).get("widgets", {}))
        html = html_outputs(notebook)
        shared = set(PNG.findall(state)) & set(PNG.findall(html))
        row = [path.stat().st_size, len(state), len(html), sum(len(png) for png in shared)]
        totals = [t + r for t, r in zip(totals, row, strict=True)]
        print(
            f"{path.stem:32s} " + " ".join(f"{n:>{w},}" for n, w in zip(row, (10, 13, 13, 12), strict=True))
        )
    print(f"{'all':32s} " + " ".join(f"{n:>{w},}" for n, w in zip(totals, (10, 13, 13, 12), strict=True)))
    print(f"PNGs stored twice: {totals[3] / totals[0]:.0%} of the files' bytes")


if __name__ == "__main__":
    main()

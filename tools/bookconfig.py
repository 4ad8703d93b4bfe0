"""Write the instructor book's configuration, derived from the student one.

Usage: python tools/bookconfig.py instructor OUTDIR

The instructor book differs from the student book in two ways only: it is marked as the
instructor edition (``lecturelib_edition: instructor``: its downloads may hold answer code)
and the Exercises part lists the solution notebooks instead of the student notebooks.
(The chapters' short exercises show their solutions in both editions, ``hide_solutions:
false``, as closed dropdowns.)  Deriving both files keeps the two builds from drifting apart.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def instructor_config(config: dict) -> dict:
    config = dict(config)
    sphinx = dict(config.get("sphinx", {}))
    sphinx_config = dict(sphinx.get("config", {}))
    sphinx_config["hide_solutions"] = False
    sphinx_config["lecturelib_edition"] = "instructor"
    sphinx["config"] = sphinx_config
    config["sphinx"] = sphinx
    config["title"] = f"{config.get('title', '')} (instructor edition)"
    return config


def instructor_toc(toc: dict) -> dict:
    def swap(node):
        if isinstance(node, dict):
            return {k: (v.replace("exercises/", "solutions/", 1) if k == "file" and isinstance(v, str)
                        else swap(v)) for k, v in node.items()}
        if isinstance(node, list):
            return [swap(x) for x in node]
        return node

    return swap(toc)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "instructor":
        print(__doc__)
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    (out / "_config.yml").write_text(yaml.safe_dump(instructor_config(config), sort_keys=False))
    (out / "_toc.yml").write_text(yaml.safe_dump(instructor_toc(toc), sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

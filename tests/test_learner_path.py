"""The learner's path in words: the README and the book say the same, and every command works.

Every command a page or the README shows is checked against what exists (a Makefile
target, a ``lecturelib`` sub-command, the files it names), and the student's own command,
``lecturelib check``, is run exactly as the pages spell it.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from lecturelib.book.edition import readme_section

ROOT = Path(__file__).resolve().parent.parent
SUBCOMMANDS = {"check", "assign", "grade", "gradebook", "collect"}
EXAMPLE_PATHS = {"submissions/", "my-answers.ipynb"}  # stand for the instructor's own files


def normalised(markdown: str) -> str:
    markdown = re.sub(r"<!--.*?-->", "", markdown, flags=re.S)
    markdown = re.sub(r"^#+ ", "# ", markdown, flags=re.M)
    return " ".join(markdown.split())


def test_howto_page_and_readme_say_the_same_in_the_same_words():
    page = (ROOT / "howto.md").read_text(encoding="utf-8")
    body = page.split("\n", 1)[1]  # without the page title
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert normalised(readme_section(readme, "For students")) == normalised(body)
    toc = (ROOT / "_toc.yml").read_text()
    assert toc.index("file: howto") < toc.index("file: chapters/01-bayes"), "the page opens the book"
    for words in ("make lab", "check(\"q1\")", ".venv/bin/lecturelib check", "Hand in", "make book"):
        assert words in body


def test_readme_has_a_path_for_students_and_for_instructors():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    students, instructors = readme_section(readme, "For students"), readme_section(readme, "For instructors")
    assert "make lab" in students and "lecturelib check" in students
    for command in ("make test", "make book-instructor", "make release", "lecturelib grade", "gradebook export"):
        assert command in instructors


def shown_texts() -> dict[str, str]:
    """Every text a reader is shown: README, the guides in docs/, the book's pages, the chapters
    and exercises."""
    texts = {name: (ROOT / name).read_text(encoding="utf-8") for name in ("README.md", "howto.md", "intro.md")}
    texts |= {f"docs/{p.name}": p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))}
    for folder in ("chapters", "exercises", "solutions"):
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            texts[f"{folder}/{path.name}"] = "\n".join("".join(c["source"]) for c in cells
                                                       if c["cell_type"] == "markdown")
    return texts


def test_the_readme_is_a_front_door_whose_links_lead_somewhere():
    """The README fits two screens and points to the guides; every relative link of the README
    and of the guides names a file of the course (a moved section leaves no dead link)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 160
    for guide in ("docs/instructors.md", "docs/grading.md", "docs/threat-model.md", "docs/testing.md",
                  "docs/library.md", "howto.md", "CONTRIBUTING.md"):
        assert f"]({guide})" in readme, guide
    dead = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if not re.match(r"[a-z]+:", target) and not (page.parent / target).exists():
                dead.append(f"{page.relative_to(ROOT)}: {target}")
    assert not dead, dead


def shown_commands(text: str) -> list[str]:
    """Command lines: console blocks, indented code lines and inline code starting a command."""
    lines = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        lines += [ln.lstrip("$ ").split("  #")[0].strip() for ln in block.splitlines() if ln.strip()]
    lines += [m.strip() for m in re.findall(r"^    ((?:make|\.venv/bin/|lecturelib|sudo) .*)$", text, re.M)]
    lines += re.findall(r"`((?:make|\.venv/bin/[^`\s]+|lecturelib) [^`]*)`", text)
    return lines


def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text() + (ROOT / "course.mk").read_text()
    return set(re.findall(r"^([a-z][\w-]*):", text, re.M))


def test_every_command_shown_works_from_the_course_root():
    targets, problems, seen = make_targets(), [], 0
    for where, text in shown_texts().items():
        for line in shown_commands(text):
            words = shlex.split(line)
            seen += 1
            if words[0] == "make":
                problems += [(where, line) for w in words[1:] if "=" not in w and w not in targets]
            elif words[0] == "lecturelib" or words[0].endswith("/lecturelib") and words[0] != ".venv/bin/lecturelib":
                problems.append((where, f"{line} (lecturelib is .venv/bin/lecturelib)"))
            elif words[0] == ".venv/bin/lecturelib":
                if len(words) < 2 or words[1] not in SUBCOMMANDS:
                    problems.append((where, line))
                for word in words[2:]:
                    named = word.endswith(".ipynb") or word.endswith("/")
                    if named and word not in EXAMPLE_PATHS and not (ROOT / word).exists():
                        problems.append((where, f"{line} ({word} does not exist)"))
    assert seen > 30
    assert not problems, problems


def test_the_pages_check_command_runs_as_shown():
    proc = subprocess.run(shlex.split(".venv/bin/lecturelib check exercises/01-bayes.ipynb"), cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert re.search(r"^q1: 0 of \d+ public checks hold$", proc.stdout, re.M)
    assert "0 of 7 questions pass all their public checks" in proc.stdout

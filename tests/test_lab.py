"""JupyterLab as a student uses it: ``make lab``, then a chapter and an exercise in Chromium.

The chapter's Markdown is rendered as MyST (jupyterlab-myst): theorems, admonitions and
roles, not their source text.

The server is the one ``make lab`` starts (on a free loopback port, with a token), showing a
scratch copy of one chapter and one exercise set so that JupyterLab's autosave never
touches the course.  The chapter is copied without its stored outputs: every number the
test reads was computed by the run in the browser.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from test_reading import browser  # noqa: F401  (the fixture: one headless Chromium per module)

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = "chapters/01-bayes.ipynb"
EXERCISE = "exercises/01-bayes.ipynb"

SHOWN_NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # JupyterLab keeps other tabs, hidden

pytestmark = [pytest.mark.full, pytest.mark.browser]
# The course's commands as a user runs them: no matplotlib backend or venv of the test run.
ENV = {k: v for k, v in os.environ.items() if k not in ("MPLBACKEND", "VIRTUAL_ENV")}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def without_outputs(source: Path, target: Path) -> None:
    nb = json.loads(source.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(nb, indent=1), encoding="utf-8")


def start_lab(cmd: list[str], cwd: Path, log: Path) -> subprocess.Popen:
    """Start ``make lab`` in its own process group, its output going to ``log`` (never a pipe
    nobody reads, which would stall the server once full)."""
    with open(log, "w") as out:
        return subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=ENV,
                                start_new_session=True)


def stop_lab(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def wait_for_server(url: str, proc: subprocess.Popen, log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"make lab ended with status {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail("JupyterLab did not answer within two minutes")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """``make lab`` on a scratch course folder: yields (base URL, token, folder)."""
    folder = tmp_path_factory.mktemp("lab")
    without_outputs(ROOT / CHAPTER, folder / CHAPTER)
    without_outputs(ROOT / EXERCISE, folder / EXERCISE)
    # Every cell in the page (no windowing): the test finds cells as a reader sees them.
    settings = folder / ".settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    port, token = free_port(), secrets.token_hex(16)
    opts = f"--no-browser --IdentityProvider.token={token} --LabApp.user_settings_dir={folder / '.settings'}"
    log = folder / "lab.log"
    proc = start_lab(["make", "lab", f"LAB_PORT={port}", f"LAB_DIR={folder}", f"LAB_OPTS={opts}"], ROOT, log)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(f"{base}/api/status?token={token}", proc, log)
        yield base, token, folder
    finally:
        stop_lab(proc)



def open_notebook(browser, lab, path):
    """A page showing ``path`` alone in JupyterLab, once its own kernel is idle.

    Each page opens in a workspace of its own: in the default one, JupyterLab would restore
    the tabs of an earlier test beside ``path``, and whichever tab it activated last would
    receive the menu's commands and show its kernel's status.
    """
    base, token, _ = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{base}/lab/workspaces/t{secrets.token_hex(4)}/tree/{path}?reset&token={token}")
    page.wait_for_selector(f"{SHOWN_NOTEBOOK} .jp-Cell", state="attached", timeout=120_000)
    name = Path(path).name
    page.wait_for_function(
        """name => { const tabs = document.querySelectorAll('#jp-main-dock-panel .lm-TabBar-tab');
                     return tabs.length === 1 && tabs[0].textContent.includes(name); }""",
        arg=name, timeout=60_000)
    page.locator(f"{SHOWN_NOTEBOOK} .jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(
        state="attached", timeout=120_000)
    wait_for_kernel(lab, path)
    # An offline course asks no question about fetching Jupyter news (make lab answers it).
    assert not page.get_by_text("Jupyter news").count(), lab_state(page)
    return page


PROMPTS = f"{SHOWN_NOTEBOOK} .jp-CodeCell .jp-InputPrompt"


def wait_for_kernel(lab, path: str, timeout: float = 120) -> None:
    """Until the server says the notebook's kernel is idle with the page connected to it
    (JupyterLab's indicator can read "idle" before its kernel has started)."""
    base, token, _ = lab
    deadline = time.monotonic() + timeout
    sessions = []
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{base}/api/sessions?token={token}", timeout=10) as response:
            sessions = json.loads(response.read())
        kernel = next((s["kernel"] for s in sessions if s.get("path") == path and s.get("kernel")), None)
        if kernel and kernel.get("execution_state") == "idle" and kernel.get("connections", 0) >= 1:
            return
        time.sleep(0.5)
    pytest.fail(f"the kernel of {path} was not idle and connected within {timeout:.0f} s: {sessions}")


def run_menu(page, item: str, attempts: int = 3) -> None:
    """Choose ``Run → item`` from JupyterLab's menu bar (it must be enabled), and see it run.

    JupyterLab marks a cell ``[*]`` the moment it sends it to the kernel, so a choice that
    changes no prompt within 20 s never reached the notebook (a click lost while the menu
    was still being laid out, as once on a loaded CI machine): nothing ran, so choosing
    again runs nothing twice.
    """
    for _ in range(attempts):
        before = page.locator(PROMPTS).all_text_contents()
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        entry = page.locator(".lm-Menu-item", has=page.locator(
            ".lm-Menu-itemLabel", has_text=re.compile(rf"^{re.escape(item)}$")))
        assert "lm-mod-disabled" not in (entry.get_attribute("class") or ""), f"Run → {item} is disabled"
        entry.click()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if page.locator(PROMPTS).all_text_contents() != before:
                return
            time.sleep(0.25)
        page.keyboard.press("Escape")                 # a menu left open, if any
    pytest.fail(f"Run → {item} ran no cell in {attempts} tries\n{lab_state(page)}")


def lab_state(page) -> str:
    """What the page shows, for a failure message: the CI log keeps it, not the screenshot."""
    prompts = page.locator(PROMPTS).all_text_contents()
    status = page.locator(f"{SHOWN_NOTEBOOK} .jp-Notebook-ExecutionIndicator").get_attribute("data-status")
    dialogs = page.locator(".jp-Dialog, .jp-toast, .Toastify__toast").all_inner_texts()
    errors = [t[:200] for t in page.locator(".jp-OutputArea-output[data-mime-type*='stderr']")
              .all_text_contents()]
    return (f"kernel indicator: {status}; code cell prompts: {' '.join(p.strip() for p in prompts)}\n"
            f"dialogs and notices: {dialogs}\nerror outputs: {errors}")


def output_with(page, pattern: str, timeout: float = 180) -> str:
    """The text of the first output area matching ``pattern``, once it has appeared."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for text in page.locator(".jp-OutputArea-output").all_text_contents():  # rendered or not
            if re.search(pattern, text):
                return text
        time.sleep(0.5)
    shot = ROOT / "_build" / f"test-lab-{re.sub(r'[^a-z0-9]+', '-', pattern.lower())}.png"
    shot.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(shot))
    pytest.fail(f"no output matching {pattern!r} appeared (screenshot: {shot})\n{lab_state(page)}")


def stored_line(path: Path, prefix: str) -> str:
    """A line the chapter prints, as stored in the notebook (checked by nbval)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            for line in "".join(out.get("text", "")).splitlines():
                if line.startswith(prefix):
                    return line
    raise AssertionError(f"{path.name} prints no line starting with {prefix!r}")


def assert_myst_rendered(page) -> None:
    """jupyterlab-myst renders the chapter's MyST: theorems, admonitions and roles, not their source."""
    nb = json.loads((ROOT / CHAPTER).read_text(encoding="utf-8"))
    source = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    theorems = len(re.findall(r"^```\{prf:(?:theorem|proposition|definition|lemma)\}", source, re.M))
    assert theorems, f"{CHAPTER} states no theorem"
    boxes = f"{SHOWN_NOTEBOOK} .jp-MarkdownCell aside.myst-proof"
    # JupyterLab renders Markdown cells while the browser is idle, a few at a time.
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(f"n => document.querySelectorAll('{boxes}').length >= n",
                               arg=theorems, timeout=90_000)
    except PlaywrightTimeout:
        pass                                   # the assertion below says how many there were
    shown = page.locator(boxes).count()
    assert shown >= theorems, f"{shown} theorem boxes rendered, {theorems} written"
    text = "\n".join(page.locator(f"{SHOWN_NOTEBOOK} .jp-MarkdownCell").all_inner_texts())
    raw = re.findall(r"```\{[\w:-]+\}|\{(?:cite|prf:ref|eq|numref|doc|py:\w+)\}`", text)
    assert not raw, f"MyST source shown as text in JupyterLab: {sorted(set(raw))[:5]}"


def test_lab_runs_a_chapter(browser, lab):
    page = open_notebook(browser, lab, CHAPTER)
    assert_myst_rendered(page)
    run_menu(page, "Run All Cells")
    expected = stored_line(ROOT / CHAPTER, "prior P(h):")
    text = output_with(page, r"prior P\(h\):")
    shown = next(line for line in text.splitlines() if line.startswith("prior P(h):"))
    assert shown.split() == expected.split()
    assert re.search(r"\d\.\d{4}", shown), shown
    page.close()


def test_lab_check_reports_an_unanswered_question(browser, lab):
    nb = json.loads((ROOT / EXERCISE).read_text(encoding="utf-8"))
    check_cell = next(i for i, c in enumerate(nb["cells"]) if "check:q1" in c["metadata"].get("tags", []))
    why = nb["metadata"]["lecturelib"]["public_checks"]["q1"][0]["why"]
    page = open_notebook(browser, lab, EXERCISE)
    run_menu(page, "Run All Cells")  # stops at question 1's unanswered cell
    output_with(page, r"NotImplementedError")
    # The kernel drops requests queued behind an error: run the check once that is over.
    page.locator(f"{SHOWN_NOTEBOOK} .jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(
        state="attached", timeout=60_000)
    time.sleep(1)
    # Selected only now: the notebook's Markdown (rendered by jupyterlab-myst) has settled,
    # and nothing moves the selection back to the first cell.
    cell = page.locator(f"{SHOWN_NOTEBOOK} .jp-Cell").nth(check_cell)
    cell.scroll_into_view_if_needed()
    cell.locator(".jp-InputPrompt").click()
    assert "jp-mod-selected" in cell.get_attribute("class")
    run_menu(page, "Run Selected Cell and Do not Advance")
    text = output_with(page, r"q1: \d+ of \d+ public checks hold")
    assert re.search(r"q1: 0 of \d+ public checks hold", text), text
    assert "FAIL" in text and why in text
    page.close()


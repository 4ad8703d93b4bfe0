"""A grading team at once: ``python benchmarks/grading_team.py``.

A class of ``--students`` (300) with three written questions (set 1's two, and the second
one again under another id), a staff of an instructor and ``--graders`` (10) teaching
assistants plus two more in Chromium, each with their own sign-in link; ``lecturelib
gradebook serve --tls-self-signed`` as the README spells it.  Each of the ten signs in over
TLS on loopback and sends rubric keys as the page does (``apply``/``remove`` an item on the
answer, with the version it last saw), ``--saves`` (3,000) in all, on answers of their own,
one after the other, the ten at once; meanwhile two graders in Chromium (trusting the
certificate's public key) press keys 1, 2, 3 on answers of theirs.  Recorded: saves per
second, the save time seen by the client (median, 95th percentile, maximum), and whether
every save is found, once, in the grades and in the audit.  Results go to
``benchmarks/grading_team.json`` and the section "A grading team at once" of
``benchmarks/GRADING.md``.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import hashlib
import hmac
import http.client
import json
import os
import platform
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
ASSIGNMENT = "01-bayes"
SECTION = "## A grading team at once"
PROOF = ("The log posterior is $\\ell(q) = (k + a - 1)\\log q + (n - k + b - 1)\\log(1 - q)$; "
         "its derivative vanishes at $$\\hat q = \\frac{k + a - 1}{n + a + b - 2}.$$ Student {i}.")


def make_class(path: Path, students: int) -> list:
    """The class in a new gradebook: three written questions; returns them."""
    from lecturelib.grading import load_questions, read_notebook
    from lecturelib.grading.core.report import GradeReport, QuestionResult
    from lecturelib.grading.gradebook import Gradebook

    written = [q for q in load_questions(read_notebook(ROOT / "solutions" / f"{ASSIGNMENT}.ipynb"))
               if q.written]
    questions = written[:2] + [dataclasses.replace(written[1], id=written[1].id + "b")]
    with Gradebook(path) as book:
        book.store_questions(ASSIGNMENT, questions)
        for i in range(students):
            rows = [QuestionResult(q.id, 0.0, q.points, "pending", pending=True, kind="written",
                                   answer=PROOF.replace("{i}", str(i))) for q in questions]
            book.record(f"s{i:03d}", f"sha{i}", GradeReport(f"s{i:03d}.ipynb", ASSIGNMENT, rows, []))
    return questions


class Grader:
    """One person's session over TLS: signs in with the link, then sends saves."""

    def __init__(self, host: str, port: int, secret: str, context: ssl.SSLContext):
        self.host, self.port, self.context = host, port, context
        self.origin = f"https://{host}:{port}"
        status, headers, _ = self.request("GET", "/?token=" + secret)
        if status != 302:
            raise RuntimeError(f"sign-in refused: {status}")
        self.key = headers["location"].partition("#key=")[2]
        cookies = [c.split(";")[0] for c in headers.get_all("set-cookie")]
        self.cookie = "; ".join(cookies)
        status, _, page = self.request("GET", "/", {"Cookie": self.cookie})
        self.xsrf = re.search(r'<meta name="xsrf" content="([^"]+)"', page).group(1)
        self.cookie += f"; _xsrf={self.xsrf}"

    def request(self, method, path, headers=None, body=None):
        """One request on the grader's kept-alive connection, as a browser keeps it."""
        if getattr(self, "conn", None) is None:
            self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=60)
        try:
            self.conn.request(method, path, body=body, headers=headers or {})
            response = self.conn.getresponse()
            return response.status, response.headers, response.read().decode()
        except (OSError, http.client.HTTPException):
            self.conn.close()
            self.conn = None
            raise

    def save(self, body: dict) -> tuple[int, dict, float]:
        start = time.perf_counter()
        status, _, text = self.request("POST", "/api/grade", {
            "Cookie": self.cookie, "Content-Type": "application/json", "Origin": self.origin,
            "X-XSRFToken": self.xsrf, "X-Lecturelib-Key": self.key}, json.dumps(body))
        return status, json.loads(text) if text.startswith("{") else {"error": text}, time.perf_counter() - start


def grader_work(grader: Grader, answers: list, items: dict, saves: int, out: dict, pause: float = 0) -> None:
    """``saves`` rubric keys on ``answers`` (each ``(sid, qid, sha)``), round robin: each
    toggles the next item of the answer's rubric, so every save changes the grade."""
    expected = {a: [] for a in answers}
    seen = {a: 0 for a in answers}
    times, failures = [], []
    for n in range(saves):
        answer = answers[n % len(answers)]
        sid, qid, sha = answer
        rubric = items[qid]
        item = rubric[(n // len(answers)) % len(rubric)]
        op = "remove" if item in expected[answer] else "apply"
        status, reply, seconds = grader.save({"assignment": ASSIGNMENT, "question": qid, "sid": sid,
                                              "version": seen[answer], "answer_sha": sha, "op": op, "item": item})
        times.append(seconds)
        time.sleep(pause)
        if status != 200:
            failures.append((status, reply))
            continue
        seen[answer] = reply["state"]["version"]
        expected[answer] = ([i for i in expected[answer] if i != item] if op == "remove"
                            else expected[answer] + [item])
    out.update(times=times, failures=failures, expected=expected,
               ops={a: sum(1 for n in range(saves) if answers[n % len(answers)] == a) for a in answers})


def spki_of(host: str, port: int) -> str:
    """The base64 SHA-256 of the server certificate's public key (what Chromium is told to
    trust), and its fingerprint."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    context = ssl._create_unverified_context()  # the fingerprint is compared below
    with context.wrap_socket(socket.create_connection((host, port))) as tls:
        der = tls.getpeercert(binary_form=True)
    cert = x509.load_der_x509_certificate(der)
    spki = cert.public_key().public_bytes(serialization.Encoding.DER,
                                          serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(spki).digest()).decode(), hashlib.sha256(der).hexdigest()


def chromium_graders(base: str, links: list[str], positions: list[list[str]], spki: str, out: dict) -> None:
    """Two graders in Chromium: each opens answers of theirs and presses 1, 2, 3 on each."""
    from playwright.sync_api import sync_playwright

    executable = next(p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if Path(p).exists())
    pressed = 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=[
            "--no-sandbox", "--disable-gpu", f"--ignore-certificate-errors-spki-list={spki}"])
        pages = []
        for link in links:
            page = browser.new_context().new_page()
            page.goto(link)
            pages.append(page)
        for round_ in zip(*positions):
            for page, path in zip(pages, round_):
                page.goto(base + path)
                for key in "123":
                    page.keyboard.press(key)
                    pressed += 1
            for page in pages:
                page.wait_for_function("() => document.getElementById('status').textContent.startsWith('Saved')"
                                       " && document.querySelectorAll(\"button.item[aria-pressed='true']\").length === 3")
        browser.close()
    out["pressed"] = pressed


def run(args) -> dict:
    from lecturelib.grading.gradebook import Gradebook, allocation, manual, staff

    work = Path(tempfile.mkdtemp(prefix="grading-team-"))
    path = work / "gradebook.sqlite"
    questions = make_class(path, args.students)
    people = ["Ann Lee", "Bo Chen", "Cy Park", "Dana Ruiz", "Emil Sato", "Farah Haddad", "Gita Rao",
              "Hugo Berg", "Iris Nyström", "Jonas Weber", "Kemal Arslan", "Mira Dunsmore"]
    names = [people[i] if i < len(people) else f"Grader {i:03d}" for i in range(args.graders + 2)]
    with Gradebook(path) as book:
        staff.add(book.db, "Instructor", "instructor")
        secrets_ = {n: staff.add(book.db, n, "ta") for n in names}
        key = allocation.stored_key(book.db, "student ids")
        items = {q.id: [i["id"] for i in manual.rubric(book.db, ASSIGNMENT, q.id)] for q in questions}
        order = {q.id: allocation.fair_order(book.db, ASSIGNMENT, q.id, manual.students(book.db, ASSIGNMENT))
                 for q in questions}
        shas = {(s, q.id): manual.answer_sha(manual.grade_state(book.db, ASSIGNMENT, s, q.id)["answer"])
                for s in manual.students(book.db, ASSIGNMENT) for q in questions}

    def sid(student):
        return hmac.new(key, student.encode(), hashlib.sha256).hexdigest()[:16]

    answers = [(s, q.id) for q in questions for s in order[q.id]]
    browser_answers, answers = answers[-2 * args.browser_answers:], answers[:-2 * args.browser_answers]
    port = args.port
    proc = subprocess.Popen([str(ROOT / ".venv" / "bin" / "lecturelib"), "gradebook", "serve", "--gradebook",
                             str(path), "--tls-self-signed", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(4)]
        fingerprint = lines[1].strip().replace(":", "").lower()
        url = lines[3].strip()
        host, port = re.match(r"https://([^:/]+):(\d+)/", url).groups()
        port = int(port)
        spki, printed = spki_of(host, port)
        if printed != fingerprint:
            raise RuntimeError("the certificate is not the one whose fingerprint was printed")
        context = ssl._create_unverified_context()  # pinned: the fingerprint was checked above
        graders = [Grader(host, port, secrets_[n], context) for n in names[:args.graders]]
        outs = [{} for _ in graders]
        threads = [threading.Thread(target=grader_work, args=(
            g, [(sid(s), q, shas[(s, q)]) for s, q in answers[i::len(graders)]], items,
            args.saves // len(graders), out, args.pause)) for i, (g, out) in enumerate(zip(graders, outs))]
        browser_out: dict = {}
        positions = [[f"/grade/{ASSIGNMENT}/{q}/{order[q].index(s) + 1}" for s, q in browser_answers[i::2]]
                     for i in range(2)]
        browser = threading.Thread(target=chromium_graders, args=(
            f"https://{host}:{port}", [f"https://{host}:{port}/?token={secrets_[n]}" for n in names[-2:]],
            positions, spki, browser_out))
        load = os.getloadavg()[0]
        start = time.perf_counter()
        for t in threads:
            t.start()
        browser.start()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - start
        browser.join()
    finally:
        proc.terminate()
        proc.wait(30)
    times = sorted(t for o in outs for t in o["times"])
    with Gradebook(path) as book:
        audit = manual.audit_log(book.db, ASSIGNMENT)
        by_answer: dict = {}
        for e in audit:
            by_answer[(e["student"], e["question"])] = by_answer.get((e["student"], e["question"]), 0) + 1
        by_sid = {sid(s): s for s in manual.students(book.db, ASSIGNMENT)}
        lost = twice = 0
        for o in outs:
            for (answer_sid, qid, _), applied in o["expected"].items():
                student = by_sid[answer_sid]
                state = manual.grade_state(book.db, ASSIGNMENT, student, qid)
                lost += sorted(state["applied"]) != sorted(applied)
                twice += by_answer.get((student, qid), 0) != o["ops"][(answer_sid, qid, _)]
        browser_ok = sum(manual.grade_state(book.db, ASSIGNMENT, s, q)["applied"] == items[q][:3]
                         for s, q in browser_answers)  # keys 1, 2, 3: the rubric's first three items
    return {
        "students": args.students, "questions": len(questions), "graders": args.graders, "pause": args.pause,
        "saves": len(times), "failures": sum(len(o["failures"]) for o in outs),
        "seconds": seconds, "saves_per_second": len(times) / seconds,
        "median_ms": 1000 * times[len(times) // 2], "p95_ms": 1000 * times[int(0.95 * (len(times) - 1))],
        "max_ms": 1000 * times[-1], "answers_lost": lost, "answers_audited_wrongly": twice,
        "audit_entries": len(audit), "browser_keys": browser_out.get("pressed", 0),
        "browser_answers": len(browser_answers), "browser_answers_all_applied": browser_ok,
        "load": [load, os.getloadavg()[0]],
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
    }


def pace(pause: float) -> str:
    return "no pause" if pause == 0 else f"{pause:g} s pause"


def section(runs: list[dict]) -> str:
    r = runs[0]
    return "\n".join([
        SECTION, "",
        f"{r['graders']} teaching assistants, each signed in with their own link, over TLS on "
        f"loopback (`serve --tls-self-signed`), send {r['saves']} rubric keys at once on a class of "
        f"{r['students']} × {r['questions']} written answers (each on answers of their own, one key "
        f"after the other: as fast as the replies come, the app saturated, then with a pause after "
        f"each reply, as a grader reads), while two more grade in Chromium "
        f"({r['browser_keys']} keys, 1, 2, 3 on each of {r['browser_answers']} answers). SQLite in WAL "
        f"mode with a busy timeout, one server process, {r['machine']}. Produced by "
        "`python benchmarks/grading_team.py`.", "",
        "| each grader | saves | seconds | saves per second | median save | 95th percentile | slowest | lost or twice |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *[f"| {pace(x['pause'])} | "
          f"{x['saves']} | {x['seconds']:.1f} | {x['saves_per_second']:.0f} | {x['median_ms']:.0f} ms | "
          f"{x['p95_ms']:.0f} ms | {x['max_ms']:.0f} ms | {x['answers_lost'] + x['answers_audited_wrongly'] + x['failures']} |"
          for x in runs], "",
        "Lost or twice: saves refused, answers whose rubric items are not the ones their saves "
        "left, and answers without exactly one audit entry per save "
        f"({', '.join(str(x['audit_entries']) for x in runs)} audit entries in all). In Chromium, "
        + ", ".join(f"{x['browser_answers_all_applied']} of {x['browser_answers']}" for x in runs)
        + " answers have all three items applied. The save time is the client's, on a kept-alive "
        "connection as a browser keeps it (the ten clients run on the same two cores as the app); "
        "the target is a 95th percentile under 150 ms on 2 cores. Load average at the start and end "
        "of each run (other jobs shared the machine): "
        + "; ".join(f"{x['load'][0]:.1f}, {x['load'][1]:.1f}" for x in runs) + ".", ""])


def write_section(text: str) -> None:
    """Put the section in GRADING.md in place of its previous run (the rest is
    benchmarks/grading.py's)."""
    path = HERE / "GRADING.md"
    current = path.read_text(encoding="utf-8") if path.is_file() else "# Grading throughput\n"
    head = current.split(SECTION)[0].rstrip("\n")
    path.write_text(head + "\n\n" + text, encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--graders", type=int, default=10)
    parser.add_argument("--saves", type=int, default=3000)
    parser.add_argument("--browser-answers", type=int, default=10, help="answers each Chromium grader grades")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--pause", type=float, default=0.5,
                        help="seconds a grader waits after a reply in the second run (the first: none)")
    args = parser.parse_args(argv)
    runs = []
    for pause in (0.0, args.pause):
        args.pause = pause
        runs.append(run(args))
    (HERE / "grading_team.json").write_text(json.dumps(runs, indent=2) + "\n")
    text = section(runs)
    write_section(text)
    print(text)
    return 0 if all(r["answers_lost"] == r["answers_audited_wrongly"] == r["failures"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())

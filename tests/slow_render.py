"""A renderer for the grading app's answers that never finishes in time: run in the
renderer's worker process by tests/test_webapp.py (a module of its own, so that the worker
imports nothing else)."""

import time


def slow_render(text: str):
    time.sleep(120)
    return "<p>too late</p>", ""

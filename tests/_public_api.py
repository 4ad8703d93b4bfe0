"""The public API of ``lecturelib``, walked once for the generated tests.

``tests/test_fuzz.py`` and ``tests/test_parameters.py`` both enumerate the names in the
``__all__`` of the library's modules; each filters this walk for what it tests.
"""

from __future__ import annotations

import importlib
import inspect


def public_objects(modules):
    """``{"module.name": obj}`` for every function and class in the ``__all__`` of
    ``lecturelib.<module>``, for each module of ``modules``."""
    found = {}
    for module_name in modules:
        module = importlib.import_module(f"lecturelib.{module_name}")
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                found[f"{module_name}.{name}"] = obj
    return found

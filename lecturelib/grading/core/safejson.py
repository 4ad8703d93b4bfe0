"""Bounded JSON: what leaves the sandbox is parsed here, and only as plain data.

Everything a graded notebook produces reaches the grader as one JSON document written by
the driver inside the sandbox.  A hostile notebook controls that document completely, so
it is read with a size cap, then a linear pre-scan *before* ``json.loads`` caps the
nesting (no RecursionError can be provoked) and the number of containers and values (so
that the parsed document stays within a small multiple of the text's size), and
``json.loads`` itself (linear) refuses integers longer than 20 digits.  Every error is a
:class:`PayloadError` with a fixed message.  Then a strict schema: every answer is one of

- ``null``, a boolean, a number, a string of at most ``MAX_STRING`` characters;
- ``{"list": [...]}``, ``{"set": [...]}``, ``{"dict": [[key, value], ...]}`` (string keys);
- ``{"complex": [re, im]}``;
- ``{"ndarray": [numbers], "shape": [ints], "kind": "b"|"i"|"u"|"f"|"c", "imag": [numbers]}``

decoded to Python scalars, lists, dicts, :class:`SetAnswer` and numpy arrays.  Nothing is
ever evaluated or unpickled.
"""

from __future__ import annotations

import json
import math

import numpy as np

MAX_DEPTH = 32
MAX_STRING = 10_000
MAX_ELEMENTS = 5_000_000
MAX_CONTAINERS = 1_000_000
MAX_INT_DIGITS = 20
_CHUNK = 1 << 22  # bytes scanned at a time by check_shape (its working memory is a few of these)
# Byte classes for check_shape: 1 a quote, 2 an opening bracket, 3 a closing one, 4 a comma.
_CLASS = np.zeros(256, dtype=np.uint8)
_CLASS[[ord('"'), ord("["), ord("{"), ord("]"), ord("}"), ord(",")]] = [1, 2, 2, 3, 3, 4]


class PayloadError(ValueError):
    """The data is not of the expected form (too large, too deep, or off schema)."""


class SetAnswer(tuple):
    """A decoded set: its members, in the order they were sent."""


def check_shape(text: str, limit: int, max_containers: int = MAX_CONTAINERS,
                max_values: int = MAX_ELEMENTS) -> None:
    """Raise :class:`PayloadError` if JSON ``text`` nests deeper than ``limit`` or holds
    more than ``max_containers`` lists and objects or about ``max_values`` values.

    Linear, in numpy over chunks of :data:`_CHUNK` bytes: escaped backslashes and quotes
    are dropped (``str.replace`` pairs them from the left, as JSON does inside a string;
    outside one, ``json.loads`` stops at the first backslash anyway); a byte is inside a
    string when an odd number of quotes precede it (a running parity, carried from chunk to
    chunk; an unclosed string runs to the end); outside strings the brackets and commas are
    counted and the depth is a running sum over the brackets.
    """
    data = text.replace("\\\\", "").replace('\\"', "").encode("utf-8")
    parity, containers, values, depth = 0, 0, 0, 0
    for start in range(0, len(data), _CHUNK):
        classes = _CLASS[np.frombuffer(data, np.uint8, min(_CHUNK, len(data) - start), start)]
        marked = classes[np.flatnonzero(classes)]  # the quotes, brackets and commas, in order
        quotes = marked == 1
        outside = marked[((np.cumsum(quotes, dtype=np.uint8) + parity) & 1) == 0]
        parity = (parity + int(np.count_nonzero(quotes))) & 1
        containers += int(np.count_nonzero(outside == 2))
        values += int(np.count_nonzero(outside == 4))
        if containers > max_containers:
            raise PayloadError(f"more than {max_containers} lists and objects")
        if values > max_values:
            raise PayloadError(f"more than {max_values} values")
        steps = outside[(outside == 2) | (outside == 3)]
        if steps.size:
            levels = depth + np.cumsum(np.where(steps == 2, 1, -1))
            if int(levels.max()) > limit:
                raise PayloadError(f"nested deeper than {limit} levels")
            depth = int(levels[-1])


def check_depth(text: str, limit: int) -> None:
    """Raise :class:`PayloadError` if JSON ``text`` nests deeper than ``limit`` (linear)."""
    check_shape(text, limit, max_containers=len(text), max_values=len(text))


def _int(digits: str) -> int:
    if len(digits) > MAX_INT_DIGITS:
        raise PayloadError("an integer too long")
    return int(digits)


def loads(data: bytes, max_bytes: int, max_depth: int = MAX_DEPTH + 8):
    """Parse untrusted JSON bytes with caps on size, depth, containers and values.

    Time and memory are linear in ``len(data)``; any failure is a :class:`PayloadError`
    with a fixed message (nothing of ``data`` is in it).
    """
    if len(data) > max_bytes:
        raise PayloadError(f"larger than {max_bytes} bytes")
    try:
        text = data.decode("utf-8")
        check_shape(text, max_depth)
        return json.loads(text, parse_int=_int)
    except UnicodeDecodeError:
        raise PayloadError("not UTF-8 text") from None
    except PayloadError:
        raise
    except (ValueError, RecursionError):
        raise PayloadError("not valid JSON") from None
    except MemoryError:
        raise PayloadError("too large to read") from None


class _Budget:
    def __init__(self, limit):
        self.left = limit

    def spend(self, n):
        self.left -= n
        if self.left < 0:
            raise PayloadError(f"more than {MAX_ELEMENTS} values")


def _number(v) -> float | int:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise PayloadError("expected a number")
    return v


def _ints(values, what) -> list[int]:
    if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool)
                                               and 0 <= v <= MAX_ELEMENTS for v in values):
        raise PayloadError(f"malformed {what}")
    return values


def _array(node, budget):
    shape = _ints(node.get("shape"), "array shape")
    kind = node.get("kind")
    flat = node.get("ndarray")
    if kind not in ("b", "i", "u", "f", "c") or not isinstance(flat, list) or len(shape) > MAX_DEPTH:
        raise PayloadError("malformed array")
    size = math.prod(shape)
    budget.spend(len(flat))
    if len(flat) != size:
        raise PayloadError("array data does not match its shape")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in flat):
        raise PayloadError("array data must be numbers")
    arr = np.asarray(flat, dtype=float)
    if kind == "c":
        imag = node.get("imag")
        if not isinstance(imag, list) or len(imag) != size:
            raise PayloadError("malformed complex array")
        budget.spend(size)
        arr = arr + 1j * np.asarray([_number(v) for v in imag], dtype=float)
    elif kind == "b":
        arr = arr.astype(bool)
    return arr.reshape(shape)


def decode(node, depth: int = 0, budget: _Budget | None = None):
    """Decode one answer of the schema above; raise :class:`PayloadError` if off schema."""
    budget = budget or _Budget(MAX_ELEMENTS)
    if depth > MAX_DEPTH:
        raise PayloadError(f"nested deeper than {MAX_DEPTH} levels")
    budget.spend(1)
    if node is None or isinstance(node, (bool, int, float)):
        return node
    if isinstance(node, str):
        if len(node) > MAX_STRING:
            raise PayloadError(f"a string longer than {MAX_STRING} characters")
        return node
    if not isinstance(node, dict) or len(node) == 0:
        raise PayloadError("malformed answer")
    if "ndarray" in node and set(node) <= {"ndarray", "shape", "kind", "imag"}:
        return _array(node, budget)
    if set(node) == {"complex"}:
        pair = node["complex"]
        if not isinstance(pair, list) or len(pair) != 2:
            raise PayloadError("malformed complex number")
        return complex(_number(pair[0]), _number(pair[1]))
    if set(node) in ({"list"}, {"set"}):
        (key, items), = node.items()
        if not isinstance(items, list):
            raise PayloadError(f"malformed {key}")
        values = [decode(x, depth + 1, budget) for x in items]
        return SetAnswer(values) if key == "set" else values
    if set(node) == {"dict"}:
        pairs = node["dict"]
        if not isinstance(pairs, list) or not all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in pairs):
            raise PayloadError("malformed dict")
        return {k[:MAX_STRING]: decode(v, depth + 1, budget) for k, v in pairs}
    raise PayloadError("malformed answer")

"""The grading staff: ``lecturelib gradebook staff add|list|revoke|link``.

Each person of the staff (an ``instructor`` or a ``ta``) has a personal sign-in link: a
random secret (:func:`secrets.token_urlsafe`, 256 bits) shown once, when it is made; the
gradebook keeps only its SHA-256 (a secret that long needs no salt nor slow hash: it cannot
be guessed, only stolen).  The grading app finds a person by the hash of the secret their
link holds, on every request, so that ``revoke`` and ``link`` (a new secret, the old one
void) end access at once, open pages included.

A name is checked once, here, when the instructor adds the person: NFC, the characters of
:func:`.manual.grader_name` (no control, format or other invisible character), and no two
names alike: not equal ignoring case, nor confusable under Unicode's confusable mappings
(UTS #39, the ``confusables`` package: "Bo Chen" and "Bо Chen" with a Cyrillic о).
Everything the app records (grades, comments, second marks, decisions, the audit) carries
the name of the credential, never a name typed on a page.
"""

from __future__ import annotations

import datetime
import hashlib
import secrets

import confusables

from ..core.notebook import GradingError
from ..core.report import plain
from . import manual

TABLE = """
CREATE TABLE IF NOT EXISTS staff (
    name TEXT PRIMARY KEY, role TEXT NOT NULL, secret_sha TEXT NOT NULL UNIQUE,
    added_at TEXT NOT NULL, last_seen TEXT NOT NULL DEFAULT '', revoked_at TEXT NOT NULL DEFAULT '');
"""
ROLES = ("instructor", "ta")
SEEN_EVERY = 60  # seconds: "last seen" is written at most this often per person


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def create_table(db) -> None:
    db.executescript(TABLE)


def secret_sha(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def _new_secret(db, name: str) -> str:
    secret = secrets.token_urlsafe(32)
    db.execute("UPDATE staff SET secret_sha=? WHERE name=?", (secret_sha(secret), name))
    return secret


def check_name(db, name) -> str:
    """``name`` as a new person's name, or :class:`GradingError` saying why not: a grader's
    name (:func:`.manual.grader_name`, NFC, nothing invisible) that looks like no other
    person's (equal ignoring case, or confusable: the same UTS #39 skeleton)."""
    checked = manual.grader_name(name)
    if checked is None or checked != name:
        raise GradingError(f"{manual.GRADER_RULE} (given in NFC)")
    for other, in db.execute("SELECT name FROM staff"):
        if other.casefold() == name.casefold() or confusables.is_confusable(other, name):
            raise GradingError(f"{name!r} looks like {other!r}, already on the staff: "
                               "give a name that cannot be mistaken for it")
    return name


def add(db, name: str, role: str) -> str:
    """Add a person with ``role`` (``instructor`` or ``ta``); the secret of their link
    (shown once: only its hash is kept)."""
    create_table(db)
    if role not in ROLES:
        raise GradingError(f"a role is one of {', '.join(ROLES)}, not {str(role)[:20]!r}")
    check_name(db, name)
    with db:
        db.execute("INSERT INTO staff (name, role, secret_sha, added_at) VALUES (?, ?, ?, ?)",
                   (name, role, secrets.token_hex(32), _now()))
        return _new_secret(db, name)


def _known(db, name: str) -> None:
    create_table(db)
    if db.execute("SELECT 1 FROM staff WHERE name=?", (name,)).fetchone() is None:
        raise GradingError(f"nobody called {name[:60]!r} is on the staff (see: staff list)")


def new_link(db, name: str) -> str:
    """A new secret for ``name`` (revoked or not): the old link is void at once."""
    _known(db, name)
    with db:
        db.execute("UPDATE staff SET revoked_at='' WHERE name=?", (name,))
        return _new_secret(db, name)


def revoke(db, name: str) -> None:
    """End ``name``'s access at once: their link and every page they have open."""
    _known(db, name)
    with db:
        db.execute("UPDATE staff SET revoked_at=? WHERE name=?", (_now(), name))
        db.execute("UPDATE staff SET secret_sha=? WHERE name=?", (secrets.token_hex(32), name))


def members(db) -> list[dict]:
    """Everyone on the staff: ``name, role, added_at, last_seen, revoked_at`` (no secret)."""
    create_table(db)
    rows = db.execute("SELECT name, role, added_at, last_seen, revoked_at FROM staff "
                      "ORDER BY role, name").fetchall()
    return [dict(zip(("name", "role", "added_at", "last_seen", "revoked_at"), r)) for r in rows]


def has_staff(db) -> bool:
    create_table(db)
    return db.execute("SELECT 1 FROM staff LIMIT 1").fetchone() is not None


def signed_in(db, sha: str) -> dict | None:
    """The person whose link's secret hashes to ``sha`` (``name``, ``role``), or None when
    no link of a person on the staff does (revoked, replaced, or never made)."""
    create_table(db)
    row = db.execute("SELECT name, role, last_seen FROM staff WHERE secret_sha=? AND revoked_at=''",
                     (sha,)).fetchone()
    if row is None:
        return None
    name, role, seen = row
    now = datetime.datetime.now(datetime.timezone.utc)
    if not seen or (now - datetime.datetime.fromisoformat(seen)).total_seconds() > SEEN_EVERY:
        with db:
            db.execute("UPDATE staff SET last_seen=? WHERE name=?", (now.isoformat(timespec="seconds"), name))
    return {"name": name, "role": role}


def staff_table(rows: list[dict]) -> str:
    """The staff as plain text, one person a line."""
    lines = [f"{'name':<40} {'role':<10} {'last seen':<25} status"]
    for r in rows:
        lines.append(f"{plain(r['name'], 40):<40} {r['role']:<10} {r['last_seen'] or 'never':<25} "
                     f"{'revoked ' + r['revoked_at'] if r['revoked_at'] else 'active'}")
    return "\n".join(lines) + "\n"

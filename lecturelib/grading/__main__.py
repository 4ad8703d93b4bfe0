"""``python -m lecturelib.grading`` is the ``lecturelib`` command."""

import sys

from .cli import main

sys.exit(main())

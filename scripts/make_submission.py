#!/usr/bin/env python3
"""Writes the one-file matmul_v2 submission from this checkout's sources:

    python3 scripts/make_submission.py submission.py [--dtypes f16,bf16]

The same as `python -m tcgemm.make_submission` of the installed package, but it
needs neither torch nor the built package (the generator is plain Python).
"""

import importlib.util
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "python" / "tcgemm"
sys.path.insert(0, str(PACKAGE_DIR))  # for its `_amalgamate` helper
spec = importlib.util.spec_from_file_location("make_submission", PACKAGE_DIR / "make_submission.py")
make_submission = importlib.util.module_from_spec(spec)
sys.modules["make_submission"] = make_submission  # dataclasses look their module up
spec.loader.exec_module(make_submission)

if __name__ == "__main__":
    sys.exit(make_submission.main())

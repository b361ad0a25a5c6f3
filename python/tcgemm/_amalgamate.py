"""Amalgamation: many C++/CUDA files -> one translation unit, as text.

Project headers (`#include "..."`) are inlined where they are first included
and dropped after that (every project header is `#pragma once`); system
headers (`#include <...>`) stay as they are. `#line` directives keep compiler
messages pointing at the original files. Pure standard library: it runs where
torch is not installed (CI).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_QUOTE_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
_PRAGMA_ONCE = re.compile(r"^\s*#\s*pragma\s+once\b")


class AmalgamationError(RuntimeError):
    """A project include that cannot be resolved, or a source that is missing."""


@dataclass
class Amalgamator:
    """Inlines files below `root`, resolving quoted includes like the compiler.

    A quoted include is looked up next to the including file first, then in
    each of `include_dirs` (relative to `root`), as `-I` would. Each header is
    inlined once per Amalgamator: use one instance per translation unit.
    """

    root: Path
    include_dirs: tuple[str, ...]
    _seen: set[Path] = field(default_factory=set)
    _chunks: list[str] = field(default_factory=list)

    def add_text(self, text: str) -> None:
        """Appends literal text (defines, stubs) to the translation unit."""
        self._chunks.append(text if text.endswith("\n") else text + "\n")

    def add_file(self, relative: str) -> None:
        """Appends a source file with its project headers inlined."""
        path = (self.root / relative).resolve()
        if not path.is_file():
            raise AmalgamationError(f"source file {relative} does not exist under {self.root}")
        self._seen.add(path)
        self._emit(path)

    def text(self) -> str:
        """The translation unit so far."""
        return "".join(self._chunks)

    def _name(self, path: Path) -> str:
        # Paths relative to the root keep the output independent of where the
        # checkout lives (the generated text must be deterministic).
        return path.relative_to(self.root.resolve()).as_posix()

    def _resolve(self, include: str, including: Path) -> Path | None:
        for base in (including.parent, *(self.root / d for d in self.include_dirs)):
            candidate = (base / include).resolve()
            if candidate.is_file():
                return candidate
        return None

    def _emit(self, path: Path) -> None:
        name = self._name(path)
        self._chunks.append(f'#line 1 "{name}"\n')
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            include = _QUOTE_INCLUDE.match(line)
            if include:
                target = self._resolve(include.group(1), path)
                if target is None:
                    raise AmalgamationError(f'{name}:{number}: cannot resolve #include "{include.group(1)}"')
                if target not in self._seen:
                    self._seen.add(target)
                    self._emit(target)
                    self._chunks.append(f'#line {number + 1} "{name}"\n')
                else:
                    # Already inlined: an empty line keeps the numbering.
                    self._chunks.append("\n")
                continue
            if _PRAGMA_ONCE.match(line):
                # Inlined exactly once already; in a main file nvcc warns about it.
                self._chunks.append("\n")
                continue
            self._chunks.append(line + "\n")


def unresolved_project_includes(text: str) -> list[str]:
    """The quoted includes left in an amalgamated text (there should be none)."""
    return [m.group(1) for m in map(_QUOTE_INCLUDE.match, text.splitlines()) if m]

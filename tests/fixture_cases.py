"""Discovery of golden fixture cases under fixtures/<family>/ (adding a case = adding files)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@dataclass(frozen=True)
class Case:
    family: str
    name: str
    folder: Path
    positive: bool  # .in.py/.out.py pair; otherwise a .ok.py negative

    @property
    def id(self) -> str:
        return f"{self.family}/{self.name}"

    @property
    def input(self) -> Path:
        return self.folder / (f"{self.name}.in.py" if self.positive else f"{self.name}.ok.py")

    @property
    def expected(self) -> Path:
        return self.folder / (f"{self.name}.out.py" if self.positive else f"{self.name}.ok.py")

    @property
    def findings_file(self) -> Path:
        return self.folder / f"{self.name}.findings.txt"

    @property
    def driver(self) -> Path | None:
        path = self.folder / f"{self.name}.drive.py"
        return path if path.exists() else None

    @property
    def unsafe(self) -> bool:
        return self.name.endswith("_unsafe")


def discover_cases() -> list[Case]:
    cases = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()) if FIXTURES.is_dir() else []:
        for path in sorted(folder.glob("*.in.py")):
            cases.append(Case(folder.name, path.name[: -len(".in.py")], folder, True))
        for path in sorted(folder.glob("*.ok.py")):
            cases.append(Case(folder.name, path.name[: -len(".ok.py")], folder, False))
    return cases

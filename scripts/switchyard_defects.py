"""Known defects of the platforms switchyard runs on, from tests/known-defects.toml.

`load(path)` returns {platform: {"suite.test": reason}} and raises ValueError for a malformed
file. Both scripts/run (which reports a known defect without failing the run) and the pytest
harness (which makes each one a strict xfail) read the file through it.
"""

import tomllib
from pathlib import Path

PATH = Path(__file__).resolve().parent.parent / "tests" / "known-defects.toml"
PLATFORMS = ("tcg", "kvm")


def load(path=PATH):
    with Path(path).open("rb") as file:
        table = tomllib.load(file)
    defects = {}
    for platform, entries in table.items():
        if platform not in PLATFORMS or not isinstance(entries, list):
            raise ValueError(f"{path}: expected [[tcg]] or [[kvm]] entries, not {platform!r}")
        for entry in entries:
            if set(entry) != {"test", "reason"} or "." not in entry["test"]:
                raise ValueError(f"{path}: [{platform}] entries need exactly "
                                 f"test = \"suite.name\" and reason = \"...\": {entry}")
            defects.setdefault(platform, {})[entry["test"]] = entry["reason"]
    return defects

"""Known defects of the platforms switchyard runs on: tests/known-defects.toml, the one table.

The kernel carries the table (runner/known_defects.c includes the C rows that
`scripts/switchyard/defects.py --c-table FILE` writes at build time) and reports each entry's check
in-band: `ok N name # XFAIL reason` when it failed as known, `not ok N name # XPASS reason` when
it did not. scripts/run and the pytest harness judge those lines; they never read this file to
decide a verdict, only (switchyard/log.py) to reject an XFAIL or XPASS whose reason no entry
gives for that test and platform. This module validates the file (`read`), writes the C rows, and
answers which entries apply to a platform identity (`applies`).
"""

import argparse
import fnmatch
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

PATH = Path(__file__).resolve().parents[2] / "tests" / "known-defects.toml"
PER_TEST = 8  # KNOWN_DEFECTS_PER_TEST in runner/known_defects.h
REASON_MAX = 150  # a reason ends a KTAP result line; REPORT_REASON_MAX in lib/report.h is 160
PLATFORM = re.compile(r"[A-Za-z0-9_*?-]+")
TEST = re.compile(r"[A-Za-z0-9_]+\.[A-Za-z0-9_]+")
PRINTABLE = re.compile(r"[\x20-\x7e]+")
REQUIRED = {"platform", "test", "reason"}
OPTIONAL = {"check", "got", "ends", "runs"}
ENDS = ("hang", "exit")  # how the boot ends: the guest stops making progress; QEMU exits
RUNS = ("never",)  # the test's outcome there is chance: the kernel skips it, with the reason


@dataclass(frozen=True)
class Defect:
    """One check of one test that fails on the platforms `platform` (a glob) matches; with
    `got`, only when the failure prints that value. Or, with `ends` instead of `check`, a test
    that ends the boot there: the kernel runs it only alone (the option alone), the harness judges it.
    Or, with `runs = "never"`, a test whose outcome there is chance: the kernel skips it."""

    platform: str
    test: str
    reason: str
    check: str = None
    got: str = None
    ends: str = None
    runs: str = None


def read(path=PATH):
    """The entries of a known-defects file, in order; ValueError says what is wrong."""
    with Path(path).open("rb") as file:
        try:
            table = tomllib.load(file)
        except tomllib.TOMLDecodeError as error:
            raise ValueError(f"{path}: {error}") from None
    extra = set(table) - {"defect"}
    if extra:
        raise ValueError(f"{path}: only [[defect]] entries (platform, test, check, reason...), "
                         f"not {sorted(extra)}")
    entries = table.get("defect", [])
    if not isinstance(entries, list):
        raise ValueError(f"{path}: 'defect' must be an array of tables: [[defect]]")
    defects, seen, per_test = [], set(), {}
    for number, entry in enumerate(entries, 1):
        where = f"{path}: defect {number}"
        if not REQUIRED <= set(entry) <= REQUIRED | OPTIONAL:
            raise ValueError(f"{where}: needs platform, test and reason, and check (with got, "
                             f"optionally), ends or runs: {entry}")
        kinds = [key for key in ("check", "ends", "runs") if key in entry]
        if len(kinds) != 1 or ("got" in entry and "check" not in entry):
            raise ValueError(f"{where}: either check (with got, optionally), ends or runs: "
                             f"{entry}")
        if not all(isinstance(value, str) for value in entry.values()):
            raise ValueError(f"{where}: every value is a string: {entry}")
        defect = Defect(**entry)
        _validate(where, defect)
        key = (defect.platform, defect.test, defect.check, defect.got)
        if key in seen:
            raise ValueError(f"{where}: the same platform, test, check and got twice")
        seen.add(key)
        per_test[defect.test] = per_test.get(defect.test, 0) + 1
        if per_test[defect.test] > PER_TEST:
            raise ValueError(f"{where}: more than {PER_TEST} entries for {defect.test}")
        defects.append(defect)
    return defects


def _validate(where, defect):
    if not PLATFORM.fullmatch(defect.platform):
        raise ValueError(f"{where}: platform {defect.platform!r} is not a glob of "
                         "[A-Za-z0-9_-] with * and ?")
    if not TEST.fullmatch(defect.test):
        raise ValueError(f"{where}: test {defect.test!r} is not suite.test")
    if defect.ends is not None and defect.ends not in ENDS:
        raise ValueError(f"{where}: ends {defect.ends!r} is not one of {', '.join(ENDS)}")
    if defect.runs is not None and defect.runs not in RUNS:
        raise ValueError(f"{where}: runs {defect.runs!r} is not one of {', '.join(RUNS)}")
    for key in ("check", "got", "reason"):
        value = getattr(defect, key)
        if value is None:
            continue
        if not PRINTABLE.fullmatch(value) or value != value.strip():
            raise ValueError(f"{where}: {key} must be printable ASCII on one line, without "
                             f"leading or trailing spaces: {value!r}")
    if len(defect.reason) > REASON_MAX:
        raise ValueError(f"{where}: reason longer than {REASON_MAX} characters")


def applies(defect, identity):
    """Whether defect applies on the platform identity: glob_match() of lib/glob.c ('*', '?';
    PLATFORM admits no other wildcard, so fnmatch's '[' never occurs)."""
    return fnmatch.fnmatchcase(identity, defect.platform)


def load(path=PATH):
    """{platform glob: {"suite.test": reason}}: which tests have known defects where."""
    table = {}
    for defect in read(path):
        table.setdefault(defect.platform, {}).setdefault(defect.test, defect.reason)
    return table


def _c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def c_table(defects, source="tests/known-defects.toml"):
    """The rows of `const struct known_defect known_defects[]` (runner/known_defects.h)."""
    lines = [f"/* Generated by scripts/switchyard/defects.py from {source}: do not edit. */"]
    for defect in defects:
        fields = [f".{key} = {_c_string(getattr(defect, key))}"
                  for key in ("platform", "test", "check", "got", "ends", "runs", "reason")
                  if getattr(defect, key) is not None]
        lines.append("{ " + ", ".join(fields) + " },")
    return "\n".join(lines) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(prog="scripts/switchyard/defects.py",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--c-table", type=Path, metavar="TOML", required=True,
                        help="write the C rows of this known-defects file to stdout")
    args = parser.parse_args(argv)
    try:
        sys.stdout.write(c_table(read(args.c_table), args.c_table))
    except (OSError, ValueError) as error:
        print(f"scripts/switchyard/defects.py: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

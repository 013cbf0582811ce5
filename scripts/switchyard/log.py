"""Check a switchyard serial log against docs/output.md: KTAP v1, final line, exit status.

Pure Python; the only file it reads is tests/known-defects.toml, once. `check_log(raw,
qemu_status)` is the one entry point: it takes the raw serial bytes (or text), cleans them,
parses the nested KTAP, verifies the final integrity line and, when given, the QEMU exit
status, and returns a `LogResult` whose `verdict` is one of PASS, FAIL, USAGE or CRASH. A log
is never PASS unless it is complete and verified.

A CRC proves only that nothing changed after the last line was written, and anyone can write
one: a log edited and sealed again passes it. So the log must also hold together as the kernel
writes it (runner/runner.c, lib/report.c): suites once each, in name order; each test once;
every result but a SKIP right after its test's `# running` line; no `ok` after a `check failed:`
diagnostic that no known defect explains; a `# totals:` line that counts the results; and every
XFAIL and XPASS reason an entry of the known-defects table for the log's platform and test.
"""

import functools
import re
import zlib
from dataclasses import dataclass, field

from switchyard import defects as switchyard_defects

ESCAPE = re.compile(r"\x1b\[[0-9;=?]*[A-Za-z]")
VERSION = "KTAP version 1"

PASS, FAIL, USAGE, CRASH = "PASS", "FAIL", "USAGE", "CRASH"
QEMU_STATUS = {PASS: 33, FAIL: 35, USAGE: 37, CRASH: 39}  # CRASH: a bail out, intact log
RUN_STATUS = {PASS: 0, FAIL: 1, USAGE: 3, CRASH: 4}  # scripts/run; 2 and 124 are its own

FINAL = re.compile(r"# switchyard-end crc32=0x([0-9a-f]{8}) lines=(\d+)")
PLAN = re.compile(r"1\.\.(\d+)")
RESULT = re.compile(r"(ok|not ok) (\d+) ([A-Za-z0-9_]+)(?: # (.*))?")
SUBTEST = re.compile(r"# Subtest: ([A-Za-z0-9_]+)")
DIAGNOSTIC = re.compile(r"#(?: .*)?")
BAIL_OUT = re.compile(r"Bail out!(?: (.*))?")
METRIC = re.compile(r"# metric ([A-Za-z0-9_.]+)((?: [A-Za-z0-9_.]+=\S+)+)")
RUNNING = re.compile(r"# running ([A-Za-z0-9_]+\.[A-Za-z0-9_]+)")  # inside a suite, before a test
TOTALS = re.compile(r"totals: pass=(\d+) fail=(\d+) skip=(\d+) xfail=(\d+) xpass=(\d+)")
TOTALS_STATUSES = ("pass", "fail", "skip", "xfail", "xpass")  # the order of the totals line
IDENTITY = re.compile(r"platform: identity=([A-Za-z0-9_-]+)(?: .*)?")
EMULATED_SUFFIX = "__emulated"  # a result's name when the emulated CPU served it: not registered
CHECK_FAILED = ": check failed: "  # lib/report.c's failed-check diagnostic
KNOWN_FAILURE = "  known defect of this platform: "  # lib/report.c, after a known check failed


# The directives a result line may carry, with the result word each needs and the status it
# gives (docs/output.md): SKIP as KTAP has it; XFAIL and XPASS for the platform's known defects.
DIRECTIVES = {"SKIP": ("ok", "skip"), "XFAIL": ("ok", "xfail"), "XPASS": ("not ok", "xpass")}
FAILED = ("fail", "xpass")  # the statuses that fail a suite, a run and a pytest case


@dataclass
class KtapTest:
    """One KTAP test result; line is 1-based in the log. status is "pass", "fail", "skip",
    "xfail" (a known defect of the platform occurred: "ok ... # XFAIL reason") or "xpass" (a
    known defect did not occur: "not ok ... # XPASS reason", a failure). reason is the
    directive's text; skip_reason the same for a SKIP, else ""."""

    suite: str
    name: str
    status: str
    line: int
    skip_reason: str = ""
    diagnostics: list = field(default_factory=list)
    reason: str = ""

    @property
    def id(self):
        return f"{self.suite}.{self.name}"


@dataclass
class LogResult:
    """What a log says. errors holds every contract violation, as "line N: ..." where it has a
    line; line numbers count from the first "KTAP version 1" line, which is line 1."""

    lines: list = field(default_factory=list)  # cleaned, from "KTAP version 1" on
    firmware_prefix: str = ""  # text before "KTAP version 1" on its line: not the kernel's
    warnings: list = field(default_factory=list)  # what was odd but does not change a verdict
    tests: list = field(default_factory=list)
    metrics: dict = field(default_factory=dict)  # name -> {key: value}
    diagnostics: list = field(default_factory=list)  # top-level "# " lines, without "# "
    bail_out: str = None  # the reason, "" for a bare "Bail out!"
    integrity_error: str = None  # None when the final line is present and matches
    errors: list = field(default_factory=list)
    verdict: str = CRASH
    last_started: str = None  # "suite.test" of the last "# running" line, None before any
    last_started_reported: bool = False  # a test result line followed that "# running" line
    truncated: bool = False  # no final line at all (the log stops short, nothing vouches for it)
    unfinished_suite_error: str = None  # the error "log ends inside suite S", when it is one

    @property
    def running(self):
        """The test the kernel was running when the log stopped: the last "# running" test if
        no result line followed it, else None."""
        return None if self.last_started_reported else self.last_started

    @property
    def damage(self):
        """The errors that a log cut short does not explain: every error, less the missing
        final line and the open suite at the end when the log is truncated."""
        if not self.truncated:
            return list(self.errors)
        cut = (self.integrity_error, self.unfinished_suite_error)
        return [error for error in self.errors if error not in cut]

    def count(self, status):
        return sum(t.status == status for t in self.tests)

    @property
    def failed(self):
        """The tests that fail the run: "not ok", with or without XPASS."""
        return [t for t in self.tests if t.status in FAILED]

    @property
    def usage_error(self):
        """The kernel's "# error: ..." text when it rejected its command line, else None."""
        errors = [d[len("error: "):] for d in self.diagnostics if d.startswith("error: ")]
        valid = any(d.startswith("valid options:") for d in self.diagnostics)
        return errors[0] if self.bail_out is not None and errors and valid else None


def clean(raw):
    """Decode serial bytes byte-exactly, strip terminal escapes and every \\r."""
    text = raw.decode("utf-8", "surrogateescape") if isinstance(raw, bytes) else raw
    return ESCAPE.sub("", text).replace("\r", "")


def crc32(lines):
    """CRC-32 of `lines` (str without newlines), each counted with its "\\n"."""
    return zlib.crc32("".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape"))


def final_line(lines):
    """The final line the kernel prints after `lines`."""
    return f"# switchyard-end crc32=0x{crc32(lines):08x} lines={len(lines)}"


@functools.cache
def known_defects():
    """tests/known-defects.toml's entries (switchyard.defects.read()), read once."""
    return tuple(switchyard_defects.read())


def check_log(raw, qemu_status=None, defects=None):
    """Parse and verify a whole log; qemu_status None means "not known" (a log file). defects:
    the known-defects entries the log's XFAIL and XPASS reasons must come from (default:
    tests/known-defects.toml)."""
    result = LogResult()
    lines = clean(raw).split("\n")
    if lines[-1] == "":
        lines.pop()  # the final line's own newline
    start = _kernel_start(lines)
    if start is None:
        result.integrity_error = "no KTAP output: no line is, or ends in, 'KTAP version 1'"
        result.errors.append(result.integrity_error)
    else:
        result.firmware_prefix = lines[start][:-len(VERSION)]
        if result.firmware_prefix:
            result.warnings.append(
                f"line {start + 1} of the capture: firmware text before 'KTAP version 1' on "
                f"the same line, {result.firmware_prefix!r}, is not the kernel's: ignored")
        result.lines = [VERSION] + lines[start + 1:]
        body = result.lines[:-1] if FINAL.fullmatch(result.lines[-1]) else result.lines
        _Parser(result).parse(body)
        _check_totals(result)
        _check_known_defects(result, known_defects() if defects is None else defects)
        result.integrity_error = _check_integrity(result.lines)
        result.truncated = not any(FINAL.fullmatch(line) for line in result.lines)
        if result.truncated:
            result.integrity_error += _last_started(result)
        if result.integrity_error:
            result.errors.insert(0, result.integrity_error)
    result.verdict = _verdict(result)
    disagreement = None if qemu_status is None else status_disagreement(result, qemu_status)
    if disagreement:
        result.errors.append(disagreement)
        result.verdict = CRASH
    return result


def _kernel_start(lines):
    """The index of the kernel's first line, "KTAP version 1", or None. The kernel starts it on
    a fresh line, but a console that joined the firmware's last words to it (SeaBIOS's "Booting
    from ROM..", BIOS console redirection, a capture started mid-line) leaves them in front:
    the first line that ends in "KTAP version 1" after text other than an indent is taken, with
    that text ignored. The final line's CRC covers the kernel's lines only (docs/output.md)."""
    for index, line in enumerate(lines):
        if line == VERSION or line.endswith(VERSION) and line[:-len(VERSION)].strip(" "):
            return index
    return None


def _check_integrity(lines):
    """Return why the final line does not vouch for the lines before it, or None."""
    finals = [i for i, line in enumerate(lines) if FINAL.fullmatch(line)]
    if not finals:
        return "no final line: the log is truncated"
    if len(finals) > 1:
        # The kernel prints exactly one: a second, even with a right CRC, is appended text.
        return (f"more than one final line (lines {finals[0] + 1} and {finals[1] + 1}): "
                "exactly one, the last, vouches for the log")
    if finals[-1] != len(lines) - 1:
        return f"line {finals[-1] + 1}: the final line is not the last line"
    crc, count = FINAL.fullmatch(lines[-1]).groups()
    if int(count) != len(lines) - 1:
        return f"final line counts {count} lines, the log has {len(lines) - 1}"
    actual = crc32(lines[:-1])
    if int(crc, 16) != actual:
        return f"CRC mismatch: the final line says 0x{crc}, the log gives 0x{actual:08x}"
    return None


def _check_totals(result):
    """The runner's "# totals:" line, where there is one, counts the log's results."""
    lines = [d for d in result.diagnostics if d.startswith("totals:")]
    if len(lines) > 1:
        result.errors.append(f"{len(lines)} '# totals:' lines: the runner prints one")
    for line in lines[:1]:
        match = TOTALS.fullmatch(line)
        if not match:
            result.errors.append(f"malformed totals line: '# {line}'")
            continue
        counted = {status: result.count(status) for status in TOTALS_STATUSES}
        said = dict(zip(TOTALS_STATUSES, map(int, match.groups())))
        if said != counted:
            result.errors.append(
                f"'# {line}' contradicts the results: "
                + " ".join(f"{status}={count}" for status, count in counted.items()))


def _check_known_defects(result, defects):
    """Every XFAIL and XPASS reason is an entry's of the table for the log's platform identity
    (its "# platform: identity=" line) and the test: the kernel prints no other."""
    identities = [IDENTITY.fullmatch(d) for d in result.diagnostics]
    identity = next((match.group(1) for match in identities if match), None)
    for test in result.tests:
        if test.status not in ("xfail", "xpass"):
            continue
        name = test.name[:-len(EMULATED_SUFFIX)] if test.name.endswith(EMULATED_SUFFIX) \
            else test.name
        listed = identity is not None and any(
            defect.test == f"{test.suite}.{name}" and defect.reason == test.reason
            and switchyard_defects.applies(defect, identity) for defect in defects)
        if not listed:
            where = (f"platform {identity}" if identity
                     else "a log with no '# platform: identity=' line")
            result.errors.append(
                f"line {test.line}: {test.status.upper()} {test.id}: the known-defects table "
                f"has no entry for {where} and this test with the reason {test.reason!r}")


def _last_started(result):
    """What a truncated log says of the test it stopped in, as a clause to its error."""
    if result.running:
        return f"; crashed or hung while running {result.running}, the last test started"
    if result.last_started:
        return (f"; the last test started, {result.last_started}, reported its result "
                "(the kernel stopped between tests)")
    return ""


def _verdict(result):
    if result.errors:
        return CRASH
    if result.bail_out is not None:
        return USAGE if result.usage_error is not None else CRASH
    return FAIL if result.failed else PASS


def status_disagreement(result, status):
    """Why QEMU exit status `status` does not fit `result` (a log checked without a status),
    or None when it fits: 33/35/37 for a PASS/FAIL/USAGE log, 39 for an intact log that bails
    out. A broken log (result.errors) fits no status."""
    meaning = {0: " (a triple fault with -no-reboot)", 1: " (QEMU's own error)"}.get(status, "")
    if status < 0:
        meaning = f" (killed by signal {-status})"
    if result.errors:
        return f"QEMU exited {status}{meaning}, and no status agrees with a broken log"
    expected = QEMU_STATUS[result.verdict]
    if status == expected:
        return None
    return (f"exit status disagrees with log: QEMU exited {status}{meaning}, "
            f"a {result.verdict} log means {expected}")


class _Parser:
    """A state machine over the nested KTAP of docs/output.md: suites hold tests, no deeper.

    depth is 0 at the top level and 1 inside a suite. A suite opens with an indented
    "KTAP version 1" (self.suite becomes ""), is named by "# Subtest: NAME", and closes with
    its top-level result line (self.suite becomes None again).
    """

    def __init__(self, result):
        self.result = result
        self.suite = None
        self.plans = [None, None]  # the top plan and the open suite's plan
        self.counts = [0, 0]  # results seen at the top level and in the open suite
        self.pending = []  # diagnostics since the previous result, at the open depth
        self.suite_tests = []
        self.suites = []  # the names of the suites so far, in order
        self.test_ids = set()

    @property
    def depth(self):
        return int(self.suite is not None)

    def parse(self, lines):
        for number, line in enumerate(lines, 1):
            if self.result.bail_out is not None:
                self.error(number, f"text after 'Bail out!': {line!r}")
                break
            depth = (len(line) - len(line.lstrip(" "))) // 4
            text = line[depth * 4:]
            if depth > 1 or text.startswith(" "):
                self.error(number, f"bad indentation: {line!r}")
            elif not self.line(number, depth, text):
                self.error(number, f"malformed line: {line!r}")
        if self.result.bail_out is None:
            self.finish(len(lines))

    def error(self, number, message):
        self.result.errors.append(f"line {number}: {message}")

    def line(self, number, depth, text):
        """Handle one line; return False if it is not well-formed KTAP here."""
        if number == 1:
            return True  # check_log starts the log at its "KTAP version 1"
        if BAIL_OUT.fullmatch(text):
            self.result.bail_out = BAIL_OUT.fullmatch(text).group(1) or ""
            return True
        if SUBTEST.fullmatch(text):
            return self.name_suite(number, depth, SUBTEST.fullmatch(text).group(1))
        if DIAGNOSTIC.fullmatch(text):
            return self.diagnostic(depth, text)
        if text == VERSION:
            return self.open_suite(depth)
        if PLAN.fullmatch(text):
            return self.plan(depth, int(PLAN.fullmatch(text).group(1)))
        if RESULT.fullmatch(text):
            return self.test_result(number, depth, *RESULT.fullmatch(text).groups())
        return False

    def diagnostic(self, depth, text):
        if depth > self.depth or text.startswith("# metric ") and not self.metric(text):
            return False
        if depth == 1 and RUNNING.fullmatch(text):
            # The runner's note that a test starts: the log's, not the test's, diagnostic.
            self.result.last_started = RUNNING.fullmatch(text).group(1)
            self.result.last_started_reported = False
            return True
        if depth == 0:
            self.result.diagnostics.append(text[2:])
        if depth == self.depth:
            self.pending.append(text[2:])
        return True

    def metric(self, text):
        match = METRIC.fullmatch(text)
        if match:
            pairs = (pair.split("=", 1) for pair in match.group(2).split())
            self.result.metrics[match.group(1)] = dict(pairs)
        return match is not None

    def open_suite(self, depth):
        if depth != 1 or self.suite is not None or self.plans[0] is None:
            return False
        self.suite, self.plans[1], self.counts[1] = "", None, 0
        self.pending, self.suite_tests = [], []
        return True

    def name_suite(self, number, depth, name):
        if depth != 1 or self.suite != "":
            return False
        if name in self.suites:
            self.error(number, f"suite {name} twice")
        elif self.suites and name < self.suites[-1]:
            self.error(number, f"suite {name} after {self.suites[-1]}: the runner runs the "
                       "suites in name order")
        self.suites.append(name)
        self.suite = name
        return True

    def plan(self, depth, count):
        if depth != self.depth or self.plans[depth] is not None or self.suite == "":
            return False
        self.plans[depth] = count
        return True

    def test_result(self, number, depth, word, index, name, directive):
        if self.plans[depth] is None or self.suite is None:
            return False  # a test before its plan, or a top-level result with no suite
        status = "pass" if word == "ok" else "fail"
        keyword, _, reason = (directive or "").partition(" ")
        if directive is not None:
            if DIRECTIVES.get(keyword, ("",))[0] != word or not reason.strip():
                self.error(number, f"bad directive {directive!r}: only 'ok N name # SKIP "
                           "reason', 'ok N name # XFAIL reason' and 'not ok N name # XPASS "
                           "reason'")
            else:
                status = DIRECTIVES[keyword][1]
        self.counts[depth] += 1
        if int(index) != self.counts[depth]:
            self.error(number, f"result numbered {index}, expected {self.counts[depth]}")
        if depth == 1:
            test = KtapTest(self.suite, name, status, number,
                            reason if status == "skip" else "", self.pending, reason)
            self.check_test(number, test)
            self.suite_tests.append(test)
            self.result.tests.append(test)
            self.result.last_started_reported = True
        else:
            self.close_suite(number, word, name)
        self.pending = []
        return True

    def check_test(self, number, test):
        """What the runner does around each result: one result per test, right after the
        test's "# running" line (a SKIP decided before the test runs has none), and never "ok"
        after a failed check but a known defect's."""
        if test.id in self.test_ids:
            self.error(number, f"test {test.id} twice")
        self.test_ids.add(test.id)
        name = test.name[:-len(EMULATED_SUFFIX)] if test.name.endswith(EMULATED_SUFFIX) \
            else test.name
        registered = f"{test.suite}.{name}"
        started = None if self.result.last_started_reported else self.result.last_started
        if started is None and test.status != "skip":
            self.error(number, f"result of {test.id} without its '# running {registered}' line")
        elif started is not None and started != registered:
            self.error(number, f"result of {test.id} after '# running {started}'")
        failed_check = any(CHECK_FAILED in line for line in test.diagnostics)
        known = any(line.startswith(KNOWN_FAILURE) for line in test.diagnostics)
        if failed_check and (test.status == "pass" or test.status == "skip" and not known):
            self.error(number, f"{test.id} is 'ok' after a failed check that no known defect "
                       "explains")

    def close_suite(self, number, word, name):
        if name != self.suite:
            self.error(number, f"suite result names {name!r}, the subtest is {self.suite!r}")
        self.check_plan(number, 1, f"suite {self.suite}")
        failed = any(t.status in FAILED for t in self.suite_tests)
        if (word == "not ok") != failed:
            self.error(number, f"suite {self.suite} is '{word}' but "
                       f"{'a test failed' if failed else 'no test failed'}")
        self.suite, self.plans[1] = None, None

    def check_plan(self, number, depth, what):
        if self.plans[depth] != self.counts[depth]:
            self.error(number, f"plan mismatch: {what} plans {self.plans[depth]}, "
                       f"has {self.counts[depth]} results")

    def finish(self, number):
        if self.suite is not None:
            self.error(number, f"log ends inside suite {self.suite or '(unnamed)'}")
            self.result.unfinished_suite_error = self.result.errors[-1]
        elif self.plans[0] is None:
            self.error(number, "no top-level plan")
        else:
            self.check_plan(number, 0, "the top level")

"""The Makefile's dependencies: touching a header or an .inc rebuilds everything that includes it.

A copy of the tree in a temporary directory is brought up to date (kernel, host tests,
decode-check), so build/ is never disturbed: the copy starts from build/'s objects and .d files
where build/ has them (their times kept, so only what is out of date is rebuilt) and builds the
rest. Then, for each header (.h) and nasm include (.inc), `make -n -W HEADER` (make pretending the
header was just modified, as touching it would; the headers are asked side by side) must rebuild
exactly the objects whose source includes it, directly or through other headers, and relink what
those objects go into. The expected set comes from scanning the sources' #include and %include
lines along each compile command's -I path, not from the .d files that the rules under test
write. A header that a .d file names by another spelling than its own path (./x.h, a/../x.h),
which -W would not match, is touched for real instead.
"""

import os
import re
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ["all", "build/host/host-tests", "build/host/decode-check"]
INCLUDE_LINE = re.compile(r'^\s*(?:#\s*include|%include)\s+"([^"]+)"', re.MULTILINE)
# The commands make -n prints: `echo "  CC      dr/switch.c"`, `echo "  HOSTLD  build/host/x"`.
ECHO_LINE = re.compile(r'^echo "  (CC|NASM|HOSTCC|HOSTLD)\s+(\S+)"$', re.MULTILINE)
KERNEL_LINK = re.compile(r"^ld .* -o build/switchyard\.elf ", re.MULTILINE)
HOST_TESTS = Path("build/host/host-tests")
DECODE_CHECK = Path("build/host/decode-check")
DECODE_CHECK_OBJS = {Path("build/host/obj/tests/decode_check/decode_check.o"),
                     Path("build/host/obj/emulator/decode.o")}
# Each must rebuild something; every other header and .inc is checked as well.
REQUIRED = ["arch/x86/registers.inc", "arch/x86/user-abi.inc", "boot/multiboot.inc",
            "arch/x86/debugreg.h", "lib/string.h", "tests/host/host_test.h"]


def includes(path, tree, search, cache):
    """Every file (relative to tree) that path includes, directly or through what it includes,
    looked for as the compiler does: in the including file's directory, then along search."""
    key = (path, search)
    if key in cache:
        return cache[key]
    cache[key] = found = set()
    for name in INCLUDE_LINE.findall((tree / path).read_text(errors="replace")):
        for directory in (path.parent, *search):
            candidate = Path(os.path.normpath(directory / name))
            if (tree / candidate).is_file():
                found.add(candidate)
                found |= includes(candidate, tree, search, cache)
                break
    return found


def compile_commands(tree):
    """{object: (source, -I directories)} from the commands `make -n -B` prints."""
    out = subprocess.run(["make", "-n", "-B", "--no-print-directory", *TARGETS], cwd=tree,
                         capture_output=True, text=True, check=True).stdout
    commands = {}
    for line in out.splitlines():
        words = line.split()
        if "-o" not in words or words[0] == "echo":
            continue
        obj = Path(words[words.index("-o") + 1])
        sources = [Path(w) for w in words if w.endswith((".c", ".asm"))]
        search = tuple(Path(w[2:] or words[i + 1]) for i, w in enumerate(words)
                       if w.startswith("-I"))
        if obj.suffix == ".o" and len(sources) == 1:
            commands[obj] = (sources[0], search)
    return commands


def make_n(tree, header=None):
    """What `make -n` would do, with header (if any) pretended modified (-W)."""
    what_if = ["-W", str(header)] if header else []
    result = subprocess.run(["make", "-n", "--no-print-directory", *what_if, *TARGETS],
                            cwd=tree, capture_output=True, text=True, check=True)
    return result.stdout


def copy_outputs(build, tree, objects):
    """build/'s objects (those in objects), their .d files and the targets' files into tree,
    with their times, so that make in tree rebuilds only what build/ has out of date."""
    wanted = set(objects) | {o.with_suffix(".d") for o in objects} | {
        Path("build/switchyard.elf"), Path("build/switchyard32.elf"),
        Path("build/witness/libwitness.so"), HOST_TESTS, DECODE_CHECK}
    for path in build.rglob("*"):
        relative = Path("build") / path.relative_to(build)
        if path.is_file() and (relative in wanted or relative.parts[1] == "generated"):
            (tree / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, tree / relative)


def prerequisite_spellings(tree):
    """Every file name the .d files in tree list as a prerequisite."""
    names = set()
    for depfile in (tree / "build").rglob("*.d"):
        text = depfile.read_text(errors="replace").replace("\\\n", " ")
        for line in text.splitlines():
            if ":" in line:
                names.update(line.split(":", 1)[1].split())
    return names


@pytest.fixture(scope="module")
def built_tree(tmp_path_factory):
    tree = tmp_path_factory.mktemp("tree")
    shutil.copytree(ROOT, tree, dirs_exist_ok=True, symlinks=True,
                    ignore=shutil.ignore_patterns("build", ".git", "__pycache__",
                                                  ".pytest_cache"))
    commands = compile_commands(tree)
    if (ROOT / "build").is_dir():
        copy_outputs(ROOT / "build", tree, commands)
    build = subprocess.run(["make", f"-j{os.cpu_count() or 1}", "--no-print-directory",
                            *TARGETS], cwd=tree, capture_output=True, text=True)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    assert subprocess.run(["make", "-q", *TARGETS], cwd=tree).returncode == 0, \
        "a full build leaves something to rebuild"
    return tree, commands


def headers(tree):
    return sorted(p.relative_to(tree) for p in tree.rglob("*")
                  if p.suffix in (".h", ".inc") and "build" not in p.relative_to(tree).parts)


def make_n_touched(tree, header):
    """What `make -n` would do after header is really made newer than every object."""
    stat = (tree / header).stat()
    # An hour past now, not past its own time: a checkout older than its build by an hour
    # would leave the header older than every object.
    newer = max(stat.st_mtime_ns, time.time_ns()) + 3600 * 10**9
    os.utime(tree / header, ns=(stat.st_atime_ns, newer))
    try:
        return make_n(tree)
    finally:
        os.utime(tree / header, ns=(stat.st_atime_ns, stat.st_mtime_ns))


@pytest.mark.timeout(300)
def test_touching_each_header_and_inc_rebuilds_exactly_what_includes_it(built_tree):
    tree, commands = built_tree
    cache = {}
    host = {o for o in commands if o.parts[:2] == ("build", "host")}
    assert set(commands) == {o.relative_to(tree) for o in (tree / "build").rglob("*.o")}
    assert host - DECODE_CHECK_OBJS and DECODE_CHECK_OBJS <= host
    checked = headers(tree)
    # Each header's own spelling, for -W; another spelling of it in a .d file means touching.
    spellings = prerequisite_spellings(tree)
    aliased = {Path(os.path.normpath(name)) for name in spellings
               if os.path.normpath(name) != name}
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        pretended = dict(zip(checked, pool.map(
            lambda header: None if header in aliased else make_n(tree, header), checked)))
    failures = []
    for header in checked:
        out = pretended[header]
        if out is None:
            out = make_n_touched(tree, header)
        rebuilt = {(tool, Path(name)) for tool, name in ECHO_LINE.findall(out)}
        users = {o for o, (source, search) in commands.items()
                 if header in includes(source, tree, search, cache)}
        expected = set()
        for obj in users:
            source = commands[obj][0]
            tool = "HOSTCC" if obj in host else "NASM" if source.suffix == ".asm" else "CC"
            expected.add((tool, source))
        if users & host - {Path("build/host/obj/tests/decode_check/decode_check.o")}:
            expected.add(("HOSTLD", HOST_TESTS))
        if users & DECODE_CHECK_OBJS:
            expected.add(("HOSTLD", DECODE_CHECK))
        if str(header) in REQUIRED and not expected:
            failures.append(f"{header}: included by nothing that is built")
        if rebuilt != expected:
            failures.append(f"{header}: missing {sorted(map(str, expected - rebuilt))}, "
                            f"extra {sorted(map(str, rebuilt - expected))}")
        if bool(users - host) != bool(KERNEL_LINK.search(out)):
            failures.append(f"{header}: switchyard.elf relinked: {not users - host}")
    for required in REQUIRED:
        assert Path(required) in checked, required
        # -W stands for touching the header: for these, both must give the same commands.
        if Path(required) not in aliased:
            assert make_n_touched(tree, Path(required)) == pretended[Path(required)], required
    assert not failures, "\n".join(failures)

"""Linux as the peer: per-task breakpoints' cost at a context switch, both kernels, one run.

  scripts/compare [--accel tcg --accel kvm] [--samples 20000] [--budget-ms 3000]
                  [--out build/bench] [--work build/compare] [--kernel build/switchyard32.elf]

Fetches Debian's kernel image (the package linux-image-amd64 depends on) and busybox-static with
`apt-get download`, unpacks them into WORK without installing, builds tests/compare/pingpong.c
statically, packs it with busybox into an initramfs, and boots that Linux on the QEMU machine,
CPU model and accelerator of switchyard's benchmarks (-M microvm, 2 CPUs). Then boots switchyard
with tests=dr.benchmark_* on the same platform. Writes OUT/compare.json (every configuration of
both kernels: cycles, and the ratio to the kernel's own bare switch; the platform, both kernel
versions, the date), OUT/compare.png and .svg, and the raw logs OUT/compare-KERNEL-ACCEL.log.
docs/compare.md says what is measured and how to read it.

Exit status: 0 done; 1 a Linux breakpoint did not fire (its fire check) or switchyard's benchmark
failed its own check; 2 bad arguments; 4 a log that is not complete and verified (crash, bail
out, CRC mismatch); 77 the packages cannot be fetched (skip); 124 time limit. With any status but
0 no results are written and stale ones in OUT are removed.
"""

import argparse
import datetime
import json
import lzma
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tarfile
import zlib
from pathlib import Path

from switchyard import bench  # judge() and metric parsing read switchyard's log
from switchyard import arguments
from switchyard import log as ktap
from switchyard import qemu

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests" / "compare" / "pingpong.c"
INIT = ROOT / "tests" / "compare" / "init"
DEFAULT_OUT = ROOT / "build" / "bench"
DEFAULT_WORK = ROOT / "build" / "compare"
OUTPUTS = ("compare.json", "compare.png", "compare.svg")

META_PACKAGE = "linux-image-amd64"
BUSYBOX = "busybox-static"
CPUS = 2  # as scripts/bench: the benchmarks run on CPU 0, CPU 1 idles
MEMORY = "128M"  # as switchyard's boots (switchyard.qemu)
# The guest's TSC under TCG is the host's. Linux calibrates it against the PIT, which fails on a
# loaded host ("Unable to calibrate against PIT"), and then hangs at boot; and with 2 vCPUs it
# finds their TSCs "unsynchronized" and falls back to jiffies. So the host's TSC frequency is
# given (tsc_early_khz, when the host says it) and the TSC declared reliable, as on hardware.
LINUX_CMDLINE = "console=ttyS0 quiet tsc=reliable"
# KVM-PVM (the kvm_pvm module; switchyard.qemu.kvm_host()) boots no Debian Linux: under -M microvm
# its last line is "Probing EDD (edd=off to disable)... ok" and QEMU was killed at the 240 s limit
# (measured on the KVM-PVM host of issue 25). The KVM leg is skipped there, as `scripts/run
# --accel auto` leaves KVM-PVM to TCG, and never waits out the limit.
KVM_PVM_REASON = ("/dev/kvm is KVM-PVM (kvm_pvm): Debian's Linux never gets past 'Probing EDD' "
                  "there (-M microvm; measured: no more output in 240 s)")

# Each kernel's configurations, in the order of its log and of compare.json.
SWITCHYARD_BARE = "no_state"
SWITCHYARD_CONFIGS = ("no_state", "lazy_identical", "lazy_different", "eager_identical",
                      "eager_different")
LINUX_BARE = "none"
LINUX_CONFIGS = ("none", "identical", "different", "inherited", "software")
# The fire records each Linux configuration prints per pass: one per task and event.
LINUX_FIRES = {
    "none": 0,
    "identical": 6,  # 2 write watchpoints + 1 execute breakpoint, in parent and child
    "different": 6,
    "inherited": 3,  # read from the parent's inheriting events: parent's hit + child's
    "software": 4,  # two software counters, in parent and child
}
MEASURES = {
    "switchyard": "cycles per switch: half of a sched_yield() round trip between two kernel "
                  "tasks on one CPU (median), dr.benchmark_switch_cost_by_configuration",
    "linux": "cycles per switch: half of a one-byte pipe round trip between two processes "
             "pinned to one CPU (median): a switch plus one pipe write and one pipe read",
}
OK, FAILED, BAD_ARGUMENTS, CRASH, UNAVAILABLE, TIMED_OUT = 0, 1, 2, 4, 77, 124


class Failure(Exception):
    """A run that ends without results; status is the exit status."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def say(message):
    print(f"compare: {message}", file=sys.stderr, flush=True)


# make bench's kernel options (its budget), with only the dr suite's benchmark selected.
SWITCHYARD_TESTS = "budget=soak tests=dr.benchmark_*"


# Fetching and unpacking: Debian's packages, never installed.

def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, **kwargs)


def kernel_package():
    """The versioned image linux-image-amd64 depends on (linux-image-6.1.0-N-amd64), or None."""
    proc = run(["apt-cache", "depends", META_PACKAGE])
    match = re.search(r"^\s*Depends: (linux-image-\S+)$", proc.stdout, re.M)
    return match.group(1) if match else None


def fetch(work):
    """The .deb files of the kernel image and busybox-static in WORK/debs, downloaded unless
    there already; runs `apt-get update` once when apt does not know the packages yet.
    Raises Failure(UNAVAILABLE) when they cannot be had."""
    debs = work / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    package = kernel_package()
    if package is None and shutil.which("apt-get"):
        say("apt does not know linux-image-amd64: apt-get update")
        run(["apt-get", "update", "-qq"])
        package = kernel_package()
    cached = sorted(debs.glob("linux-image-*.deb"))
    if package is None:
        if not cached:
            raise Failure("cannot fetch the packages: apt-cache finds no dependency of "
                          f"{META_PACKAGE}, and {debs} holds no kernel image", UNAVAILABLE)
        package = cached[-1].name.split("_")[0]
    wanted = {package: None, BUSYBOX: None}
    for name in wanted:
        found = sorted(debs.glob(f"{name}_*.deb"))
        if found:
            wanted[name] = found[-1]
    missing = [name for name, path in wanted.items() if path is None]
    if missing:
        say(f"apt-get download {' '.join(missing)} into {debs}")
        proc = run(["apt-get", "download", *missing], cwd=debs)
        if proc.returncode != 0:
            detail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise Failure(f"cannot fetch the packages: apt-get download {' '.join(missing)} "
                          f"exited {proc.returncode}: {detail}", UNAVAILABLE)
        for name in missing:
            found = sorted(debs.glob(f"{name}_*.deb"))
            if not found:
                raise Failure(f"cannot fetch the packages: no {name}_*.deb after apt-get "
                              "download", UNAVAILABLE)
            wanted[name] = found[-1]
    return wanted[package], wanted[BUSYBOX]


def deb_field(deb, name):
    return run(["dpkg-deb", "-f", str(deb), name]).stdout.strip()


def unpack(deb, into, members=None):
    """Unpack `deb` into `into` (once). Everything with dpkg-deb -x; only the paths under
    `members` (prefixes like "./boot/") through dpkg-deb --fsys-tarfile: the kernel image
    package is 400 MB of modules, of which the initramfs needs none."""
    done = into / ".unpacked"
    if done.is_file() and done.read_text() == deb.name:
        return into
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    if members is None:
        proc = run(["dpkg-deb", "-x", str(deb), str(into)])
        if proc.returncode:
            raise Failure(f"dpkg-deb -x {deb.name}: {proc.stderr.strip()}", UNAVAILABLE)
    else:
        with subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)],
                              stdout=subprocess.PIPE) as proc:
            with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
                for member in tar:  # read to the end, so that dpkg-deb finishes
                    path = (into / member.name).resolve()
                    if (member.isfile() and member.name.startswith(members)
                            and path.is_relative_to(into.resolve())):
                        path.parent.mkdir(parents=True, exist_ok=True)
                        path.write_bytes(tar.extractfile(member).read())
        if proc.returncode:
            raise Failure(f"dpkg-deb --fsys-tarfile {deb.name} exited {proc.returncode}",
                          UNAVAILABLE)
    done.write_text(deb.name)
    return into


def build_benchmark(work):
    """gcc -static tests/compare/pingpong.c -> WORK/pingpong, when the source is newer."""
    binary = work / "pingpong"
    if binary.is_file() and binary.stat().st_mtime >= SOURCE.stat().st_mtime:
        return binary
    say(f"gcc -static {SOURCE.relative_to(ROOT)}")
    partial = binary.with_name(binary.name + ".partial")
    proc = run(["gcc", "-static", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(partial),
                str(SOURCE)])
    if proc.returncode:
        raise Failure(f"building {SOURCE.name} failed (static glibc is in libc6-dev):\n"
                      + proc.stderr, BAD_ARGUMENTS)
    partial.replace(binary)
    return binary


# The initramfs: a "newc" cpio archive written here, so no cpio tool and no root are needed
# for the device node.

def cpio_entry(name, mode, data=b"", rdev=(0, 0), inode=1):
    fields = (inode, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(name) + 1, 0)
    header = b"070701" + "".join(f"{value:08X}" for value in fields).encode()
    entry = header + name.encode() + b"\0"
    entry += b"\0" * (-len(entry) % 4) + data
    return entry + b"\0" * (-len(entry) % 4)


def make_initramfs(path, busybox, benchmark):
    """/init (tests/compare/init), /bin/busybox, /bin/sh, /pingpong and /dev/console."""
    directory, regular, link = stat.S_IFDIR | 0o755, stat.S_IFREG | 0o755, stat.S_IFLNK | 0o777
    entries = [("bin", directory, b""), ("dev", directory, b""), ("proc", directory, b""),
               ("sys", directory, b""),
               ("dev/console", stat.S_IFCHR | 0o600, b""),
               ("bin/busybox", regular, busybox.read_bytes()), ("bin/sh", link, b"busybox"),
               ("pingpong", regular, benchmark.read_bytes()), ("init", regular, INIT.read_bytes())]
    archive = b"".join(cpio_entry(name, mode, data, (5, 1) if name == "dev/console" else (0, 0),
                                  inode)
                       for inode, (name, mode, data) in enumerate(entries, start=2))
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(archive + cpio_entry("TRAILER!!!", 0, inode=0))
    partial.replace(path)
    return path


# The uncompressed kernel, booted through PVH: QEMU loads an ELF kernel with a PVH entry note
# (XEN_ELFNOTE_PHYS32_ENTRY, Linux's CONFIG_PVH) at that entry, so the bzImage's decompressor
# never runs. Under TCG it decompressed Debian's XZ image for about 10 of a boot's 20 s
# (docs/compare.md). The same kernel runs either way.
XZ_MAGIC = b"\xfd7zXZ\x00"
GZIP_MAGIC = b"\x1f\x8b\x08"
ELF_MAGIC = b"\x7fELF"
PT_NOTE = 4
XEN_ELFNOTE_PHYS32_ENTRY = 18


def elf_has_pvh_entry(image):
    """Whether the ELF64 image has a "Xen" note XEN_ELFNOTE_PHYS32_ENTRY in a PT_NOTE segment."""
    if image[:4] != ELF_MAGIC or image[4] != 2:  # ELFCLASS64
        return False
    phoff, = struct.unpack_from("<Q", image, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", image, 0x36)
    for i in range(phnum):
        kind, _, offset, _, _, size = struct.unpack_from("<IIQQQQ", image, phoff + i * phentsize)
        at, end = offset, offset + size
        while kind == PT_NOTE and at + 12 <= end:
            namesz, descsz, note = struct.unpack_from("<III", image, at)
            name = image[at + 12:at + 12 + namesz].rstrip(b"\0")
            if name == b"Xen" and note == XEN_ELFNOTE_PHYS32_ENTRY:
                return True
            at += 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
    return False


def extract_vmlinux(vmlinuz, into):
    """The ELF kernel inside the bzImage vmlinuz, as into/vmlinux-RELEASE (once), or None with
    the reason when it has none that QEMU can boot through PVH."""
    target = into / vmlinuz.name.replace("vmlinuz-", "vmlinux-", 1)
    if target.is_file():
        return target, ""
    data = vmlinuz.read_bytes()
    for magic, decompressor in ((XZ_MAGIC, lambda: lzma.LZMADecompressor(lzma.FORMAT_XZ)),
                                (GZIP_MAGIC, lambda: zlib.decompressobj(16 + zlib.MAX_WBITS))):
        start = data.find(magic)
        while start >= 0:
            try:
                image = decompressor().decompress(data[start:])
            except (lzma.LZMAError, zlib.error):
                image = b""
            if image[:4] == ELF_MAGIC:
                if not elf_has_pvh_entry(image):
                    return None, "its ELF kernel has no PVH entry (CONFIG_PVH)"
                partial = target.with_suffix(".partial")
                partial.write_bytes(image)
                partial.replace(target)
                return target, ""
            start = data.find(magic, start + 1)
    return None, "no XZ or gzip stream in it holds an ELF kernel"


def prepare(work):
    """Everything Linux's boot needs: {"vmlinuz", "image", "initramfs", "package", ...}: image
    is what boots, the uncompressed kernel where it has a PVH entry, else vmlinuz."""
    kernel_deb, busybox_deb = fetch(work)
    linux = unpack(kernel_deb, work / "linux", members=("./boot/",))
    images = sorted((linux / "boot").glob("vmlinuz-*"))
    if not images:
        raise Failure(f"{kernel_deb.name} holds no /boot/vmlinuz-*", UNAVAILABLE)
    busybox = unpack(busybox_deb, work / "busybox") / "bin" / "busybox"
    benchmark = build_benchmark(work)
    initramfs = make_initramfs(work / "initramfs.cpio", busybox, benchmark)
    image, why = extract_vmlinux(images[-1], linux / "boot")
    if image is None:
        say(f"{images[-1].name}: booting the bzImage itself: {why}")
    return {"vmlinuz": images[-1], "image": image or images[-1], "initramfs": initramfs,
            "package": deb_field(kernel_deb, "Package"),
            "package_version": deb_field(kernel_deb, "Version"),
            "busybox_version": deb_field(busybox_deb, "Version")}


# Linux's log: "compare: " records, the last one sealed with a CRC-32 of those before it.

RECORD = re.compile(r"^compare: (\w+)(?: (.*))?$")
PAIR = re.compile(r"(\w+)=(\S+)")


def pairs(text):
    return {key: bench.parse_value(value) for key, value in PAIR.findall(text or "")}


def parse_linux_log(raw, configs, passes):
    """{"begin", "version", "cpu", "fires", "metrics", "end"} from the serial bytes, or raise
    Failure(CRASH) when the records are incomplete, unsealed or corrupted."""
    lines = ktap.clean(raw).splitlines()
    records = [line for line in lines if RECORD.match(line)]
    errors = [line for line in records if line.startswith("compare: error")]
    if errors:
        raise Failure("Linux benchmark: " + "; ".join(errors), CRASH)
    ends = [index for index, line in enumerate(records) if line.startswith("compare: end ")]
    if not ends:
        tail = " | ".join(lines[-5:])
        raise Failure(f"Linux log has no end record (last lines: {tail})", CRASH)
    end = pairs(records[ends[0]][len("compare: end "):])
    body = records[:ends[0]]
    crc = zlib.crc32("".join(line + "\n" for line in body).encode("utf-8", "surrogateescape"))
    if end.get("lines") != len(body) or end.get("crc32") != f"0x{crc:08x}":
        raise Failure(f"Linux log does not verify: end record says lines={end.get('lines')} "
                      f"crc32={end.get('crc32')}, the log has {len(body)} records with crc32="
                      f"0x{crc:08x} (a record lost or garbled)", CRASH)
    result = {"begin": {}, "version": "", "cpu": "", "vulnerabilities": {}, "fires": [],
              "passes": {}, "metrics": {}, "end": end}
    for line in body:
        kind, rest = RECORD.match(line).groups()
        if kind == "begin":
            result["begin"] = pairs(rest)
        elif kind == "vulnerability":
            name, _, text = (rest or "").partition(": ")
            result["vulnerabilities"][name] = text
        elif kind in ("version", "cpu"):
            result[kind] = rest or ""
        elif kind == "fire":
            fire = pairs(rest)
            fire["ok"] = rest.endswith(" ok")
            result["fires"].append(fire)
        elif kind == "pass":
            values = pairs(rest)
            result["passes"].setdefault(values.pop("config"), []).append(values)
        elif kind == "metric":
            metric = pairs(rest)
            result["metrics"][metric.pop("config")] = metric
    empty = [f"{config} pass {record.get('pass')}" for config, records in result["passes"].items()
             for record in records if not record.get("samples") or not record.get("median")]
    if empty:
        raise Failure(f"Linux log: no samples in {', '.join(empty)}", CRASH)
    failed = [fire for fire in result["fires"] if not fire["ok"]]
    for config in configs:
        fires = [fire for fire in result["fires"] if fire.get("config") == config]
        if len(fires) != LINUX_FIRES[config] * passes:
            raise Failure(f"Linux log: configuration {config} has {len(fires)} fire records, "
                          f"not {LINUX_FIRES[config] * passes}", CRASH)
        timed = config in result["metrics"]
        if timed == any(fire in failed for fire in fires):
            raise Failure(f"Linux log: configuration {config} is "
                          + ("timed although an event failed its fire check" if timed
                             else "neither timed nor failed"), CRASH)
    if (end.get("status") == "fail") != bool(failed) or end.get("failed") != len(failed):
        raise Failure(f"Linux log: end record {end} disagrees with {len(failed)} failed fire "
                      "records", CRASH)
    return result


def fire_failures(result):
    return [f"{fire['config']}: {fire['task']}'s {fire['event']} counted {fire['count']}, "
            f"expected {fire.get('expected', fire.get('at_least'))}"
            for fire in result["fires"] if not fire["ok"]]


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def configurations(rounds, bare, pooled=None):
    """Each configuration's cycles and its ratio to `bare`, from `rounds`: one {config: {median,
    p99?, samples}} per Linux pass or switchyard boot. A round's ratio is to the bare median of
    the same round, so a host load that changes between rounds does not bias it; "ratio" is
    the median of the rounds' ratios, and "ratios" all of them. `pooled` ({config: {median,
    p99, samples}}, Linux's over all samples) supplies p99 where given."""
    result = {}
    for config in rounds[0]:
        both = [r for r in rounds if config in r and bare in r and r[bare]["median"] > 0]
        ratios = [r[config]["median"] / r[bare]["median"] for r in both]
        medians = [r[config]["median"] for r in both]
        p99s = [r[config]["p99"] for r in both if "p99" in r[config]]
        entry = {"median": round(median(medians)),
                 "p99": (pooled or {}).get(config, {}).get("p99") or round(median(p99s)),
                 "samples": sum(r[config]["samples"] for r in both),
                 "ratio": round(median(ratios), 3),
                 "ratios": [round(ratio, 3) for ratio in ratios],
                 "added_cycles": round(median([r[config]["median"] - r[bare]["median"]
                                               for r in both]))}
        result[config] = entry
    return result


def linux_rounds(result):
    """Linux's "pass" records as one {config: {median, samples}} per pass."""
    rounds = {}
    for config, records in result["passes"].items():
        for record in records:
            rounds.setdefault(record["pass"], {})[config] = {
                "median": record["median"], "samples": record["samples"]}
    return [rounds[index] for index in sorted(rounds)]


# Booting.

def host_tsc_khz():
    """The host's TSC frequency in kHz from /proc/cpuinfo when its TSC is constant, else None."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    flags = re.search(r"^flags\s*:(.*)$", text, re.M)
    mhz = re.search(r"^cpu MHz\s*:\s*([0-9.]+)$", text, re.M)
    if not flags or "constant_tsc" not in flags.group(1).split() or not mhz:
        return None
    return round(float(mhz.group(1)) * 1000)


def linux_cmdline(args):
    khz = host_tsc_khz()
    options = [LINUX_CMDLINE] + ([f"tsc_early_khz={khz}"] if khz else [])
    options += [f"compare.samples={args.samples}", f"compare.budget-ms={args.budget_ms}",
                f"compare.passes={args.passes}", f"compare.configs={','.join(args.configs)}"]
    if args.never_install:
        options.append("compare.never-install=1")
    return " ".join(options)


def linux_command(args, accel, prepared):
    return [args.qemu, "-M", args.machine, "-m", MEMORY, "-display", "none",
            "-nodefaults", "-no-reboot", "-serial", "stdio", "-accel", accel,
            "-cpu", qemu.CPU[accel], "-smp", str(CPUS), "-kernel", str(prepared["image"]),
            "-initrd", str(prepared["initramfs"]),
            "-append", linux_cmdline(args)]


def boot_linux(args, accel, prepared):
    argv = linux_command(args, accel, prepared)
    say(f"{accel}: booting Linux {prepared['image'].name} ({prepared['package_version']}), "
        f"{args.samples} samples or {args.budget_ms} ms per configuration")
    boot = qemu.boot(argv, args.timeout)
    log = args.out / f"compare-linux-{accel}.log"
    log.write_bytes(boot.raw)
    if boot.timed_out:
        raise Failure(f"{accel}: Linux: QEMU killed after {args.timeout:g} s (log: {log})",
                      TIMED_OUT)
    try:
        result = parse_linux_log(boot.raw, args.configs, args.passes)
    except Failure as error:
        raise Failure(f"{accel}: {error} (log: {log})", error.status) from None
    if boot.status != 0:
        raise Failure(f"{accel}: Linux: QEMU exited {boot.status}, not 0 after poweroff "
                      f"(log: {log}): {boot.stderr.strip()}", CRASH)
    say(f"{accel}: Linux {result['begin'].get('release')}: {result['end']['fired']} events "
        f"fired, {result['end']['failed']} failed ({boot.seconds:.1f} s)")
    result["seconds"] = round(boot.seconds, 3)
    result["argv"] = argv
    return result


def boot_switchyard(args, accel, number):
    """One boot of tests=dr.benchmark_*: its dr.switch_cycles.* metrics, banner and platform."""
    argv = qemu.qemu_command(args.kernel, accel, machine=args.machine, cmdline=SWITCHYARD_TESTS,
                             smp=CPUS, qemu=args.qemu)
    say(f"{accel}: booting switchyard with '{SWITCHYARD_TESTS}' ({number + 1} of "
        f"{args.switchyard_boots})")
    boot = qemu.boot(argv, args.timeout)
    log = args.out / f"compare-switchyard-{accel}-{number + 1}.log"
    log.write_bytes(boot.raw)
    try:
        result = bench.judge(boot.raw, boot.status, boot.timed_out, args.timeout)
    except bench.BrokenRun as error:
        raise Failure(f"{accel}: switchyard: {error} (log: {log})", error.status) from None
    if result.verdict != ktap.PASS:
        failed = [test.id for test in result.tests if test.status == "fail"]
        raise Failure(f"{accel}: switchyard: {result.verdict}: {', '.join(failed)} (log: {log})",
                      FAILED)
    metrics = bench.parse_metrics(result.metrics)
    prefix = "dr.switch_cycles."
    cycles = {name[len(prefix):]: values for name, values in metrics.items()
              if name.startswith(prefix)}
    missing = [config for config in SWITCHYARD_CONFIGS if config not in cycles]
    if missing:
        raise Failure(f"{accel}: switchyard's log lacks dr.switch_cycles.{', '.join(missing)} "
                      f"(log: {log})", CRASH)
    banner = next((line for line in result.lines if line.startswith("# switchyard ")), "")
    return {"metrics": {config: cycles[config] for config in SWITCHYARD_CONFIGS},
            "banner": banner[2:], "platform": bench.platform_lines(result),
            "seconds": round(boot.seconds, 3)}


def run_switchyard(args, accel):
    """args.switchyard_boots boots, each a round of every configuration."""
    boots = [boot_switchyard(args, accel, number) for number in range(args.switchyard_boots)]
    seconds = sum(boot["seconds"] for boot in boots)
    say(f"{accel}: switchyard: PASS, {len(boots)} boot(s) ({seconds:.1f} s)")
    return {"rounds": [boot["metrics"] for boot in boots], "banner": boots[0]["banner"],
            "platform": boots[0]["platform"], "seconds": round(seconds, 3)}


# Results.

def text_of(argv):
    try:
        return run(argv, timeout=30).stdout.strip()
    except OSError:
        return ""


def switchyard_version(banner):
    """"switchyard 0.1 (x86-64)" plus the commit of the tree it was built from, if known."""
    commit = text_of(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    version = banner.split(" (")[0] or "switchyard"
    return f"{version} ({commit})" if commit else version


def host_cpu():
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return ""


def accel_record(accel, linux, switchyard):
    return {
        "accel": accel,
        "cpu": qemu.CPU[accel],
        "switchyard": {"measures": MEASURES["switchyard"], "bare": SWITCHYARD_BARE,
                       "rounds": len(switchyard["rounds"]), "seconds": switchyard["seconds"],
                       "platform": switchyard["platform"],
                       "configurations": configurations(switchyard["rounds"], SWITCHYARD_BARE)},
        "linux": {"measures": MEASURES["linux"], "bare": LINUX_BARE,
                  "rounds": len(linux_rounds(linux)), "seconds": linux["seconds"],
                  "cpu_model": linux["cpu"], "fired": linux["end"]["fired"],
                  "failed": linux["end"]["failed"], "fires": linux["fires"],
                  "configurations": configurations(linux_rounds(linux), LINUX_BARE,
                                                   linux["metrics"])},
    }


def document(args, prepared, runs, skipped, linux, switchyard, load, generated=None):
    generated = generated or datetime.datetime.now(datetime.timezone.utc)
    return {
        "generated": generated.isoformat(timespec="seconds"),
        "platform": {"qemu": (text_of([args.qemu, "--version"]).splitlines() or [""])[0],
                     "machine": args.machine, "cpus": CPUS, "host_cpu": host_cpu(),
                     "host_cpus": os.cpu_count(), "host_tsc_khz": host_tsc_khz(),
                     "host_load_average": load, "memory": MEMORY},
        "kernels": {
            "switchyard": {"version": switchyard_version(switchyard["banner"]),
                           "banner": switchyard["banner"], "tests": SWITCHYARD_TESTS},
            "linux": {"release": linux["begin"].get("release"), "version": linux["version"],
                      "package": prepared["package"],
                      "package_version": prepared["package_version"],
                      "busybox": prepared["busybox_version"],
                      "image": prepared["image"].name,
                      "cmdline": linux_cmdline(args),
                      "vulnerabilities": linux["vulnerabilities"],
                      "samples": args.samples, "budget_ms": args.budget_ms},
        },
        "runs": runs,
        "skipped": skipped,
    }


# The chart: one panel per accelerator; groups of bars per kind of configuration.
GROUPS = (
    ("identical\nbreakpoints", ("switchyard", "lazy_identical"), ("switchyard", "eager_identical"),
     ("linux", "identical")),
    ("different\nbreakpoints", ("switchyard", "lazy_different"), ("switchyard", "eager_different"),
     ("linux", "different")),
    ("inherited across fork\n(Linux swaps contexts)", None, None, ("linux", "inherited")),
    ("2 software counters, no breakpoint\n(Linux: perf's own bookkeeping)", None, None,
     ("linux", "software")),
)
SERIES = (("switchyard lazy: writes only what changed (default)", "#4c72b0"),
          ("switchyard eager (dr.lazy=0): rewrites DR0-3, DR7 at every switch", "#9fb7dd"),
          ("Linux 6.1: perf_event_open breakpoints", "#dd8452"))


def subtitle(doc):
    version = re.search(r"version (\S+)", doc["platform"]["qemu"])
    linux = doc["kernels"]["linux"]
    skipped = "".join(f"; {accel.upper()} skipped: {reason}"
                      for accel, reason in doc["skipped"].items())
    return (f"QEMU {version.group(1) if version else ''}, -M {doc['platform']['machine']}, "
            f"{doc['platform']['cpus']} vCPUs, host {doc['platform']['host_cpu'] or 'unknown'}"
            f"{skipped}\n{doc['kernels']['switchyard']['version']} vs Linux {linux['release']} "
            f"(Debian {linux['package_version']}), {doc['generated'][:10]}")


def plot(doc, paths):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    runs = doc["runs"]
    fig, axes = plt.subplots(1, len(runs), figsize=(9.5 * len(runs), 6.2), squeeze=False,
                             layout="constrained")
    width = 0.26
    for ax, record in zip(axes[0], runs):
        top = 1.0
        for index, (_, *members) in enumerate(GROUPS):
            present = [(series, record[member[0]]["configurations"].get(member[1]))
                       for series, member in enumerate(members) if member is not None]
            present = [(series, values) for series, values in present if values]
            for slot, (series, values) in enumerate(present):
                x = index + (slot - (len(present) - 1) / 2) * width
                ratio = values["ratio"]
                low, high = min(values["ratios"]), max(values["ratios"])
                top = max(top, ratio, high)
                ax.bar(x, ratio, width * 0.92, color=SERIES[series][1], zorder=2)
                if len(values["ratios"]) > 1:
                    ax.errorbar(x, ratio, yerr=[[ratio - low], [high - ratio]], fmt="none",
                                ecolor="black", elinewidth=0.8, capsize=2.5, zorder=3)
                ax.annotate(f"{ratio:.2f}×\n{values['added_cycles']:+,}", (x, high),
                            xytext=(0, 2), textcoords="offset points", ha="center",
                            va="bottom", fontsize=7.5, linespacing=1.1)
        ax.axhline(1.0, color="black", linestyle="--", linewidth=1, zorder=3)
        ax.set_xticks(range(len(GROUPS)), [group[0] for group in GROUPS], fontsize=9)
        ax.set_xlim(-0.55, len(GROUPS) - 0.45)
        ax.set_ylim(0, top * 1.25)
        ax.set_ylabel("cycles per switch ÷ the same kernel's bare switch")
        bare_sy = record["switchyard"]["configurations"][SWITCHYARD_BARE]["median"]
        bare_linux = record["linux"]["configurations"][LINUX_BARE]["median"]
        ax.set_title(f"QEMU {record['accel'].upper()} (-cpu {record['cpu']}); each bar: the "
                     "ratio, and the cycles it adds to a switch", fontsize=10)
        ax.grid(axis="y", alpha=0.35, zorder=0)
        handles = [Patch(color=colour, label=name) for name, colour in SERIES]
        handles.append(Line2D([], [], color="black", marker="|", linewidth=0, markersize=9,
                              label=f"median of {record['linux']['rounds']} Linux passes, "
                                    f"{record['switchyard']['rounds']} switchyard boots; "
                                    "whisker: their range"))
        handles.append(Line2D([], [], color="black", linestyle="--", linewidth=1,
                              label=f"bare switch = 1 (switchyard {bare_sy:,} cycles, "
                                    f"Linux {bare_linux:,})"))
        ax.legend(handles=handles, loc="upper right", fontsize=8, framealpha=0.95)
    fig.suptitle("Per-task breakpoints at a context switch, each kernel relative to its own "
                 "bare switch\n" + subtitle(doc), fontsize=10.5)
    fig.text(0.01, 0.005, "\n".join([
        "switchyard: half a sched_yield() round trip between two kernel tasks (4 DR slots each). "
        "Linux: half a pipe round trip between two processes pinned to one CPU",
        "(a switch plus a pipe write and read; 2 write watchpoints + 1 execute breakpoint each). "
        "Every Linux breakpoint was checked to fire before timing.",
        "Under TCG a debug-register write is QEMU's work (breakpoint and watchpoint bookkeeping), "
        "not silicon's: the absolute costs say nothing about hardware."]),
        fontsize=7.5, ha="left", va="bottom", color="#444444")
    fig.get_layout_engine().set(rect=(0, 0.065, 1, 0.935))
    for path in paths:
        fig.savefig(path, dpi=120)
    plt.close(fig)


def summary(doc):
    """The last lines of make compare: both kernels' ratios for identical breakpoints."""
    lines = []
    for record in doc["runs"]:
        sy, linux = (record[kernel]["configurations"] for kernel in ("switchyard", "linux"))
        if "identical" not in linux:
            lines.append(f"{record['accel']}: identical breakpoints not measured on Linux")
            continue
        cells = [f"switchyard lazy {sy['lazy_identical']['ratio']:.3f}x "
                 f"({sy['lazy_identical']['added_cycles']:+,} cycles)",
                 f"eager {sy['eager_identical']['ratio']:.3f}x "
                 f"({sy['eager_identical']['added_cycles']:+,})",
                 f"Linux {linux['identical']['ratio']:.3f}x "
                 f"({linux['identical']['added_cycles']:+,})"]
        lines.append(f"{record['accel']}: identical breakpoints, ratio to the kernel's own bare "
                     f"switch (cycles added): " + ", ".join(cells))
    return "\n".join(lines)


def table(doc):
    lines = []
    for record in doc["runs"]:
        for kernel in ("switchyard", "linux"):
            for name, values in record[kernel]["configurations"].items():
                lines.append(f"  {record['accel']} {kernel:<10} {name:<16} "
                             f"median={values['median']:>9,} p99={values['p99']:>9,} "
                             f"added={values['added_cycles']:>+8,} ratio={values['ratio']:.3f}")
    return "\n".join(lines)


def remove_stale(out):
    for name in OUTPUTS:
        (out / name).unlink(missing_ok=True)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="scripts/compare", description=__doc__.split("\n")[0])
    arguments.add_accels(parser, "accelerator, repeatable (default: tcg, and kvm when usable)")
    parser.add_argument("--samples", type=int, default=20000,
                        help="Linux round trips per configuration at most (default: %(default)s)")
    parser.add_argument("--budget-ms", type=int, default=3000,
                        help="or milliseconds per configuration (default: %(default)s)")
    parser.add_argument("--passes", type=int, default=6,
                        help="Linux: the configurations in turn this many times, each a fresh "
                        "pair of processes, samples pooled (default: %(default)s)")
    parser.add_argument("--configs", default=",".join(LINUX_CONFIGS),
                        help="Linux configurations (default: %(default)s)")
    parser.add_argument("--switchyard-boots", type=int, default=3,
                        help="boots of switchyard's benchmark, each a round (default: "
                        "%(default)s)")
    parser.add_argument("--never-install", action="store_true",
                        help="open Linux's breakpoints disabled, never enabled: the fire check "
                        "must fail (a test of the check)")
    arguments.add_timeout(parser, 240.0,
                          "seconds per boot before QEMU is killed (default: %(default)g)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="results directory (default: build/bench)")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK,
                        help="downloads, unpacked packages, initramfs (default: build/compare)")
    arguments.add_kernel(parser, "switchyard's multiboot ELF32 image")
    arguments.add_qemu(parser)
    args = parser.parse_args(argv)
    args.configs = list(dict.fromkeys(args.configs.split(",")))
    unknown = [config for config in args.configs if config not in LINUX_CONFIGS]
    if unknown:
        parser.error(f"--configs: unknown {', '.join(unknown)} (known: {', '.join(LINUX_CONFIGS)})")
    if LINUX_BARE not in args.configs:
        parser.error(f"--configs must include {LINUX_BARE}: the ratios are to it")
    if min(args.samples, args.budget_ms, args.passes, args.switchyard_boots) < 1 \
            or args.passes > args.samples:
        parser.error("--samples, --budget-ms, --passes and --switchyard-boots must be at least "
                     "1, --passes at most --samples")
    arguments.check(parser, args)
    args.accel = arguments.accels(args)
    return args


def kvm_skip_reason():
    """Why the KVM leg cannot run here, or None: /dev/kvm unusable, or KVM-PVM."""
    if qemu.kvm_unusable_reason():
        return f"KVM unusable: {qemu.kvm_unusable_reason()}"
    if qemu.kvm_host() == "kvm-pvm":
        return KVM_PVM_REASON
    return None


def main(argv):
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    remove_stale(args.out)
    load = {"before": round(os.getloadavg()[0], 2)}
    if load["before"] > os.cpu_count():
        say(f"warning: the host's load average is {load['before']} on {os.cpu_count()} CPUs: "
            "the numbers will be noisy")
    try:
        prepared = prepare(args.work)
        runs, skipped, linux, switchyard = [], {}, None, None
        for accel in args.accel:
            if accel == "kvm" and kvm_skip_reason():
                skipped["kvm"] = kvm_skip_reason()
                say(f"kvm: skipped: {skipped['kvm']}")
                continue
            linux = boot_linux(args, accel, prepared)
            failures = fire_failures(linux)
            if failures:
                for failure in failures:
                    say(f"{accel}: Linux breakpoint did not fire: {failure}")
                raise Failure(f"{accel}: {len(failures)} Linux event(s) failed the fire check; "
                              "nothing timed for those configurations, no results written",
                              FAILED)
            switchyard = run_switchyard(args, accel)
            runs.append(accel_record(accel, linux, switchyard))
    except Failure as error:
        say(f"error: {error}")
        return error.status
    if not runs:
        say("error: no accelerator could run")
        return BAD_ARGUMENTS
    load["after"] = round(os.getloadavg()[0], 2)
    doc = document(args, prepared, runs, skipped, linux, switchyard, load)
    (args.out / "compare.json").write_text(json.dumps(doc, indent=2) + "\n")
    plot(doc, [args.out / "compare.png", args.out / "compare.svg"])
    print(table(doc))
    for name in OUTPUTS:
        print(f"compare: wrote {args.out / name}")
    print(summary(doc))
    return OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""scripts/compare (make compare): Linux as the peer, in the same run and on the same platform.

The pure parts run on logs built here and sealed with an independent CRC. The tests marked
"compare" fetch Debian's kernel image and busybox-static (skipped, with the reason, when they
cannot be fetched), boot Linux and switchyard under QEMU TCG with small loops, and check that
compare.json is complete, that every Linux breakpoint fired, and that a Linux run whose
breakpoints are never installed fails the fire check.
"""

import json
import lzma
import stat
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from switchyard import compare

ROOT = Path(__file__).resolve().parents[2]
COMPARE = ROOT / "scripts" / "compare"
KERNEL = ROOT / "build" / "switchyard32.elf"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SKIP = 77




def sealed(records, status=None):
    """Linux's log: kernel noise, the records, and an end record with their CRC-32 and count."""
    lines = [f"compare: {record}" for record in records]
    failed = sum(record.startswith("fire ") and record.endswith("FAILED") for record in records)
    fired = sum(record.startswith("fire ") and record.endswith(" ok") for record in records)
    crc = zlib.crc32("".join(line + "\n" for line in lines).encode())
    status = status or ("fail" if failed else "pass")
    end = (f"compare: end status={status} fired={fired} failed={failed} crc32=0x{crc:08x} "
           f"lines={len(lines)}")
    return "\r\n".join(["[    0.000000] Linux version 6.1.0-57-amd64", *lines, end,
                        "compare: exit=0", "[    3.4] reboot: Power down", ""]).encode()


def fires(config, pass_number, tasks=("parent", "child"), outcome="ok", count=1):
    events = ("write0", "write1", "exec")
    return [f"fire config={config} pass={pass_number} task={task} event={event} count={count} "
            f"expected=1 {outcome}" for task in tasks for event in events]


def pass_records(pass_number, none, identical):
    return ([f"pass config=none pass={pass_number} median={none} samples=100"]
            + fires("identical", pass_number)
            + [f"pass config=identical pass={pass_number} median={identical} samples=100"])


GOOD = (["begin format=1 release=6.1.0-57-amd64 machine=x86_64 samples=200 budget_ms=100 passes=2",
         "version #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-11-26)",
         "cpu QEMU TCG CPU version 2.5+",
         "vulnerability spectre_v2: Mitigation: Retpolines"]
        + pass_records(0, 1000, 1400) + pass_records(1, 2000, 2900)
        + ["metric config=none median=1500 p99=9000 samples=200",
           "metric config=identical median=2100 p99=9900 samples=200"])


# The pure parts.

def test_a_sealed_log_gives_every_record():
    result = compare.parse_linux_log(sealed(GOOD), ["none", "identical"], passes=2)
    assert result["begin"]["release"] == "6.1.0-57-amd64"
    assert result["version"].endswith("Debian 6.1.192-3 (2026-11-26)")
    assert result["vulnerabilities"] == {"spectre_v2": "Mitigation: Retpolines"}
    assert len(result["fires"]) == 12 and all(fire["ok"] for fire in result["fires"])
    assert compare.fire_failures(result) == []
    assert result["metrics"]["identical"] == {"median": 2100, "p99": 9900, "samples": 200}
    assert compare.linux_rounds(result) == [
        {"none": {"median": 1000, "samples": 100}, "identical": {"median": 1400, "samples": 100}},
        {"none": {"median": 2000, "samples": 100}, "identical": {"median": 2900, "samples": 100}}]


def test_each_round_is_divided_by_its_own_bare_switch():
    """A load that doubles every number between two passes leaves the ratio alone."""
    result = compare.parse_linux_log(sealed(GOOD), ["none", "identical"], passes=2)
    table = compare.configurations(compare.linux_rounds(result), "none", result["metrics"])
    assert table["none"]["ratio"] == 1.0
    assert table["identical"]["ratios"] == [1.4, 1.45]
    assert table["identical"]["ratio"] == 1.425
    assert table["identical"]["median"] == 2150  # the median of the passes' medians
    assert table["identical"]["p99"] == 9900  # from all samples
    assert table["identical"]["samples"] == 200
    assert table["identical"]["added_cycles"] == 650


def test_a_breakpoint_that_did_not_fire_is_reported_and_not_timed():
    records = (GOOD[:4] + ["pass config=none pass=0 median=1000 samples=100"]
               + fires("identical", 0, tasks=("parent",), outcome="FAILED", count=0)
               + fires("identical", 0, tasks=("child",))
               + ["metric config=none median=1000 p99=9000 samples=100"])
    result = compare.parse_linux_log(sealed(records), ["none", "identical"], passes=1)
    assert result["end"]["status"] == "fail"
    assert compare.fire_failures(result) == [f"identical: parent's {event} counted 0, expected 1"
                                             for event in ("write0", "write1", "exec")]


@pytest.mark.parametrize("mangle, fragment", [
    (lambda raw: raw.replace(b"median=1400", b"median=1401"), "does not verify"),
    (lambda raw: raw.replace(b"compare: pass config=none pass=1", b"[ 2.1] oops\r\ncompare: pass "
                             b"config=none pass=1"), None),  # a kernel line between records
    (lambda raw: raw.replace(b"compare: pass config=none pass=1", b"compare: pass [ 2.1] oops "
                             b"config=none pass=1"), "does not verify"),  # one in a record
    (lambda raw: raw[:raw.index(b"compare: end")], "no end record"),
    (lambda raw: raw.replace(b"compare: metric config=identical", b"compare: error fork: "
                             b"ENOMEM\r\ncompare: metric config=identical"), "error fork"),
], ids=["flipped-byte", "kernel-line-between", "kernel-text-inside", "truncated", "error"])
def test_a_log_that_does_not_verify_is_a_crash(mangle, fragment):
    raw = mangle(sealed(GOOD))
    if fragment is None:
        assert compare.parse_linux_log(raw, ["none", "identical"], passes=2)
        return
    with pytest.raises(compare.Failure) as error:
        compare.parse_linux_log(raw, ["none", "identical"], passes=2)
    assert error.value.status == 4 and fragment in str(error.value)


@pytest.mark.parametrize("records, fragment", [
    (GOOD[:-1], "neither timed nor failed"),
    ([record for record in GOOD if "pass=1 task=child" not in record], "has 9 fire records"),
    ([record.replace("pass=1 median=2900 samples=100", "pass=1 median=0 samples=0")
      for record in GOOD], "no samples in identical pass 1"),
], ids=["untimed", "missing-fires", "empty-pass"])
def test_an_incomplete_log_is_a_crash(records, fragment):
    with pytest.raises(compare.Failure) as error:
        compare.parse_linux_log(sealed(records), ["none", "identical"], passes=2)
    assert error.value.status == 4 and fragment in str(error.value)


def read_newc(data):
    """{name: (mode, rdev major, minor, data)} from a "newc" cpio archive."""
    entries, offset = {}, 0
    while True:
        assert data[offset:offset + 6] == b"070701"
        fields = [int(data[offset + 6 + 8 * i:offset + 14 + 8 * i], 16) for i in range(13)]
        name_start = offset + 110
        name = data[name_start:name_start + fields[11] - 1].decode()
        body = name_start + fields[11] + (-(110 + fields[11]) % 4)
        if name == "TRAILER!!!":
            return entries
        entries[name] = (fields[1], fields[9], fields[10], data[body:body + fields[6]])
        offset = body + fields[6] + (-fields[6] % 4)


def test_the_initramfs_holds_init_busybox_the_benchmark_and_a_console(tmp_path):
    busybox, benchmark = tmp_path / "busybox", tmp_path / "pingpong"
    busybox.write_bytes(b"\x7fELF busybox")
    benchmark.write_bytes(b"\x7fELF pingpong!")
    entries = read_newc(compare.make_initramfs(tmp_path / "initramfs.cpio", busybox,
                                               benchmark).read_bytes())
    assert entries["init"][3] == compare.INIT.read_bytes()
    assert entries["init"][3].startswith(b"#!/bin/sh\n") and entries["init"][0] & 0o111
    assert entries["bin/busybox"][3] == b"\x7fELF busybox"
    assert entries["pingpong"][3] == b"\x7fELF pingpong!"
    assert stat.S_ISLNK(entries["bin/sh"][0]) and entries["bin/sh"][3] == b"busybox"
    mode, major, minor, _ = entries["dev/console"]
    assert stat.S_ISCHR(mode) and (major, minor) == (5, 1)
    assert {"bin", "dev", "proc", "sys"} <= {name for name, entry in entries.items()
                                      if stat.S_ISDIR(entry[0])}


@pytest.mark.parametrize("args", [["--configs", "identical"], ["--configs", "none,bogus"],
                                  ["--passes", "0"], ["--kernel", "/nonexistent"]])
def test_bad_arguments_exit_2(tmp_path, args):
    proc = subprocess.run([sys.executable, str(COMPARE), "--out", str(tmp_path), *args],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "error:" in proc.stderr, proc.stderr


def test_packages_that_cannot_be_fetched_exit_77(tmp_path):
    """No package lists and no registry: apt-cache knows nothing, apt-get fails."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "apt-cache").write_text("#!/bin/sh\nexit 0\n")
    (fake / "apt-get").write_text("#!/bin/sh\necho 'E: Failed to fetch' >&2\nexit 100\n")
    for tool in fake.iterdir():
        tool.chmod(0o755)
    env = {"PATH": f"{fake}:/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, str(COMPARE), "--out", str(tmp_path / "out"),
                           "--work", str(tmp_path / "work"), "--kernel", str(COMPARE)],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == SKIP, proc.stderr
    assert "cannot fetch the packages" in proc.stderr


def elf_with_notes(*notes):
    """A minimal ELF64 image: its header, one PT_NOTE program header, the notes (name, type)."""
    body = b"".join(struct.pack("<III", len(name) + 1, 4, kind) + name + b"\0"
                    + b"\0" * (-(len(name) + 1) % 4) + b"\0" * 4 for name, kind in notes)
    header = bytearray(64)
    header[:5] = b"\x7fELF\x02"
    struct.pack_into("<Q", header, 0x20, 64)  # e_phoff
    struct.pack_into("<HH", header, 0x36, 56, 1)  # e_phentsize, e_phnum
    program = struct.pack("<IIQQQQQQ", compare.PT_NOTE, 0, 64 + 56, 0, 0, len(body), len(body), 4)
    return bytes(header) + program + body


@pytest.mark.parametrize("inside, expected", [
    (None, "no XZ or gzip stream in it holds an ELF kernel"),
    (b"not an ELF at all", "no XZ or gzip stream in it holds an ELF kernel"),
    (elf_with_notes((b"Xen", 5), (b"Linux", 18)), "its ELF kernel has no PVH entry (CONFIG_PVH)"),
    (elf_with_notes((b"Xen", 5), (b"Xen", compare.XEN_ELFNOTE_PHYS32_ENTRY)), ""),
])
def test_the_uncompressed_kernel_boots_only_with_a_pvh_entry(tmp_path, inside, expected):
    """A bzImage's XZ stream holding an ELF kernel with the PVH note gives vmlinux-RELEASE;
    anything else falls back to the bzImage with the reason."""
    stream = lzma.compress(inside, format=lzma.FORMAT_XZ) if inside is not None else b""
    vmlinuz = tmp_path / "vmlinuz-6.1.0-1-amd64"
    vmlinuz.write_bytes(b"MZ setup code" + b"\0" * 100 + stream + b"\0" * 16)
    image, why = compare.extract_vmlinux(vmlinuz, tmp_path)
    assert why == expected
    if expected:
        assert image is None and not (tmp_path / "vmlinux-6.1.0-1-amd64").exists()
    else:
        assert image == tmp_path / "vmlinux-6.1.0-1-amd64" and image.read_bytes() == inside


# Debian's Linux and switchyard under QEMU TCG, with small loops.

SMALL = ["--accel", "tcg", "--samples", "600", "--budget-ms", "600", "--passes", "2",
         "--switchyard-boots", "1", "--timeout", "240"]


def run_compare(out, *args):
    assert KERNEL.is_file(), f"kernel image {KERNEL} not found: run make"
    proc = subprocess.run([sys.executable, str(COMPARE), "--out", str(out), *SMALL, *args],
                          capture_output=True, text=True, timeout=560)
    if proc.returncode == SKIP:
        pytest.skip(proc.stderr.strip().splitlines()[-1])
    return proc


@pytest.mark.compare
@pytest.mark.timeout(600)
def test_compare_writes_both_kernels_configurations(tmp_path):
    proc = run_compare(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    document = json.loads((tmp_path / "compare.json").read_text())
    assert document["generated"].endswith("+00:00")
    platform = document["platform"]
    assert platform["qemu"].startswith("QEMU emulator version")
    assert (platform["machine"], platform["cpus"]) == ("microvm", 2)
    linux = document["kernels"]["linux"]
    assert linux["release"].endswith("-amd64") and linux["package"].startswith("linux-image-")
    assert linux["package_version"] and linux["busybox"] and "Debian" in linux["version"]
    # The uncompressed kernel boots through PVH: Debian's has CONFIG_PVH.
    assert linux["image"] == f"vmlinux-{linux['release']}", linux["image"]
    assert document["kernels"]["switchyard"]["version"].startswith("switchyard ")
    [run] = document["runs"]
    assert (run["accel"], run["cpu"]) == ("tcg", "max")
    sides = {"switchyard": compare.SWITCHYARD_CONFIGS, "linux": compare.LINUX_CONFIGS}
    for kernel, configs in sides.items():
        table = run[kernel]["configurations"]
        assert list(table) == list(configs), kernel
        assert table[run[kernel]["bare"]]["ratio"] == 1.0
        for config, values in table.items():
            assert isinstance(values["median"], int) and values["median"] > 0, (kernel, config)
            assert values["p99"] >= values["median"] and values["samples"] > 0, (kernel, config)
            assert values["ratio"] > 0 and len(values["ratios"]) == run[kernel]["rounds"]
    # Every Linux breakpoint fired: each was hit once and counted once (twice, inherited).
    fired = run["linux"]["fires"]
    assert run["linux"]["failed"] == 0 and run["linux"]["fired"] == len(fired)
    assert len(fired) == 2 * sum(compare.LINUX_FIRES.values())
    assert all(fire["ok"] for fire in fired)
    breakpoints = [fire for fire in fired if fire["config"] != "software"]
    assert {(fire["config"], fire["count"]) for fire in breakpoints} == {
        ("identical", 1), ("different", 1), ("inherited", 2)}
    if "kvm" not in {r["accel"] for r in document["runs"]}:
        assert document["skipped"].get("kvm", "").startswith("KVM unusable") \
            or document["skipped"] == {}
    assert (tmp_path / "compare.png").read_bytes().startswith(PNG_MAGIC)
    assert b"<svg" in (tmp_path / "compare.svg").read_bytes()[:2000]
    # The last lines: both kernels' ratios for identical breakpoints.
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("tcg: identical breakpoints") and "switchyard lazy" in last \
        and "Linux" in last, last


@pytest.mark.compare
@pytest.mark.timeout(600)
def test_breakpoints_that_are_never_installed_fail_the_fire_check(tmp_path):
    (tmp_path / "compare.json").write_text("{}")  # a stale result must go
    proc = run_compare(tmp_path, "--never-install", "--configs", "none,identical,inherited")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Linux breakpoint did not fire: identical: parent's write0 counted 0" in proc.stderr
    assert "failed the fire check" in proc.stderr
    for name in compare.OUTPUTS:
        assert not (tmp_path / name).exists(), name
    log = (tmp_path / "compare-linux-tcg.log").read_text(errors="replace")
    failed = [line for line in log.splitlines() if line.startswith("compare: fire")
              and line.rstrip().endswith("FAILED")]
    assert len(failed) == 2 * (6 + 3), log  # every breakpoint, in both passes
    assert all(" count=0 " in line for line in failed)
    assert "compare: metric config=none " in log  # the bare run still timed
    assert "compare: metric config=identical" not in log
    assert not list(tmp_path.glob("compare-switchyard-*.log"))  # no use booting switchyard


@pytest.mark.parametrize("host, calls", [("kvm-pvm", ["tcg"]), ("kvm-vmx", ["kvm"])])
def test_the_kvm_leg_is_skipped_with_the_reason_under_kvm_pvm(tmp_path, monkeypatch, capsys,
                                                              host, calls):
    """Linux never boots under KVM-PVM: the leg is skipped at once, never waited out."""
    booted = []

    def boot_linux(args, accel, prepared):
        booted.append(accel)
        raise compare.Failure(f"{accel}: stopped here", compare.FAILED)
    monkeypatch.setattr(compare.qemu, "kvm_unusable_reason", lambda: None)
    monkeypatch.setattr(compare.qemu, "kvm_host", lambda: host)
    monkeypatch.setattr(compare, "prepare", lambda work: {})
    monkeypatch.setattr(compare, "boot_linux", boot_linux)
    status = compare.main(["--out", str(tmp_path), "--kernel", str(COMPARE),
                           "--accel", "kvm", "--accel", "tcg"])
    assert (status, booted) == (compare.FAILED, calls)
    skipped = f"compare: kvm: skipped: {compare.KVM_PVM_REASON}"
    assert (skipped in capsys.readouterr().err) == (host == "kvm-pvm")
    assert "Probing EDD" in compare.KVM_PVM_REASON

"""Run switchyard's LAVA jobs through the real lava-run, with QEMU as the board, and compare.

  scripts/lava-qemu [--job qemu] [--job ipxe] [--out build/lava] [--device-types DIR]

Two jobs, each run by Debian's `lava-run` (lava-dispatcher) without a LAVA server:
  qemu  the `qemu` device type: LAVA starts QEMU itself with -kernel build/switchyard32.elf; the
        job's test action is deploy/lava/switchyard-ipxe.yaml's, its kernel options the same.
  ipxe  deploy/lava/switchyard-ipxe.yaml as it is, on the stock `x86` device type, whose power
        commands start QEMU (SeaBIOS, the e1000's iPXE ROM, user-net TFTP) as the board and whose
        connection command is socat on QEMU's serial socket. LAVA interrupts iPXE and types the
        template's commands.
Only the kernel URL is changed (file:// of the build). The board's raw serial bytes are kept in
OUT/JOB/serial.log (QEMU's stdio logfile; socat -R on the x86 board's connection), which
scripts/switchyard/log.py judges; LAVA's own
cases come from the job log lava-run prints (OUT/JOB/job.log, one YAML mapping a line). The run
passes when the log is verified and each of our tests is exactly one LAVA case
switchyard.SUITE/TEST with the same result (an XFAIL, a known defect, is LAVA's skip), and LAVA
has no other switchyard case. OUT/JOB/results.yaml holds LAVA's cases, OUT/JOB/compare.txt
both sides.

The device-type templates ship with lava-server, which is never installed: `apt-get download
lava-server` and `dpkg-deb -x` unpack them into OUT/lava-server once (or give --device-types).
The x86 job's tftp deploy needs /etc/default/tftpd-hpa and an in.tftpd on PATH; lava-run runs in
a private mount namespace (unshare, root) where /etc/default is a copy holding that file, and
in.tftpd is a stub: QEMU's user network serves the TFTP. No system file is changed.
Needs lava-dispatcher, lavacli and socat (Debian 12; `make deps LAVA=1`). docs/lava.md says more.
Exit 0 when every job agrees and its serial log passes; 1 when one does not agree, or agrees on
a log that is not a PASS (a test failed or XPASSed: the jobs' verdict, as `make check` gives
it); 2 when it cannot run here.
"""

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from switchyard import lava_check  # LAVA's case names and its mapping of KTAP results
from switchyard import log as ktap

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
TEMPLATE = ROOT / "deploy" / "lava" / "switchyard-ipxe.yaml"
JOBS = ("qemu", "ipxe")
SMP = 2
QEMU_BOARD = ["qemu-system-x86_64", "-M", "pc", "-m", "256", "-accel", "tcg", "-cpu", "max",
              "-smp", str(SMP), "-no-reboot", "-nographic", "-monitor", "none"]
# The `x86` type waits 500 ms after each character it types (boot_character_delay): about 40 s
# for one `kernel ...` line. QEMU's emulated UART keeps up with 5 ms.
BOOT_CHARACTER_DELAY_MS = 5
# QEMU user networking: the host is 10.0.2.2, so {SERVER_IP} is the TFTP server QEMU builds in.
DISPATCHER_IP = "10.0.2.2"
LAVA_TIMEOUT = 600  # seconds per lava-run; a job takes about 10-20 s under TCG


def unusable_reason():
    """None when lava-run can run the jobs here, else why not (a skip reason)."""
    if shutil.which("lava-run") is None:
        return "lava-dispatcher is not installed (no lava-run): make deps LAVA=1"
    for tool, package in (("lavacli", "lavacli"), ("socat", "socat"),
                          ("unshare", "util-linux")):
        if shutil.which(tool) is None:
            return f"{tool} not found ({package})"
    if os.geteuid() != 0:
        return "lava-run needs root (/var/lib/lava/dispatcher, and the mount namespace)"
    return None


def device_types(out, given):
    """The directory of lava-server's device-type templates (*.jinja2)."""
    if given:
        return given
    unpacked = out / "lava-server"
    types = unpacked / "usr" / "share" / "lava-server" / "device-types"
    if (types / "x86.jinja2").is_file():
        return types
    download = out / "download"
    shutil.rmtree(download, ignore_errors=True)
    download.mkdir(parents=True)
    proc = subprocess.run(["apt-get", "download", "lava-server"], cwd=download,
                          capture_output=True, text=True)
    debs = sorted(download.glob("lava-server_*.deb"))
    if proc.returncode != 0 or not debs:
        raise SystemExit(f"lava-qemu: apt-get download lava-server failed: {proc.stderr.strip()}"
                         " (or give --device-types DIR)")
    subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(unpacked)], check=True)
    print(f"lava-qemu: device types from {debs[0].name}")
    return types


def render_device(types, work, name, dictionary):
    """A device dictionary (jinja2 extending a type) rendered by lavacli to device.yaml."""
    source = types / f"switchyard-{name}.jinja2"  # lavacli resolves {% extends %} beside it
    source.write_text(dictionary)
    proc = subprocess.run(["lavacli", "utils", "templates", "render", "--path", str(types),
                           "--trim", str(source)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"lava-qemu: lavacli could not render {source}: {proc.stderr}")
    (work / "device.jinja2").write_text(dictionary)
    (work / "device.yaml").write_text(proc.stdout)
    return work / "device.yaml"


def template_kernel_options(template):
    """The options after {KERNEL} in the iPXE template's kernel command."""
    boot = next(a["boot"] for a in template["actions"] if "boot" in a)
    command = next(c for c in boot["commands"] if "{KERNEL}" in c)
    return command.split("{KERNEL}", 1)[1].split()


def qemu_job(template, kernel32):
    """The qemu device type's job: LAVA's QEMU boots the ELF32 copy with the template's options;
    the test action (the monitors) is the template's, unchanged."""
    options = template_kernel_options(template) + [f"smp.expect={SMP}"]
    test = next(a for a in template["actions"] if "test" in a)
    return {
        "device_type": "qemu",
        "job_name": "switchyard KTAP on the qemu device type",
        "priority": "medium",
        "visibility": "public",
        "context": {"arch": "amd64"},
        "timeouts": template["timeouts"],
        "actions": [
            {"deploy": {"to": "tmpfs", "timeout": {"minutes": 2}, "images": {"kernel": {
                "url": kernel32.as_uri(),
                "image_arg": f"-kernel {{kernel}} -append \"{' '.join(options)}\""}}}},
            {"boot": {"method": "qemu", "media": "tmpfs", "timeout": {"minutes": 2}}},
            test,
        ],
    }


def ipxe_job(template, kernel32):
    """The iPXE template itself, with the kernel URL pointing at the build."""
    for action in template["actions"]:
        if "deploy" in action:
            action["deploy"]["kernel"]["url"] = kernel32.as_uri()
    return template


def qemu_device(work):
    """The qemu type with TCG, 2 CPUs, and the serial port also written to serial.log."""
    extra = ["-accel tcg", "-cpu max", f"-smp {SMP}", "-no-reboot",
             f"-chardev stdio,id=s0,signal=off,logfile={work / 'serial.log'}",
             "-serial chardev:s0"]
    return ("{% extends 'qemu.jinja2' %}\n"
            "{% set arch = 'amd64' %}\n"
            "{% set no_kvm = True %}\n"
            "{% set memory = 256 %}\n"
            f"{{% set extra_options = {extra!r} %}}\n")


def x86_board(work, tftp):
    """Power and connection scripts that make QEMU an `x86` board, and its dictionary."""
    sock, pid = work / "serial.sock", work / "qemu.pid"
    board = QEMU_BOARD + [
        "-chardev", f"socket,id=s0,path={sock},server=on,wait=on",
        "-serial", "chardev:s0", "-netdev", f"user,id=n0,tftp={tftp}",
        "-device", "e1000,netdev=n0", "-boot", "n", "-pidfile", str(pid)]
    scripts = {
        # LAVA runs power commands on a pty that it hangs up as they return: QEMU runs in a
        # session of its own (setsid -f), and the command returns once QEMU's socket exists.
        "power-on": f"rm -f {sock} {pid}\nsetsid -f {shlex.join(board)} "
                    f"</dev/null >{work / 'qemu.out'} 2>&1\n"
                    f"for i in $(seq 100); do [ -S {sock} ] && exit 0; sleep 0.1; done\n"
                    f"echo 'power-on: QEMU did not start' >&2\nexit 1\n",
        "power-off": f"[ -f {pid} ] && kill \"$(cat {pid})\" 2>/dev/null\n"
                     f"rm -f {pid}\nexit 0\n",
        "hard-reset": f"{work / 'power-off'}\n{work / 'power-on'}\n",
        # Raw mode, or LAVA's Ctrl-B never reaches iPXE; QEMU waits (wait=on) for this client.
        # socat -R keeps the bytes the board sent, one file per connection: QEMU's own chardev
        # logfile repeats bytes when a socket write is partial.
        "connect": f"while :; do socat -R {work}/serial.$(date +%s%N).raw STDIO,raw,echo=0 "
                   f"UNIX-CONNECT:{sock} 2>/dev/null; sleep 0.1; done\n",
    }
    for name, body in scripts.items():
        path = work / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)
    return ("{% extends 'x86.jinja2' %}\n"
            f"{{% set connection_command = '{work / 'connect'}' %}}\n"
            f"{{% set power_on_command = '{work / 'power-on'}' %}}\n"
            f"{{% set power_off_command = '{work / 'power-off'}' %}}\n"
            f"{{% set hard_reset_command = '{work / 'hard-reset'}' %}}\n"
            f"{{% set boot_character_delay = {BOOT_CHARACTER_DELAY_MS} %}}\n")


def tftp_namespace(work, tftp):
    """argv prefix: lava-run in a private mount namespace where /etc/default/tftpd-hpa names
    `tftp`, and PATH finds a stub in.tftpd (LAVA only checks that one exists)."""
    etc_default, bin_dir = work / "etc-default", work / "bin"
    shutil.rmtree(etc_default, ignore_errors=True)
    shutil.copytree("/etc/default", etc_default, symlinks=True)
    (etc_default / "tftpd-hpa").write_text(f'TFTP_DIRECTORY="{tftp}"\n')
    bin_dir.mkdir(exist_ok=True)
    stub = bin_dir / "in.tftpd"
    stub.write_text("#!/bin/sh\necho 'in.tftpd: a stub; QEMU user-net serves TFTP' >&2\n"
                    "exit 1\n")
    stub.chmod(0o755)
    inner = (f"mount --bind {shlex.quote(str(etc_default))} /etc/default && "
             f"PATH={shlex.quote(str(bin_dir))}:$PATH exec \"$@\"")
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", inner, "lava-qemu"]


def lava_cases(job_log):
    """[(definition, case, result)] of LAVA's switchyard.* results, from lava-run's job log
    (one YAML flow mapping per line), and whether LAVA said the job finished correctly."""
    cases, finished = [], False
    for line in job_log.splitlines():
        if '"lvl": "results"' not in line and "Job finished correctly" not in line:
            continue
        entry = yaml.load(line, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        if entry.get("msg") == "Job finished correctly":
            finished = True
        message = entry.get("msg")
        if entry.get("lvl") == "results" and message["definition"].startswith("switchyard."):
            cases.append((message["definition"], message["case"], message["result"]))
    return cases, finished


def judge_serial(raw):
    """Our verdict on the raw serial. Firmware text may precede "KTAP version 1" on its line
    (SeaBIOS's "Booting from ROM.."); until the checker finds it there itself, the log is read
    from that string on."""
    result = ktap.check_log(raw)
    if ktap.VERSION in ktap.clean(raw).split("\n"):
        return result, ""
    at = raw.find(ktap.VERSION.encode())
    if at < 0:
        return result, ""
    return ktap.check_log(raw[at:]), f"firmware text before {ktap.VERSION!r} cut ({at} bytes)"


def compare(lava_check, cases, raw):
    """(our cases, problems): each KTAP test of the log as LAVA should have it, and how LAVA's
    cases differ from them."""
    result, note = judge_serial(raw)
    problems = [] if result.verdict in (ktap.PASS, ktap.FAIL) and not result.integrity_error \
        else [f"serial log: {result.verdict} {result.errors[:3]}"]
    ours = [(lava_check.MONITOR_PREFIX + t.suite.lower(), lava_check.lava_case(t.name),
             lava_check.KTAP_TO_LAVA[t.status]) for t in result.tests]
    seen = {}
    for definition, case, status in cases:
        if (definition, case) in seen:
            problems.append(f"LAVA has {definition}/{case} twice")
        seen[(definition, case)] = status
    wanted = {(d, c): s for d, c, s in ours}
    for (definition, case), status in wanted.items():
        got = seen.get((definition, case))
        if got is None:
            problems.append(f"no LAVA case {definition}/{case} (ours: {status})")
        elif got != status:
            problems.append(f"{definition}/{case}: LAVA {got}, ours {status}")
    for key in seen.keys() - wanted.keys():
        problems.append(f"LAVA case {'/'.join(key)} is no test of the log")
    if len(wanted) != len(ours):
        problems.append("the log names one case twice")
    return ours, problems, note, result


def run_job(name, args, types, lava_check):
    work = (args.out / name).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    template = yaml.safe_load(TEMPLATE.read_text())
    prefix, dispatcher = [], []
    if name == "qemu":
        job = qemu_job(template, args.kernel32.resolve())
        device = render_device(types, work, name, qemu_device(work))
    else:
        tftp = work / "tftp"
        tftp.mkdir()
        job = ipxe_job(template, args.kernel32.resolve())
        device = render_device(types, work, name, x86_board(work, tftp))
        (work / "dispatcher.yaml").write_text(f"dispatcher_ip: {DISPATCHER_IP}\n")
        dispatcher = ["--dispatcher", str(work / "dispatcher.yaml")]
        prefix = tftp_namespace(work, tftp)
    job_file = work / "job.yaml"
    job_file.write_text(yaml.safe_dump(job, sort_keys=False))
    # A job id of our own: lava-run keeps its files in /var/lib/lava/dispatcher/tmp/ID.
    job_id = str(os.getpid() * 10 + JOBS.index(name))
    argv = prefix + ["lava-run", "--job-id", job_id, "--output-dir", str(work / "output"),
                     "--device", str(device), *dispatcher, str(job_file)]
    started = time.monotonic()
    with open(work / "job.log", "wb") as log:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=log,
                              stderr=subprocess.STDOUT, timeout=LAVA_TIMEOUT,
                              start_new_session=True)
    seconds = time.monotonic() - started
    if name == "ipxe":
        subprocess.run([str(work / "power-off")])  # a job that failed early leaves QEMU on
        (work / "serial.log").write_bytes(b"".join(
            part.read_bytes() for part in sorted(work.glob("serial.*.raw"))))
    cases, finished = lava_cases((work / "job.log").read_text(errors="replace"))
    raw = (work / "serial.log").read_bytes() if (work / "serial.log").exists() else b""
    ours, problems, note, result = compare(lava_check, cases, raw)
    if proc.returncode != 0 or not finished:
        problems.insert(0, f"lava-run exited {proc.returncode}, "
                           f"{'' if finished else 'no '}'Job finished correctly' (see {work}/job.log)")
    (work / "results.yaml").write_text(yaml.safe_dump(
        [{"definition": d, "case": c, "result": r} for d, c, r in cases], sort_keys=False))
    (work / "compare.txt").write_text("".join(
        f"{d}/{c} ours={r} lava={dict(((x, y), z) for x, y, z in cases).get((d, c))}\n"
        for d, c, r in ours) + "".join(p + "\n" for p in problems))
    counts = {status: sum(1 for *_, r in cases if r == status) for status in ("pass", "fail",
                                                                              "skip")}
    print(f"lava-qemu: {name}: lava-run {seconds:.1f} s, {len(cases)} LAVA cases "
          f"({', '.join(f'{n} {s}' for s, n in counts.items())}), {len(ours)} tests in the "
          f"serial log ({result.verdict}){', ' + note if note else ''}: "
          f"{'agree' if not problems else 'DISAGREE'}")
    for problem in problems[:20]:
        print(f"lava-qemu: {name}: {problem}", file=sys.stderr)
    for test in result.failed:
        print(f"lava-qemu: {name}: not ok {test.id}", file=sys.stderr)
    return not problems, result.verdict


def main(argv):
    parser = argparse.ArgumentParser(prog="scripts/lava-qemu", description=__doc__.split("\n")[0])
    parser.add_argument("--job", action="append", choices=JOBS,
                        help="the jobs to run (default: both)")
    parser.add_argument("--out", type=Path, default=BUILD / "lava",
                        help="work and result directory (default: %(default)s)")
    parser.add_argument("--kernel32", type=Path, default=BUILD / "switchyard32.elf",
                        help="the ELF32 image (default: %(default)s)")
    parser.add_argument("--device-types", type=Path,
                        help="lava-server's device-type templates (default: fetched once)")
    args = parser.parse_args(argv)
    reason = unusable_reason()
    if reason:
        print(f"lava-qemu: cannot run: {reason}", file=sys.stderr)
        return 2
    if not args.kernel32.is_file():
        parser.error(f"kernel image not found: {args.kernel32} (run make)")
    args.out.mkdir(parents=True, exist_ok=True)
    types = device_types(args.out.resolve(), args.device_types)
    jobs = args.job or JOBS
    outcomes = [run_job(name, args, types, lava_check) for name in jobs]
    verdicts = ", ".join(f"{name} {verdict}{'' if agreed else ' (DISAGREE)'}"
                         for name, (agreed, verdict) in zip(jobs, outcomes))
    passed = all(agreed and verdict == ktap.PASS for agreed, verdict in outcomes)
    print(f"lava-qemu: {'PASS' if passed else 'FAIL'}: {verdicts}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

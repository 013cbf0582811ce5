"""Capture switchyard's serial log from a live line, verify it, and exit with the suite's status.

  scripts/capture --device /dev/ttyUSB0 [--baud 115200]   a serial device (pyserial)
  scripts/capture --tcp HOST:PORT                          a TCP serial server (raw bytes)
  scripts/capture --command "CMD ARGS"                     the output of a command (sh -c)
  ... [--log FILE] [--timeout 600] [--platform tcg|kvm] [--quiet]

Reads until the kernel's final line (`# switchyard-end crc32=... lines=N`), the end of the
stream, or the time limit; writes the raw bytes up to the final line to --log; judges them as
scripts/run --check-log does. Once the source is open it says "capture: reading ..." on stderr,
so a caller knows when the target may start. A --command is killed (its process group) at the end.

Exit status, as scripts/run: 0 pass, 1 a test failed, 2 bad arguments or a source that cannot
be opened, 3 the kernel rejected its command line, 4 crash (bail out, truncated or corrupted log,
stream ended early), 124 time limit (the partial log is written and printed).
"""

import argparse
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from switchyard import defects
from switchyard import log as ktap
from switchyard import run  # report(): the same summary, known defects and status as a run

BAD_ARGUMENTS, TIMED_OUT = 2, 124
POLL = 0.2  # seconds between deadline checks while the line is silent
FINAL_LINE = re.compile(rb"# switchyard-end crc32=0x[0-9a-f]{8} lines=\d+\r*\n")


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="scripts/capture", description=__doc__.split("\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--device", help="serial device, e.g. /dev/ttyUSB0 (pyserial)")
    source.add_argument("--tcp", metavar="HOST:PORT", help="TCP serial server (raw bytes)")
    source.add_argument("--command", help="shell command whose stdout is the serial line")
    parser.add_argument("--baud", type=int, default=115200, help="--device baud rate")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds before giving up with status 124 (default: %(default)s)")
    parser.add_argument("--log", type=Path, help="write the raw serial bytes to this file")
    parser.add_argument("--platform", default="",
                        help="apply this table of tests/known-defects.toml (tcg, kvm)")
    parser.add_argument("--quiet", action="store_true", help="do not stream the log")
    args = parser.parse_args(argv)
    if not args.timeout > 0:
        parser.error(f"--timeout must be a positive number of seconds, not {args.timeout:g}")
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not host or not port.isdigit():
            parser.error(f"--tcp {args.tcp!r}: expected HOST:PORT")
        args.tcp = (host.strip("[]"), int(port))
    return args


class DeviceSource:
    """A serial device through pyserial, in raw mode (no CR/LF translation)."""

    def __init__(self, path, baud):
        import serial  # python3-serial; only this source needs it

        self.error = serial.SerialException
        self.port = serial.Serial(path, baud, timeout=POLL)
        self.name = f"{path} at {baud} baud"

    def read(self):
        """Some bytes; b"" when nothing arrived within POLL; None at the end of the stream."""
        try:
            return self.port.read(max(1, self.port.in_waiting))
        except (self.error, OSError):
            return None  # a pty whose other end closed reads EIO

    def close(self):
        self.port.close()


class TcpSource:
    """A TCP serial server; connecting is retried until the deadline while it is refused."""

    def __init__(self, address, deadline):
        while True:
            try:
                self.sock = socket.create_connection(address, timeout=10)
                break
            except ConnectionRefusedError:
                if time.monotonic() + POLL >= deadline:
                    raise
                time.sleep(POLL)
        self.sock.settimeout(POLL)
        self.name = f"tcp {address[0]}:{address[1]}"

    def read(self):
        try:
            return self.sock.recv(65536) or None
        except socket.timeout:
            return b""
        except OSError:
            return None

    def close(self):
        self.sock.close()


class CommandSource:
    def __init__(self, command):
        self.proc = subprocess.Popen(["sh", "-c", command], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, start_new_session=True)
        os.set_blocking(self.proc.stdout.fileno(), False)
        self.name = f"command {command!r}"

    def read(self):
        if not select.select([self.proc.stdout], [], [], POLL)[0]:
            return b""
        return os.read(self.proc.stdout.fileno(), 65536) or None

    def close(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.proc.stdout.close()


def open_source(args, deadline):
    if args.device:
        return DeviceSource(args.device, args.baud)
    if args.tcp:
        return TcpSource(args.tcp, deadline)
    return CommandSource(args.command)


def capture(source, deadline, on_text):
    """(raw bytes up to and including the final line, whether the final line came). Streams
    each complete line, cleaned, to on_text."""
    raw = bytearray()
    shown = 0
    while time.monotonic() < deadline:
        chunk = source.read()
        if chunk is None:
            break
        raw += chunk
        final = FINAL_LINE.search(raw, max(0, shown - 64))
        if final:
            del raw[final.end():]  # anything after the final line is not the kernel's
        end = raw.rfind(b"\n") + 1
        if end > shown:
            on_text(ktap.clean(bytes(raw[shown:end])))
            shown = end
        if final:
            return bytes(raw), True
    if len(raw) > shown:
        on_text(ktap.clean(bytes(raw[shown:])) + "\n")
    return bytes(raw), False


def write(text):
    sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))
    sys.stdout.buffer.flush()


def main(argv):
    args = parse_args(argv)
    start = time.monotonic()
    try:
        source = open_source(args, start + args.timeout)
    except (OSError, ImportError, ValueError) as error:  # SerialException is an OSError
        print(f"capture: cannot open the source: {error}", file=sys.stderr)
        return BAD_ARGUMENTS
    print(f"capture: reading {source.name}", file=sys.stderr, flush=True)
    try:
        raw, complete = capture(source, start + args.timeout,
                                (lambda text: None) if args.quiet else write)
    finally:
        source.close()
    if args.log is not None:
        args.log.write_bytes(raw)
    seconds = time.monotonic() - start
    if not complete and seconds >= args.timeout:
        if args.quiet:
            write(ktap.clean(raw))
        print(f"capture: TIMEOUT after {args.timeout:g} s without the final line; "
              f"{len(ktap.clean(raw).splitlines())} lines captured", file=sys.stderr)
        return TIMED_OUT
    known = defects.load().get(args.platform, {})
    return run.report(ktap.check_log(raw), f"{source.name}, {seconds:.2f} s",
                      show_diagnostics=args.quiet, known=known)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

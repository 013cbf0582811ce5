"""The host's KVM counters of a running QEMU, through QMP query-stats (QEMU 7.1 and later).

QEMU is started with `-qmp unix:PATH,server=on,wait=off`; vcpu_stats() returns, per vCPU in
the order QEMU created them, the cumulative counters of KVM's binary stats (Linux
Documentation/virt/kvm/api.rst, KVM_GET_STATS_FD; arch/x86/kvm/x86.c kvm_vcpu_stats_desc):
exits, insn_emulation, io_exits, halt_exits, ... Under TCG there is no KVM provider: {}.
"""

import json
import re
import socket
import time

CONNECT_SECONDS = 10.0
# The counters a benchmark window reports, per switch.
WINDOW_STATS = ("exits", "insn_emulation", "io_exits", "mmio_exits", "irq_window_exits",
                "halt_exits", "irq_injections")


class QmpError(Exception):
    pass


class Qmp:
    """One QMP session on a unix socket; commands are answered in order."""

    def __init__(self, path, timeout=CONNECT_SECONDS):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX)
                self.sock.settimeout(timeout)
                self.sock.connect(str(path))
                break
            except (FileNotFoundError, ConnectionRefusedError):
                self.sock.close()
                if time.monotonic() > deadline:
                    raise QmpError(f"QMP socket {path} did not open in {timeout:g} s") from None
                time.sleep(0.05)
        self.file = self.sock.makefile("rw")
        greeting = self._read()
        if "QMP" not in greeting:
            raise QmpError(f"not a QMP greeting: {greeting}")
        self.execute("qmp_capabilities")

    def _read(self):
        while True:
            line = self.file.readline()
            if not line:
                raise QmpError("QMP socket closed")
            message = json.loads(line)
            if "event" not in message:
                return message

    def execute(self, command, **arguments):
        request = {"execute": command}
        if arguments:
            request["arguments"] = arguments
        self.file.write(json.dumps(request) + "\n")
        self.file.flush()
        reply = self._read()
        if "error" in reply:
            raise QmpError(f"{command}: {reply['error'].get('desc', reply['error'])}")
        return reply["return"]

    def vcpu_stats(self):
        """[{name: value}] per vCPU, ordered by QOM path index; KVM counters only."""
        found = []
        for entry in self.execute("query-stats", target="vcpu"):
            if entry.get("provider") != "kvm":
                continue
            index = re.search(r"\[(\d+)\]$", entry.get("qom-path", ""))
            values = {stat["name"]: stat["value"] for stat in entry["stats"]
                      if isinstance(stat.get("value"), int)}
            found.append((int(index.group(1)) if index else 0, values))
        return [values for _, values in sorted(found, key=lambda pair: pair[0])]

    def close(self):
        self.file.close()
        self.sock.close()


def window_deltas(begin, end, switches, empty=None):
    """Per counter of WINDOW_STATS: end - begin, less empty[name] (what the two waits of an
    empty window cost, when given), and that per switch. begin, end: {name: value} of one
    vCPU; empty: {name: delta}."""
    deltas = {}
    for name in WINDOW_STATS:
        if name not in begin or name not in end:
            continue
        delta = end[name] - begin[name]
        if empty is not None and name in empty:
            delta -= empty[name]
        deltas[name] = delta
        deltas[f"{name}_per_switch"] = round(delta / switches, 4) if switches else None
    return deltas

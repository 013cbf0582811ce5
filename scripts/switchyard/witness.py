"""Read the TCG witness's file (witness/witness.c) and derive what silicon would have executed.

`read(path)` parses one boot's file: the distinct instructions QEMU executed (address, bytes,
QEMU's disassembly, how many times), and each window the kernel's markers opened
(arch/x86/witness_marker.h) with its instruction stream in order. `Image(elf)` reads from the
kernel's ELF what the transform needs: the exception entry stubs, the diverted sites
(section .divert) and their real instruction. `silicon(window, image)` removes what switchyard
adds that silicon would not execute (docs/witness.md):
  - the emulated CPU's single-step service: a #DB entry through the IRETQ that resumes, when the
    service passed the marker WITNESS_STEP_CONSUMED (the model took the whole #DB);
  - the #UD service of each diverted RDMSR/WRMSR/CPUID: the UD2, its #UD entry and the IRETQ
    that resumes after the site, replaced by the one real instruction the site stands for;
and collapses the executions of one REP string instruction into one (QEMU restarts it at each
iteration; it retires once). The result is a list of `Step`s: retired instructions, and the
control transfers between them.
"""

import re
import struct
import subprocess
from array import array
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

MAGIC = b"SYWITN01"
# arch/x86/witness_marker.h
MARKER_MAGIC = 0x5A
OP_BEGIN, OP_END, OP_POINT = 1, 2, 3
STEP_CONSUMED = 1
HANDLER_STEPPED = 2  # the model steps the handler from the next instruction (divert.c)
WINDOW_IDS = {"dr_writes": 10, "dr_benchmark": 11, "ds_switch_writes": 12,
              "pmu_switch_writes": 13, "sched_switch_writes": 14, "pmu_counted": 20,
              "bts_traced": 21, "pmu_branches": 22, "pmu_user_counted": 23,
              "pebs_eventing": 24, "bts_user": 25, "bts_nmi": 26,
              "ticks": 27, "bts_handler": 28}
HOW = {0: "closed", 1: "superseded", 2: "truncated", 3: "open at exit"}

KERNEL_HALF = 0xFFFF800000000000
STUB_SIZE = 16  # arch/x86/entry.asm
VECTOR_DB, VECTOR_NMI, VECTOR_UD, VECTOR_GP = 1, 2, 6, 13
# Exceptions delivered before the instruction completes (SDM Vol. 3A Table 6-1, "Fault"): the
# instruction seen before their entry did not retire.
FAULT_VECTORS = {0, 5, 6, 7, 10, 11, 12, 13, 14, 16, 17, 19, 20, 21}
IRETQ = bytes([0x48, 0xCF])
UD2 = bytes([0x0F, 0x0B])
WRMSR, RDMSR, CPUID = bytes([0x0F, 0x30]), bytes([0x0F, 0x32]), bytes([0x0F, 0xA2])
MOV_TO_DR = bytes([0x0F, 0x23])
LEGACY_PREFIXES = {0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x66, 0x67, 0xF0, 0xF2, 0xF3}
STRING_OPCODES = {0x6C, 0x6D, 0x6E, 0x6F, 0xA4, 0xA5, 0xA6, 0xA7, 0xAA, 0xAB, 0xAC, 0xAD, 0xAE,
                  0xAF}


@dataclass(frozen=True)
class Insn:
    id: int
    vaddr: int
    data: bytes
    disas: str
    # A diverted site as silicon runs it: the one RDMSR/WRMSR/CPUID that its UD2 and the
    # real instruction's bytes (4 bytes from the site) stand for.
    diverted: bool = False

    @property
    def length(self):
        return 4 if self.diverted else len(self.data)

    @property
    def user(self):
        return self.vaddr < KERNEL_HALF

    def opcode(self):
        """The bytes after legacy and REX prefixes."""
        i = 0
        while i < len(self.data) and self.data[i] in LEGACY_PREFIXES:
            i += 1
        if i < len(self.data) and 0x40 <= self.data[i] <= 0x4F:
            i += 1
        return self.data[i:]

    @property
    def rep_string(self):
        prefixes = self.data[:len(self.data) - len(self.opcode())]
        return bool({0xF2, 0xF3} & set(prefixes)) and self.opcode()[:1] != b"" \
            and self.opcode()[0] in STRING_OPCODES

    @property
    def marker(self):
        """(op, id) of a witness marker, else None."""
        d = self.data
        if len(d) == 7 and d[:3] == b"\x0f\x1f\x80" and d[6] == MARKER_MAGIC:
            return d[5], d[3] | d[4] << 8
        return None


@dataclass
class Window:
    vcpu: int
    id: int
    how: str = "open at exit"
    stream: array = field(default_factory=lambda: array("I"))


@dataclass
class Witness:
    insns: dict  # id -> Insn
    windows: list
    executions: dict  # id -> count
    complete: bool

    def windows_of(self, name):
        return [w for w in self.windows if w.id == WINDOW_IDS[name]]


def read(path):
    data = Path(path).read_bytes()
    if data[:8] != MAGIC:
        raise ValueError(f"{path}: not a witness file")
    insns, windows, executions, open_windows = {}, [], {}, {}
    complete = False
    at = 8
    while at < len(data):
        tag = data[at:at + 1]
        at += 1
        if tag == b"I":
            ident, vaddr, length = struct.unpack_from("<IQB", data, at)
            at += 13
            code = data[at:at + length]
            at += length
            (disas_length,) = struct.unpack_from("<H", data, at)
            at += 2
            disas = data[at:at + disas_length].decode("ascii", "replace")
            at += disas_length
            insns[ident] = Insn(ident, vaddr, code, disas)
        elif tag == b"B":
            vcpu, window = struct.unpack_from("<IH", data, at)
            at += 6
            open_windows[vcpu] = Window(vcpu, window)
            windows.append(open_windows[vcpu])
        elif tag == b"S":
            vcpu, count = struct.unpack_from("<II", data, at)
            at += 8
            chunk = array("I")
            chunk.frombytes(data[at:at + 4 * count])
            at += 4 * count
            open_windows[vcpu].stream.extend(chunk)
        elif tag == b"E":
            vcpu, window, how = struct.unpack_from("<IHB", data, at)
            at += 7
            open_windows.pop(vcpu).how = HOW[how]
        elif tag == b"C":
            (count,) = struct.unpack_from("<I", data, at)
            at += 4
            for _ in range(count):
                ident, times = struct.unpack_from("<IQ", data, at)
                at += 12
                executions[ident] = times
        elif tag == b"Z":
            complete = True
        else:
            raise ValueError(f"{path}: bad record {tag!r} at offset {at - 1}")
    return Witness(insns, windows, executions, complete)


def _symbols(elf):
    out = subprocess.run(["nm", str(elf)], capture_output=True, text=True, check=True).stdout
    symbols = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3:
            symbols.setdefault(fields[2], int(fields[0], 16))
    return symbols


def _sections(elf):
    """[(address, bytes)] of the ELF64's allocated sections."""
    data = Path(elf).read_bytes()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = []
    for i in range(shnum):
        _, kind, flags, address, offset, size = struct.unpack_from("<IIQQQQ", data,
                                                                   shoff + i * shentsize)
        if flags & 2 and kind == 1:  # SHF_ALLOC, SHT_PROGBITS
            sections.append((address, data[offset:offset + size]))
    return sections


def _read(sections, address, size):
    for start, content in sections:
        if start <= address and address + size <= start + len(content):
            return content[address - start:address - start + size]
    raise KeyError(f"{address:#x}: in no section of the ELF")


class Image:
    """What the transform needs from build/switchyard.elf."""

    def __init__(self, elf):
        self.elf = Path(elf)
        self.symbols = _symbols(elf)
        self.stubs = self.symbols["interrupt_stubs"]
        self.entry_end = self.symbols["interrupt_entry_end"]
        sections = _sections(elf)
        start, end = self.symbols["__divert_start"], self.symbols["__divert_end"]
        sites = struct.unpack(f"<{(end - start) // 8}Q", _read(sections, start, end - start))
        # Each site: UD2 then the real instruction's two bytes.
        self.diverted = {site: _read(sections, site + 2, 2) for site in sites}

    def vector(self, insn):
        """The vector whose entry stub starts at insn, else None."""
        offset = insn.vaddr - self.stubs
        if 0 <= offset < 256 * STUB_SIZE and offset % STUB_SIZE == 0:
            return offset // STUB_SIZE
        return None

    def in_entry(self, insn):
        return self.stubs <= insn.vaddr < self.entry_end


@dataclass(slots=True)
class Step:
    """A retired instruction (insn) or a control transfer (kind, source, target)."""
    insn: Insn = None
    kind: str = None  # "branch", "interrupt" (vector >= 32 or NMI), "exception"
    source: int = 0  # the address of the instruction transferred from
    target: int = 0
    vector: int = None
    depth: int = 0  # inside how many interrupt or exception handlers
    source_insn: Insn = None
    returns_from: int = None  # an entry's IRETQ (or its transfer): the vector it returns from


@dataclass
class Silicon:
    """A window as silicon would have run it, and what was removed to get there."""
    steps: list
    step_services: int = 0  # single-step services removed
    step_service_insns: int = 0
    diverted: dict = field(default_factory=lambda: {"rdmsr": 0, "wrmsr": 0, "cpuid": 0})
    divert_service_insns: int = 0
    rep_iterations: int = 0  # extra executions of REP string instructions collapsed
    # Diverted sites whose #UD service was not taken for one: (stream index, site, the
    # service's end index or None, the address it resumed at or None), to say why in a failure.
    unmatched_diverts: list = field(default_factory=list)

    def retired(self):
        return [s.insn for s in self.steps if s.insn is not None]

    def transfers(self):
        return [s for s in self.steps if s.insn is None]


@dataclass
class _Facts:
    """Per distinct instruction (by id), what the transform asks of each executed one."""
    vector: dict  # id -> the vector whose entry stub it starts
    iretq: set  # ids of the entry code's IRETQs
    consumed: set  # ids of the WITNESS_STEP_CONSUMED marker
    rep_string: set
    diverted: dict  # id of a UD2 at a diverted site -> the real instruction's bytes
    always_taken: set  # ids of unconditional branches (QEMU's disassembly): JMP, CALL, RET, far


def _facts(witness, image):
    cached = getattr(witness, "_facts", None)
    if cached is not None and cached[0] is image:
        return cached[1]
    facts = _Facts({}, set(), set(), set(), {}, set())
    for ident, insn in witness.insns.items():
        vector = image.vector(insn)
        if vector is not None:
            facts.vector[ident] = vector
        if insn.data == IRETQ and image.in_entry(insn):
            facts.iretq.add(ident)
        if insn.marker == (OP_POINT, STEP_CONSUMED):
            facts.consumed.add(ident)
        if insn.rep_string:
            facts.rep_string.add(ident)
        if insn.data == UD2 and insn.vaddr in image.diverted:
            facts.diverted[ident] = image.diverted[insn.vaddr]
        if qemu_class(insn.disas) in ("jmp", "call", "ret", "far"):
            facts.always_taken.add(ident)
    witness._facts = (image, facts)
    return facts


def _service_end(stream, start, facts):
    """Index of the IRETQ that ends the entry at stream[start], entries nested in it (an NMI)
    matched on the way; None when the window ends first. Also whether the service passed
    WITNESS_STEP_CONSUMED at its own depth."""
    depth, consumed = 0, False
    for i in range(start, len(stream)):
        ident = stream[i]
        if ident in facts.vector:
            depth += 1
        elif ident in facts.iretq:
            depth -= 1
            if depth == 0:
                return i, consumed
        elif depth == 1 and ident in facts.consumed:
            consumed = True
    return None, consumed


def _nested_nmis(stream, start, end, facts):
    """(first, last) index of each NMI entered directly inside the entry at stream[start],
    which its IRETQ at stream[end] ends."""
    nmis, depth, first = [], 0, None
    for i in range(start, end + 1):
        ident = stream[i]
        if ident in facts.vector:
            depth += 1
            if depth == 2 and facts.vector[ident] == VECTOR_NMI:
                first = i
        elif ident in facts.iretq:
            if depth == 2 and first is not None:
                nmis.append((first, i))
                first = None
            depth -= 1
    return nmis


def _strip(stream, lo, hi, facts, insns, result, kept):
    """Append stream[lo:hi] to kept without switchyard's services. An NMI that came inside a
    removed service stays, where the service was: silicon would have taken it between the two
    instructions the service came between (rule 21 records it there)."""
    i = lo
    while i < hi:
        ident = stream[i]
        vector = facts.vector.get(ident)
        if vector == VECTOR_DB:
            end, consumed = _service_end(stream, i, facts)
            if end is not None and end < hi and consumed:
                result.step_services += 1
                result.step_service_insns += end - i + 1
                for first, last in _nested_nmis(stream, i, end, facts):
                    result.step_service_insns -= last - first + 1
                    _strip(stream, first, last + 1, facts, insns, result, kept)
                i = end + 1
                continue
        real = facts.diverted.get(ident)
        if real is not None and i + 1 < hi and facts.vector.get(stream[i + 1]) == VECTOR_UD:
            end, _ = _service_end(stream, i + 1, facts)
            site = insns[ident].vaddr
            # Resumed after the site, or at an interrupt that was pending when the IRETQ set IF.
            after = stream[end + 1] if end is not None and end + 1 < len(stream) else None
            if end is not None and end < hi and (
                    after is None or insns[after].vaddr == site + 4
                    or facts.vector.get(after, 0) >= 32
                    or facts.vector.get(after) == VECTOR_NMI):
                name = {RDMSR: "rdmsr", WRMSR: "wrmsr", CPUID: "cpuid"}[real]
                result.diverted[name] += 1
                result.divert_service_insns += end - i
                kept.append(Insn(-1, site, real, name, diverted=True))
                for first, last in _nested_nmis(stream, i + 1, end, facts):
                    result.divert_service_insns -= last - first + 1
                    _strip(stream, first, last + 1, facts, insns, result, kept)
                i = end + 1
                continue
            result.unmatched_diverts.append(
                (i, site, end, insns[after].vaddr if after is not None else None))
        insn = insns[ident]
        # QEMU restarts a REP string instruction at each iteration; it retires once.
        if kept and kept[-1] is insn and ident in facts.rep_string:
            result.rep_iterations += 1
        else:
            kept.append(insn)
        i += 1


def silicon(window, witness, image, with_retired=True):
    """The window's stream with switchyard's services removed (see the module's comment).
    with_retired=False leaves the retired instructions' steps out, for a caller that wants
    only the transfers (they are most of the steps)."""
    facts = _facts(witness, image)
    insns = witness.insns
    stream = window.stream
    result = Silicon([])
    kept = []
    _strip(stream, 0, len(stream), facts, insns, result, kept)
    depth = 0  # interrupt and exception entries not yet returned from by IRETQ
    entered = []  # their vectors, innermost last (those entered inside the window)
    steps, vectors, iretqs, always_taken = result.steps, facts.vector, facts.iretq, facts.always_taken
    last = len(kept) - 1
    for i, insn in enumerate(kept):
        nxt = kept[i + 1] if i < last else None
        vector = vectors.get(nxt.id) if nxt is not None and not nxt.diverted else None
        # Ring 3 runs in no handler: an entry whose handler switched to a task that began or
        # left without an IRETQ of its own is never matched by one, and would leave the rest
        # of the window one handler deep.
        if depth and insn.user:
            depth = 0
            entered.clear()
        if vector is None and insn.id not in iretqs:
            # The common case, as the general one below takes it: no entry follows and no
            # IRETQ returns, so the instruction retired at this depth, and a branch is taken
            # unless the next one follows it.
            if with_retired:
                steps.append(Step(insn=insn, depth=depth))
            if nxt is not None and (nxt.vaddr != insn.vaddr + insn.length
                                    or insn.id in always_taken):
                steps.append(Step(kind="branch", source=insn.vaddr, target=nxt.vaddr,
                                  depth=depth, source_insn=insn))
            continue
        # Where the interrupted flow resumed: a trap or an interrupt comes after insn ran.
        resume = None
        if vector is not None and vector not in FAULT_VECTORS:
            resume = _resume_address(kept, i + 1, facts)
        # Not retired: a fault, or a REP string instruction interrupted between iterations.
        # An interrupt or NMI is taken between instructions (QEMU checks for one only between
        # translation blocks), so any other instruction before one retired, whatever resume
        # says: a handler that switched tasks returns through another entry's IRETQ, and the
        # resume found can be the task's own instruction again (a make check saw 1,258 ring-3
        # instructions retire where 1,260 had).
        asynchronous = vector is not None and (vector >= 32 or vector == VECTOR_NMI)
        retired = vector not in FAULT_VECTORS and (
            resume != insn.vaddr or (asynchronous and insn.id not in facts.rep_string))
        # An entry's IRETQ: it returns from the innermost entry, whatever follows it.
        returns_from = None
        if insn.id in facts.iretq and depth:
            returns_from = entered[-1] if entered else -1
        if retired and with_retired:
            result.steps.append(Step(insn=insn, depth=depth, returns_from=returns_from))
        # An unconditional branch to the next instruction (a RET into a new task's first
        # code, which follows switch_context) is taken all the same.
        sequential = nxt is not None and nxt.vaddr == insn.vaddr + insn.length
        after = depth - 1 if returns_from is not None else depth  # the depth it returns to
        if nxt is not None and (not sequential or insn.id in facts.always_taken):
            if vector is None:
                result.steps.append(Step(kind="branch", source=insn.vaddr, target=nxt.vaddr,
                                         depth=depth, source_insn=insn,
                                         returns_from=returns_from))
            else:
                # A branch taken just before the interrupt: its target is where it resumes.
                # Only a branch: a handler that switched tasks resumes another flow.
                if retired and resume is not None and resume != insn.vaddr + insn.length \
                        and not insn.diverted and qemu_class(insn.disas) != "none":
                    result.steps.append(Step(kind="branch", source=insn.vaddr, target=resume,
                                             depth=depth, source_insn=insn,
                                             returns_from=returns_from))
                kind = "interrupt" if vector >= 32 or vector == 2 else "exception"
                # From the instruction that raised it (a fault, INT n), else from the one it
                # came before, where its IRETQ returns (an interrupt, a debug trap; also one
                # that came right after an IRETQ, before the first instruction it returned to).
                source = insn.vaddr
                if retired and resume is not None and not _MNEMONIC_INT.match(insn.disas):
                    source = resume
                result.steps.append(Step(kind=kind, source=source, target=nxt.vaddr,
                                         vector=vector, depth=after, source_insn=insn))
        if returns_from is not None:
            depth -= 1
            if entered:
                entered.pop()
        if vector is not None:
            depth += 1
            entered.append(vector)
    return result


# A software interrupt (INT n, INT3, INTO, INT1): it raises its vector itself.
_MNEMONIC_INT = re.compile(r"^\s*(int[0-9a-z]*|icebp)\b")

RESUME_SCAN_LIMIT = 200_000  # instructions: a handler that switched tasks may never return


def _resume_address(kept, entry, facts):
    """The address the IRETQ matching the entry at kept[entry] returned to, or None."""
    depth = 0
    for i in range(entry, min(len(kept), entry + RESUME_SCAN_LIMIT)):
        insn = kept[i]
        if insn.diverted:
            continue
        if insn.id in facts.vector:
            depth += 1
        elif insn.id in facts.iretq:
            depth -= 1
            if depth == 0:
                if i + 1 >= len(kept):
                    return None
                # Interrupted again before the first instruction it returned to: that
                # entry's IRETQ says where.
                if facts.vector.get(kept[i + 1].id, 0) >= 32 and not kept[i + 1].diverted:
                    return _resume_address(kept, i + 1, facts)
                return kept[i + 1].vaddr
    return None


def writes(window, witness, image):
    """WRMSR and MOV-to-DR instructions the window executed, as {kind: count}: real ones by
    their opcode, diverted ones by their site (each UD2 at a site whose instruction is
    WRMSR)."""
    facts = _facts(witness, image)
    counts = {"wrmsr": 0, "diverted_wrmsr": 0, "mov_dr": 0}
    for ident, times in Counter(window.stream).items():
        op = witness.insns[ident].opcode()
        if op[:2] == WRMSR:
            counts["wrmsr"] += times
        elif op[:2] == MOV_TO_DR:
            counts["mov_dr"] += times
        elif facts.diverted.get(ident) == WRMSR:
            counts["diverted_wrmsr"] += times
    return counts


_MNEMONIC = re.compile(r"^\s*(?:(?:rep[a-z]*|lock|data16|addr32|notrack|bnd|cs|ds|es|ss|fs|gs)"
                       r"\s+)*([a-z0-9]+)")


def qemu_class(disas):
    """The branch class QEMU's own disassembly calls for (decode_branch_name()'s names)."""
    match = _MNEMONIC.match(disas)
    mnemonic = match.group(1) if match else ""
    if mnemonic in ("jmp", "jmpq", "ljmp", "ljmpq", "jmpl"):
        return "jmp"
    if mnemonic.startswith(("j", "loop")):
        return "jcc"
    if mnemonic in ("call", "callq", "lcall", "lcallq", "calll"):
        return "call"
    if re.fullmatch(r"l?ret[fwlq]{0,2}", mnemonic):
        return "ret"
    if mnemonic in ("syscall", "sysenter", "int", "int3", "int1", "icebp") \
            or mnemonic.startswith(("iret", "sysret", "sysexit")):
        return "far"
    return "none"

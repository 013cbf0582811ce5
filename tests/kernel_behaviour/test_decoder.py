"""emulator/decode.c against objdump: every instruction of the kernel image, length and class.

The 64-bit code of build/switchyard.elf (or SWITCHYARD_ELF=PATH) is disassembled with GNU
objdump; each instruction's bytes go through build/host/decode-check (tests/decode_check/), and
its decoded length must equal objdump's byte count and its branch class agree with objdump's
mnemonic. objdump runs with -M intel64, the Intel semantics the decoder follows (a 66 prefix
does not shorten a near branch's rel32). The 16- and 32-bit code (boot_entry before
long_mode_entry, trampoline_start before long_entry) is left out: the decoder is 64-bit only.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ELF = Path(os.environ.get("SWITCHYARD_ELF", ROOT / "build" / "switchyard.elf"))
CHECKER = ROOT / "build" / "host" / "decode-check"
MINIMUM_CHECKED = 10_000

# (section, first symbol, symbol past the end): None means the whole section.
CODE_RANGES = (
    (".text", None, None),
    (".user_text", None, None),  # the user-mode probes
    (".boot", "long_mode_entry", "boot_gdt"),  # the 64-bit tail of the 32-bit entry
    (".rodata", "long_entry", "trampoline_gdt"),  # the AP trampoline's 64-bit part
)

# "ffffffff80101000:\t48 89 e5             \tmov    rbp,rsp"; a continuation line of a long
# instruction has only the address and more bytes.
INSTRUCTION_LINE = re.compile(r"^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*(?:\t(.*))?$")

# Words objdump prints before the mnemonic for prefixes.
PREFIX_WORDS = {"rep", "repz", "repe", "repnz", "repne", "lock", "data16", "data32", "addr32",
                "addr16", "cs", "ds", "es", "ss", "fs", "gs", "notrack", "bnd", "xacquire",
                "xrelease", "{vex}", "{vex3}", "{evex}"}
FAR_MNEMONICS = {"syscall", "sysenter", "int", "int3", "int1", "icebp"}


def expected_class(text):
    """The decode_branch_name() that objdump's mnemonic calls for."""
    words = [w for w in text.split() if w not in PREFIX_WORDS and not w.startswith("rex")]
    mnemonic = words[0] if words else ""
    if mnemonic in ("jmp", "jmpq", "ljmp", "ljmpq"):
        return "jmp"
    if mnemonic.startswith(("j", "loop")):
        return "jcc"
    if mnemonic in ("call", "callq", "lcall", "lcallq"):
        return "call"
    if re.fullmatch(r"l?ret[fwlq]{0,2}", mnemonic):
        return "ret"
    if mnemonic in FAR_MNEMONICS or mnemonic.startswith(("iret", "sysret", "sysexit")):
        return "far"
    return "none"


def symbol_addresses(elf):
    output = subprocess.run(["nm", str(elf)], capture_output=True, text=True, check=True).stdout
    addresses = {}
    for line in output.splitlines():
        fields = line.split()
        if len(fields) == 3:
            addresses.setdefault(fields[2], int(fields[0], 16))
    return addresses


def disassemble(elf, section, start, stop):
    """[(address, bytes as hex, objdump's text)] with continuation lines joined."""
    argv = ["objdump", "-D", "-M", "intel,intel64", "-j", section, str(elf)]
    if start is not None:
        argv += [f"--start-address={start:#x}", f"--stop-address={stop:#x}"]
    output = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    instructions = []
    for line in output.splitlines():
        match = INSTRUCTION_LINE.match(line)
        if not match:
            continue
        address, hex_bytes, text = match.groups()
        if text is None:
            assert instructions, f"continuation line without an instruction: {line!r}"
            previous = instructions[-1]
            instructions[-1] = (previous[0], previous[1] + hex_bytes.split(), previous[2])
        else:
            instructions.append((address, hex_bytes.split(), text.strip()))
    return instructions


@pytest.fixture(scope="module")
def checker():
    build = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT),
                            "build/host/decode-check"], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    return CHECKER


def run_checker(checker, instructions):
    lines = "".join(f"{address} {''.join(hex_bytes)}\n" for address, hex_bytes, _ in instructions)
    result = subprocess.run([str(checker)], input=lines, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_decoder_agrees_with_objdump_on_every_instruction_of_the_image(checker):
    if not ELF.is_file():
        pytest.skip(f"kernel image {ELF} not found: run `make all` or set SWITCHYARD_ELF")
    addresses = symbol_addresses(ELF)
    checked, bad, mismatches = 0, 0, []
    for section, first, past_end in CODE_RANGES:
        start = stop = None
        if first is not None:
            if first not in addresses or past_end not in addresses:
                print(f"{section}: no symbols {first}, {past_end}: range not checked")
                continue
            start, stop = addresses[first], addresses[past_end]
        instructions = disassemble(ELF, section, start, stop)
        bad += sum("(bad)" in text for _, _, text in instructions)
        instructions = [i for i in instructions if "(bad)" not in i[2]]
        for (address, hex_bytes, text), output in zip(instructions,
                                                      run_checker(checker, instructions)):
            expected = f"{address} {len(hex_bytes)} {expected_class(text)}"
            if output != expected:
                mismatches.append(f"{output!r} != {expected!r}: {' '.join(hex_bytes)}  {text}")
        print(f"{section}{'' if first is None else f' {first}..{past_end}'}: "
              f"{len(instructions)} instructions")
        checked += len(instructions)
    print(f"decoder checked {checked} instructions of {ELF}; objdump (bad): {bad}")
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches[:40])
    assert checked >= MINIMUM_CHECKED, f"only {checked} instructions checked"


@pytest.mark.parametrize("text, expected", [
    ("jne    ffffffff80101234 <x+0x4>", "jcc"),
    ("jrcxz  ffffffff80101234 <x+0x4>", "jcc"),
    ("loopne ffffffff80101234 <x+0x4>", "jcc"),
    ("jmp    rax", "jmp"),
    ("notrack jmp rax", "jmp"),
    ("jmp    FWORD PTR [rax]", "jmp"),
    ("call   QWORD PTR [rip+0x10]", "call"),
    ("repz ret", "ret"),
    ("retfq", "ret"),
    ("ret    0x8", "ret"),
    ("sysretq", "far"),
    ("iretq", "far"),
    ("int3", "far"),
    ("int    0x80", "far"),
    ("ud2", "none"),
    ("rep stos QWORD PTR es:[rdi],rax", "none"),
    ("data16 cs nop WORD PTR [rax+rax*1+0x0]", "none"),
])
def test_mnemonic_classes(text, expected):
    assert expected_class(text) == expected

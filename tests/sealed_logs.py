"""Building test logs: the kernel's final line, computed independently of scripts/, and damage."""

import zlib


def seal(body):
    """body plus the final line the kernel would print, computed independently of ktap."""
    crc = zlib.crc32(body.encode())
    return body + f"# switchyard-end crc32=0x{crc:08x} lines={body.count(chr(10))}\n"


def flip_byte(log, text):
    """log with the lowest bit of the first byte of `text` flipped."""
    at = log.index(text)
    return log[:at] + chr(ord(log[at]) ^ 1) + log[at + 1:]



def with_running(body):
    """body with the runner's "# running SUITE.TEST" line where the kernel prints it: after
    the previous result (or the suite's plan), before the test's diagnostics; with the
    registered name (no "__emulated")."""
    lines, suite, start = [], None, 0
    for line in body.splitlines(keepends=True):
        text = line.strip()
        words = text.split()
        if text.startswith("# Subtest: "):
            suite = text[len("# Subtest: "):]
        elif line.startswith("    ") and words[:1] in (["ok"], ["not"]):
            name = words[2] if words[0] == "ok" else words[3]
            name = name[:-len("__emulated")] if name.endswith("__emulated") else name
            lines.insert(start, f"    # running {suite}.{name}\n")
        lines.append(line)
        if line.startswith("    ") and (words[:1] in (["ok"], ["not"]) or text.startswith("1..")):
            start = len(lines)
    return "".join(lines)

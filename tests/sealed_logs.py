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

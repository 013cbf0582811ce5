/* SPDX-License-Identifier: MIT */
/* CRC-32/ISO-HDLC, the CRC of zlib and Python's zlib.crc32. */
#ifndef LIB_CRC32_H
#define LIB_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC: crc32_update(0, buf, n) equals zlib.crc32(buf). Chunks may be fed in order. */
uint32_t crc32_update(uint32_t crc, const void *data, size_t length);

#endif

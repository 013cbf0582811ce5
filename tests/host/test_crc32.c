/* SPDX-License-Identifier: MIT */
/* Host tests of lib/crc32.c against known CRC-32/ISO-HDLC values (zlib.crc32). */
#include <stdint.h>
#include <string.h>

#include "lib/crc32.h"
#include "tests/host/host_test.h"

/* Values computed with Python's zlib.crc32. */
static const struct {
	const char *text;
	uint32_t crc;
} crc32_vectors[] = {
	{ "", 0 },
	{ "a", 0xe8b7be43 },
	{ "123456789", 0xcbf43926 }, /* the catalogue's check value */
	{ "The quick brown fox jumps over the lazy dog", 0x414fa339 },
	{ "KTAP version 1\n# switchyard 0.1 (x86-64)\n1..0\n", 0xf98d079b },
};

HOST_TEST(crc32_matches_known_text_vectors)
{
	for (size_t i = 0; i < sizeof(crc32_vectors) / sizeof(crc32_vectors[0]); i++) {
		uint32_t crc =
			crc32_update(0, crc32_vectors[i].text, strlen(crc32_vectors[i].text));

		host_checkf(crc == crc32_vectors[i].crc,
			    "crc32(\"%s\"): expected 0x%08x, got 0x%08x", crc32_vectors[i].text,
			    crc32_vectors[i].crc, crc);
	}
}

HOST_TEST(crc32_matches_known_binary_vectors)
{
	uint8_t bytes[256];

	for (int i = 0; i < 256; i++)
		bytes[i] = (uint8_t)i;
	host_check_eq_u64(0x29058c73, crc32_update(0, bytes, sizeof(bytes)));
	memset(bytes, 0, 32);
	host_check_eq_u64(0x190a55ad, crc32_update(0, bytes, 32));
	memset(bytes, 0xff, 32);
	host_check_eq_u64(0xff6cab0b, crc32_update(0, bytes, 32));
}

HOST_TEST(crc32_of_nothing_leaves_the_crc_unchanged)
{
	host_check_eq_u64(0, crc32_update(0, NULL, 0));
	host_check_eq_u64(0xcbf43926, crc32_update(0xcbf43926, "", 0));
}

HOST_TEST(crc32_in_chunks_equals_crc32_of_the_whole)
{
	uint8_t bytes[300];
	uint32_t whole;

	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(i * 37 + 11);
	whole = crc32_update(0, bytes, sizeof(bytes));
	/* Every split into two chunks, and byte by byte. */
	for (size_t split = 0; split <= sizeof(bytes); split++) {
		uint32_t crc = crc32_update(0, bytes, split);

		crc = crc32_update(crc, bytes + split, sizeof(bytes) - split);
		if (!host_checkf(crc == whole, "split at %zu: expected 0x%08x, got 0x%08x", split,
				 whole, crc))
			return;
	}
	uint32_t crc = 0;

	for (size_t i = 0; i < sizeof(bytes); i++)
		crc = crc32_update(crc, bytes + i, 1);
	host_check_eq_u64(whole, crc);
}

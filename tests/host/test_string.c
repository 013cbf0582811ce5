/* SPDX-License-Identifier: MIT */
/* Host tests of lib/string.c, compiled here under lib_ names so that it can sit beside libc. */
#define memset lib_memset
#define memcpy lib_memcpy
#define memmove lib_memmove
#define memcmp lib_memcmp
#define strlen lib_strlen
#define strnlen lib_strnlen
#define strcmp lib_strcmp
#define strncmp lib_strncmp
#define strchr lib_strchr
#define strlcpy lib_strlcpy
#include "lib/string.c"
#undef memset
#undef memcpy
#undef memmove
#undef memcmp
#undef strlen
#undef strnlen
#undef strcmp
#undef strncmp
#undef strchr
#undef strlcpy

#include <string.h>

#include "tests/host/host_test.h"

/* The sign of a comparison result, for comparing with libc, which need not return -1 or 1. */
static int sign(int value)
{
	return (value > 0) - (value < 0);
}

HOST_TEST(string_memset_fills_exactly_count_bytes)
{
	unsigned char buf[16];

	memset(buf, 0xaa, sizeof(buf));
	host_check(lib_memset(buf + 2, 0x1ff, 5) == buf + 2); /* value converts to unsigned char */
	for (size_t i = 0; i < sizeof(buf); i++)
		host_checkf(buf[i] == (i >= 2 && i < 7 ? 0xff : 0xaa), "byte %zu is 0x%02x", i,
			    buf[i]);
	lib_memset(buf, 0, 0);
	host_check_eq_u64(0xaa, buf[0]);
}

/* Every length up to 100 bytes, at aligned and unaligned starts: the word loops and the tails. */
HOST_TEST(string_memset_and_memcpy_agree_with_libc_at_every_length_and_alignment)
{
	static uint64_t expected_words[16], actual_words[16], source_words[16];
	unsigned char *expected = (unsigned char *)expected_words;
	unsigned char *actual = (unsigned char *)actual_words;
	unsigned char *source = (unsigned char *)source_words;

	for (size_t i = 0; i < sizeof(source_words); i++)
		source[i] = (unsigned char)(i * 13 + 5);
	for (size_t offset = 0; offset < 9; offset++) {
		for (size_t count = 0; count <= 100; count++) {
			memset(expected, 0x11, sizeof(expected_words));
			memset(actual, 0x11, sizeof(actual_words));
			memset(expected + offset, 0x5c, count);
			lib_memset(actual + offset, 0x5c, count);
			if (!host_checkf(memcmp(expected, actual, sizeof(actual_words)) == 0,
					 "memset(+%zu, 0x5c, %zu) differs from libc", offset,
					 count))
				return;
			memcpy(expected + offset, source + offset, count);
			lib_memcpy(actual + offset, source + offset, count);
			if (!host_checkf(memcmp(expected, actual, sizeof(actual_words)) == 0,
					 "memcpy(+%zu, +%zu, %zu) differs from libc", offset,
					 offset, count))
				return;
		}
	}
}

HOST_TEST(string_memcpy_and_memmove_agree_with_libc_at_every_overlap)
{
	unsigned char expected[64], actual[64];

	for (size_t from = 0; from < 24; from++) {
		for (size_t to = 0; to < 24; to++) {
			for (size_t count = 0; count <= 24; count++) {
				for (size_t i = 0; i < sizeof(expected); i++)
					expected[i] = actual[i] = (unsigned char)(i * 7 + 3);
				memmove(expected + to, expected + from, count);
				host_check(lib_memmove(actual + to, actual + from, count) ==
					   actual + to);
				if (!host_checkf(memcmp(expected, actual, sizeof(actual)) == 0,
						 "memmove(+%zu, +%zu, %zu) differs from libc", to,
						 from, count))
					return;
			}
		}
	}
	host_check(lib_memcpy(actual, "switchyard", 11) == actual);
	host_check_str("switchyard", (char *)actual);
}

HOST_TEST(string_comparisons_treat_bytes_as_unsigned)
{
	static const char *const strings[] = { "",  "a",    "ab",   "abc",  "abd",
					       "b", "\x80", "\xff", "a\xff" };
	const size_t count = sizeof(strings) / sizeof(strings[0]);

	for (size_t i = 0; i < count; i++) {
		for (size_t j = 0; j < count; j++) {
			const char *a = strings[i], *b = strings[j];
			size_t shorter = strlen(a) < strlen(b) ? strlen(a) : strlen(b);

			host_checkf(sign(lib_strcmp(a, b)) == sign(strcmp(a, b)),
				    "strcmp(%zu, %zu)", i, j);
			for (size_t n = 0; n <= 4; n++)
				host_checkf(sign(lib_strncmp(a, b, n)) == sign(strncmp(a, b, n)),
					    "strncmp(%zu, %zu, %zu)", i, j, n);
			host_checkf(sign(lib_memcmp(a, b, shorter + 1)) ==
					    sign(memcmp(a, b, shorter + 1)),
				    "memcmp(%zu, %zu)", i, j);
		}
	}
	host_check_eq_i64(0, lib_memcmp("abc", "abd", 2));
	host_check_eq_i64(0, lib_strncmp("abc", "abd", 2));
}

HOST_TEST(string_lengths_and_strchr)
{
	const char *s = "arch.long_mode";

	host_check_eq_u64(0, lib_strlen(""));
	host_check_eq_u64(14, lib_strlen(s));
	host_check_eq_u64(4, lib_strnlen(s, 4));
	host_check_eq_u64(14, lib_strnlen(s, 100));
	host_check_eq_u64(0, lib_strnlen(NULL, 0)); /* max 0 reads nothing */
	host_check(lib_strchr(s, '.') == s + 4);
	host_check(lib_strchr(s, 'a') == s);
	host_check(lib_strchr(s, '\0') == s + 14);
	host_check(lib_strchr(s, 'z') == NULL);
	host_check(lib_strchr("a\xff", 0xff) != NULL); /* c converts to char */
}

HOST_TEST(string_strlcpy_truncates_and_returns_the_source_length)
{
	char buf[8];

	memset(buf, 'x', sizeof(buf));
	host_check_eq_u64(10, lib_strlcpy(buf, "switchyard", sizeof(buf)));
	host_check_str("switchy", buf);
	host_check_eq_u64(2, lib_strlcpy(buf, "ok", sizeof(buf)));
	host_check_str("ok", buf);
	host_check_eq_u64(3, lib_strlcpy(buf, "abc", 1));
	host_check_str("", buf);
	buf[0] = 'x';
	host_check_eq_u64(3, lib_strlcpy(buf, "abc", 0));
	host_check_eq_u64('x', buf[0]);
}

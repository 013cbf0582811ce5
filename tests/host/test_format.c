/* SPDX-License-Identifier: MIT */
/* Host tests of lib/format.c: vformat must agree with the host's vsnprintf. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/format.h"
#include "tests/host/host_test.h"

#define FORMAT_BUFFER_SIZE 512
#define SENTINEL 0x5a

/*
 * Format with both vsnprintf and vformat into buffers of several sizes and require identical
 * bytes (so also that nothing is written past size) and identical return values. Sizes are
 * every one from 0 to two past the output length when every_size, else a few around the edges.
 * Reports the first difference only.
 */
static bool check_sizes_like_snprintf(const char *file, int line, bool every_size, const char *fmt,
				      va_list args)
{
	char expected[FORMAT_BUFFER_SIZE], actual[FORMAT_BUFFER_SIZE];
	int expected_length, actual_length, full_length;
	va_list copy;
	bool same = true;

	va_copy(copy, args);
	full_length = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	for (int size = 0; size <= full_length + 2 && size <= FORMAT_BUFFER_SIZE && same; size++) {
		if (!every_size && size > 1 && size != full_length / 2 && size < full_length)
			continue;
		memset(expected, SENTINEL, sizeof(expected));
		memset(actual, SENTINEL, sizeof(actual));
		va_copy(copy, args);
		expected_length = vsnprintf(expected, (size_t)size, fmt, copy);
		va_end(copy);
		va_copy(copy, args);
		actual_length = vformat(actual, (size_t)size, fmt, copy);
		va_end(copy);
		same = expected_length == actual_length &&
		       memcmp(expected, actual, sizeof(expected)) == 0;
		host_checkf_at(file, line, same,
			       "format \"%s\", size %d: expected \"%.*s\" (returns %d), got "
			       "\"%.*s\" (returns %d)",
			       fmt, size, size, expected, expected_length, size, actual,
			       actual_length);
	}
	return same;
}

static __attribute__((format(printf, 4, 5))) bool
check_like_snprintf_at(const char *file, int line, bool every_size, const char *fmt, ...)
{
	va_list args;
	bool same;

	va_start(args, fmt);
	same = check_sizes_like_snprintf(file, line, every_size, fmt, args);
	va_end(args);
	return same;
}

/* Compare with snprintf at every buffer size. */
#define check_like_snprintf(...) check_like_snprintf_at(__FILE__, __LINE__, true, __VA_ARGS__)
/* Compare with snprintf at a few buffer sizes, for the large generated tables. */
#define check_like_snprintf_quickly(...) \
	check_like_snprintf_at(__FILE__, __LINE__, false, __VA_ARGS__)

/* Format into a large buffer and check the text and the returned length. */
static __attribute__((format(printf, 4, 5))) void
check_format_at(const char *file, int line, const char *expected, const char *fmt, ...)
{
	char actual[FORMAT_BUFFER_SIZE];
	va_list args;
	int length;

	va_start(args, fmt);
	length = vformat(actual, sizeof(actual), fmt, args);
	va_end(args);
	host_check_str_at(file, line, expected, fmt, expected, actual);
	host_check_eq_u64_at(file, line, "strlen(expected)", "vformat()", strlen(expected),
			     (uint64_t)length);
}

#define check_format(expected, ...) check_format_at(__FILE__, __LINE__, expected, __VA_ARGS__)

static const char *const integer_flags[] = { "",   "-",	 "0",  "+",  " ",  "#",
					     "-+", "0+", "#0", " 0", "-#0" };
static const char *const integer_widths[] = { "", "1", "5", "12", "25" };
static const char *const integer_precisions[] = { "", ".", ".0", ".1", ".3", ".21" };
static const char integer_conversions[] = "diuxXo";
static const char *const integer_lengths[] = { "", "hh", "h", "l", "ll", "z", "t", "j" };

static const int64_t integer_values[] = { 0,
					  1,
					  -1,
					  7,
					  -42,
					  127,
					  128,
					  255,
					  256,
					  -129,
					  32767,
					  65536,
					  -65537,
					  INT32_MAX,
					  INT32_MIN,
					  UINT32_MAX,
					  0x123456789abcdefll,
					  INT64_MAX,
					  INT64_MIN };

#define ARRAY_SIZE(array) (sizeof(array) / sizeof((array)[0]))

/* Check fmt on every value, passed as the type the length modifier names; count failures. */
static unsigned int check_integer_format(const char *fmt, const char *length)
{
	unsigned int failures = 0;

	for (size_t v = 0; v < ARRAY_SIZE(integer_values); v++) {
		int64_t value = integer_values[v];
		bool same;

		if (strcmp(length, "l") == 0)
			same = check_like_snprintf_quickly(fmt, (long)value);
		else if (strcmp(length, "ll") == 0)
			same = check_like_snprintf_quickly(fmt, (long long)value);
		else if (strcmp(length, "z") == 0)
			same = check_like_snprintf_quickly(fmt, (size_t)value);
		else if (strcmp(length, "t") == 0)
			same = check_like_snprintf_quickly(fmt, (ptrdiff_t)value);
		else if (strcmp(length, "j") == 0)
			same = check_like_snprintf_quickly(fmt, (intmax_t)value);
		else
			same = check_like_snprintf_quickly(fmt, (int)value);
		failures += !same;
	}
	return failures;
}

/* Check every precision, length and conversion under one set of flags and one width. */
static unsigned int check_integer_formats(const char *flags, const char *width)
{
	unsigned int failures = 0;
	char fmt[32];

	for (size_t p = 0; p < ARRAY_SIZE(integer_precisions); p++) {
		for (size_t l = 0; l < ARRAY_SIZE(integer_lengths); l++) {
			for (size_t c = 0; integer_conversions[c] != '\0'; c++) {
				snprintf(fmt, sizeof(fmt), "[%%%s%s%s%s%c]", flags, width,
					 integer_precisions[p], integer_lengths[l],
					 integer_conversions[c]);
				failures += check_integer_format(fmt, integer_lengths[l]);
			}
		}
	}
	return failures;
}

/* Every combination of flags, width, precision, length and conversion, on every value. */
HOST_TEST(format_integers_match_snprintf_in_every_combination)
{
	unsigned int failures = 0;

	/* Stop after a few failing widths: enough to diagnose, without flooding the log. */
	for (size_t f = 0; f < ARRAY_SIZE(integer_flags) && failures < 20; f++) {
		for (size_t w = 0; w < ARRAY_SIZE(integer_widths) && failures < 20; w++)
			failures += check_integer_formats(integer_flags[f], integer_widths[w]);
	}
}

HOST_TEST(format_extreme_values_match_snprintf)
{
	check_like_snprintf("%lld %lld", (long long)INT64_MIN, (long long)INT64_MAX);
	check_like_snprintf("%llu %llx %llo", (unsigned long long)UINT64_MAX,
			    (unsigned long long)UINT64_MAX, (unsigned long long)UINT64_MAX);
	check_like_snprintf("%d %d %u", INT32_MIN, INT32_MAX, UINT32_MAX);
	check_like_snprintf("%hhd %hhu %hd %hu", 300, -1, 70000, -1);
	check_like_snprintf("%zu %zd %td %jd %ju", SIZE_MAX, (size_t)-5, (ptrdiff_t)-7,
			    (intmax_t)INT64_MIN, (uintmax_t)UINT64_MAX);
	check_like_snprintf("%#llx %#llo %#llX", (unsigned long long)UINT64_MAX,
			    (unsigned long long)UINT64_MAX, 0xabcdefull);
}

HOST_TEST(format_star_width_and_precision_match_snprintf)
{
	/* A variable: -Wformat rejects '0' with a precision, which a negative '*' cancels. */
	const char *zero_padded = "[%0*.*x]";

	for (int width = -12; width <= 12; width += 3) {
		for (int precision = -2; precision <= 6; precision += 2) {
			check_like_snprintf("[%*.*d]", width, precision, -42);
			check_like_snprintf(zero_padded, width, precision, 0xbeefu);
			check_like_snprintf("[%*.*s]", width, precision, "switchyard");
			check_like_snprintf("[%-*d]", width, 7);
			check_like_snprintf("[%0*d]", width, -7);
		}
	}
}

HOST_TEST(format_strings_and_chars_match_snprintf)
{
	static const char *const string_formats[] = { "%s",	  "[%10s]",    "[%-10s]", "[%.3s]",
						      "[%10.3s]", "[%-10.3s]", "[%.0s]",  "[%.30s]",
						      "[%1s]",	  "[%05s]",    "[%+s]",	  "[% s]",
						      "[%#s]" };
	static const char *const char_formats[] = { "%c", "[%5c]", "[%-5c]", "[%05c]", "[%1c]" };
	static const char *const strings[] = { "", "a", "switchyard", "tab\there" };

	for (size_t f = 0; f < ARRAY_SIZE(string_formats); f++) {
		for (size_t s = 0; s < ARRAY_SIZE(strings); s++)
			check_like_snprintf(string_formats[f], strings[s]);
	}
	for (size_t f = 0; f < ARRAY_SIZE(char_formats); f++) {
		check_like_snprintf(char_formats[f], 'x');
		check_like_snprintf(char_formats[f], '\0');
		check_like_snprintf(char_formats[f], 0x1ff); /* converted to unsigned char */
	}
}

HOST_TEST(format_mixed_text_and_conversions_match_snprintf)
{
	const char *empty = "";

	check_like_snprintf(empty, 0); /* a variable, as -Wformat rejects an empty literal */
	check_like_snprintf("plain text, no conversions");
	check_like_snprintf("100%% sure, %d%%", 99);
	check_like_snprintf("# metric %s median=%llu p99=%llu", "sched.switch_cycles", 1234ull,
			    2345ull);
	check_like_snprintf("# switchyard-end crc32=0x%08x lines=%u", 0x1a2b3c4du, 23u);
	check_like_snprintf("%s:%d: expected %llu (0x%llx), got %lld (0x%llx)", "arch/x86/traps.c",
			    123, 13ull, 13ull, 0ll, 0ull);
	check_like_snprintf("%c%c%c %5.2s|%-6x|%+i", 'a', 'b', 'c', "xyz", 0xfu, 0);
	check_like_snprintf("[%300d]", 5);
	check_like_snprintf("[%-300s]", "wide");
}

HOST_TEST(format_truncates_and_returns_the_full_length)
{
	char buf[8];

	memset(buf, SENTINEL, sizeof(buf));
	host_check_eq_i64(10, format(buf, 4, "%d", 1234567890));
	host_check_str("123", buf);
	host_check_eq_u64(SENTINEL, (unsigned char)buf[4]);

	memset(buf, SENTINEL, sizeof(buf));
	host_check_eq_i64(5, format(buf, 1, "hello"));
	host_check_eq_u64('\0', buf[0]);
	host_check_eq_u64(SENTINEL, (unsigned char)buf[1]);

	memset(buf, SENTINEL, sizeof(buf));
	host_check_eq_i64(5, format(buf, 0, "hello"));
	host_check_eq_u64(SENTINEL, (unsigned char)buf[0]);

	host_check_eq_i64(18, format(NULL, 0, "%p", (void *)buf));
	host_check_eq_i64(0, format(buf, sizeof(buf), "%s", ""));
	host_check_str("", buf);
}

HOST_TEST(format_pointer_is_0x_and_16_hex_digits)
{
	check_format("0x0000000000001234", "%p", (void *)0x1234);
	check_format("0x0000000000000000", "%p", NULL);
	check_format("0xffffffff80000000", "%p", (void *)0xffffffff80000000ull);
	check_format("[  0x00000000deadbeef]", "[%20p]", (void *)0xdeadbeefull);
	check_format("[0x00000000deadbeef  ]", "[%-20p]", (void *)0xdeadbeefull);
	check_format("[0x0000000000000001]", "[%5p]", (void *)1);
}

HOST_TEST(format_null_string_prints_null_in_parentheses)
{
	const char *volatile null_string = NULL;

	check_format("(null)", "%s", null_string);
	check_format("[  (null)]", "[%8s]", null_string);
	check_format("[(null)  ]", "[%-8s]", null_string);
	check_format("[(nu]", "[%.3s]", null_string);
}

HOST_TEST(format_odd_conversions_are_printed_not_interpreted)
{
	/* Through a variable, because -Wformat rejects these literals at compile time. */
	const char *volatile unsupported = "a%wb%";
	const char *volatile dangling = "x%5";

	check_format("a%wb%", unsupported, 0);
	check_format("x%", dangling, 0);
}

HOST_TEST(format_wrapper_agrees_with_vformat)
{
	char buf[64];

	host_check_eq_i64(19,
			  format(buf, sizeof(buf), "%s=%d %c %x", "seed", -17, 'q', 0x1234abcdu));
	host_check_str("seed=-17 q 1234abcd", buf);
}

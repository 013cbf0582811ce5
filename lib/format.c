/* SPDX-License-Identifier: MIT */
/* printf-style formatting into a bounded buffer, with C99 vsnprintf return semantics. */
#include <stdbool.h>
#include <stdint.h>

#include "lib/format.h"

/*
 * Field widths and precisions saturate here, so that "%999999999999d" cannot overflow an int;
 * no real field comes near it.
 */
#define FORMAT_FIELD_MAX 1000000

/* Invariant: buf[0..min(length, size - 1)) holds the output so far; length counts all of it. */
struct format_output {
	char *buf;
	size_t size;
	size_t length;
};

/* One conversion's flags, width and precision (precision -1: none given). */
struct format_spec {
	bool left; /* '-': pad on the right */
	bool zero; /* '0': pad numbers with zeros after the sign and prefix */
	bool plus; /* '+': signed conversions show '+' for non-negative values */
	bool space; /* ' ': signed conversions show ' ' for non-negative values */
	bool alternate; /* '#': 0x/0X prefix for non-zero hex, leading 0 for octal */
	int width;
	int precision;
};

enum format_length {
	LENGTH_INT,
	LENGTH_CHAR, /* hh */
	LENGTH_SHORT, /* h */
	LENGTH_LONG, /* l */
	LENGTH_LONG_LONG, /* ll */
	LENGTH_SIZE, /* z */
	LENGTH_PTRDIFF, /* t */
	LENGTH_INTMAX, /* j */
};

static void output_char(struct format_output *out, char c)
{
	if (out->length + 1 < out->size)
		out->buf[out->length] = c;
	out->length++;
}

static void output_repeat(struct format_output *out, char c, int count)
{
	for (; count > 0; count--)
		output_char(out, c);
}

static void output_chars(struct format_output *out, const char *s, size_t count)
{
	for (size_t i = 0; i < count; i++)
		output_char(out, s[i]);
}

static size_t string_length(const char *s)
{
	size_t length = 0;

	while (s[length] != '\0')
		length++;
	return length;
}

/*
 * Print magnitude in base 8, 10 or 16 after prefix ("-", "+", " ", "0x" or ""), honouring
 * width, precision (minimum digits; 0 prints no digits for 0), '-', '0' and, for octal, '#'.
 */
static void format_integer(struct format_output *out, const struct format_spec *spec,
			   uint64_t magnitude, unsigned int base, bool upper, const char *prefix)
{
	const char *digit_set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char digits[24]; /* 22 octal digits hold 2^64 - 1 */
	int digit_count = 0;
	int prefix_length = (int)string_length(prefix);
	int zeros, padding;

	if (magnitude != 0 || spec->precision != 0) {
		do {
			digits[digit_count++] = digit_set[magnitude % base];
			magnitude /= base;
		} while (magnitude != 0);
	}
	zeros = spec->precision > digit_count ? spec->precision - digit_count : 0;
	if (base == 8 && spec->alternate && zeros == 0 &&
	    (digit_count == 0 || digits[digit_count - 1] != '0'))
		zeros = 1;
	if (spec->zero && !spec->left && spec->precision < 0 &&
	    spec->width > prefix_length + zeros + digit_count)
		zeros = spec->width - prefix_length - digit_count;
	padding = spec->width - prefix_length - zeros - digit_count;

	if (!spec->left)
		output_repeat(out, ' ', padding);
	output_chars(out, prefix, (size_t)prefix_length);
	output_repeat(out, '0', zeros);
	while (digit_count > 0)
		output_char(out, digits[--digit_count]);
	if (spec->left)
		output_repeat(out, ' ', padding);
}

/* Print count characters of s, space-padded to the width ('0' does not apply, as in glibc). */
static void format_chars(struct format_output *out, const struct format_spec *spec, const char *s,
			 size_t count)
{
	int padding = spec->width > (int)count ? spec->width - (int)count : 0;

	if (!spec->left)
		output_repeat(out, ' ', padding);
	output_chars(out, s, count);
	if (spec->left)
		output_repeat(out, ' ', padding);
}

static void format_string(struct format_output *out, const struct format_spec *spec, const char *s)
{
	size_t count = 0;

	if (s == NULL)
		s = "(null)";
	while (s[count] != '\0' && (spec->precision < 0 || count < (size_t)spec->precision))
		count++;
	format_chars(out, spec, s, count);
}

/* The sign a non-negative signed conversion shows: "+" for '+', " " for ' ', else none. */
static const char *sign_prefix(const struct format_spec *spec)
{
	if (spec->plus)
		return "+";
	if (spec->space)
		return " ";
	return "";
}

/*
 * Fetch the next integer argument of the given length as 64 bits: truncated to that length's
 * width, then sign-extended when is_signed (so (int64_t) of the result is the signed value).
 */
static uint64_t fetch_integer(va_list *args, enum format_length length, bool is_signed)
{
	unsigned int bits = 64;
	uint64_t value;

	switch (length) {
	case LENGTH_LONG:
		value = va_arg(*args, unsigned long);
		break;
	case LENGTH_LONG_LONG:
		value = va_arg(*args, unsigned long long);
		break;
	case LENGTH_SIZE:
		value = va_arg(*args, size_t);
		break;
	case LENGTH_PTRDIFF:
		value = (uint64_t)va_arg(*args, ptrdiff_t);
		break;
	case LENGTH_INTMAX:
		value = va_arg(*args, uintmax_t);
		break;
	default:
		/* int, and char and short, which are promoted to int when passed. */
		value = va_arg(*args, unsigned int);
		bits = length == LENGTH_CHAR ? 8 : length == LENGTH_SHORT ? 16 : 32;
		break;
	}
	if (bits < 64) {
		value &= (UINT64_C(1) << bits) - 1;
		if (is_signed && (value >> (bits - 1)) != 0)
			value |= ~((UINT64_C(1) << bits) - 1);
	}
	return value;
}

/*
 * Parse a decimal field at *fmt, or take it from the arguments for '*'; advance *fmt. The
 * result is clamped to [-FORMAT_FIELD_MAX, FORMAT_FIELD_MAX].
 */
static int parse_field(const char **fmt, va_list *args)
{
	int value = 0;

	if (**fmt == '*') {
		(*fmt)++;
		value = va_arg(*args, int);
		if (value < -FORMAT_FIELD_MAX)
			value = -FORMAT_FIELD_MAX;
	} else {
		for (; **fmt >= '0' && **fmt <= '9'; (*fmt)++) {
			if (value <= FORMAT_FIELD_MAX)
				value = value * 10 + (**fmt - '0');
		}
	}
	return value > FORMAT_FIELD_MAX ? FORMAT_FIELD_MAX : value;
}

static enum format_length parse_length(const char **fmt)
{
	switch (*(*fmt)++) {
	case 'h':
		if (**fmt != 'h')
			return LENGTH_SHORT;
		(*fmt)++;
		return LENGTH_CHAR;
	case 'l':
		if (**fmt != 'l')
			return LENGTH_LONG;
		(*fmt)++;
		return LENGTH_LONG_LONG;
	case 'z':
		return LENGTH_SIZE;
	case 't':
		return LENGTH_PTRDIFF;
	case 'j':
		return LENGTH_INTMAX;
	default:
		(*fmt)--;
		return LENGTH_INT;
	}
}

/*
 * Format one conversion; *fmt points just past the '%' and is advanced past the conversion.
 * An unsupported conversion prints '%' and its conversion character, drops its flags and width,
 * and consumes no argument; -Wformat rejects it at compile time anyway.
 */
static void format_conversion(struct format_output *out, const char **fmt, va_list *args)
{
	struct format_spec spec = { .precision = -1 };
	enum format_length length;
	int64_t value;
	char c;

	for (;; (*fmt)++) {
		if (**fmt == '-')
			spec.left = true;
		else if (**fmt == '0')
			spec.zero = true;
		else if (**fmt == '+')
			spec.plus = true;
		else if (**fmt == ' ')
			spec.space = true;
		else if (**fmt == '#')
			spec.alternate = true;
		else
			break;
	}
	spec.width = parse_field(fmt, args);
	if (spec.width < 0) {
		/* A negative '*' width means '-' and its magnitude (C11 7.21.6.1p5). */
		spec.left = true;
		spec.width = -spec.width;
	}
	if (**fmt == '.') {
		(*fmt)++;
		spec.precision = parse_field(fmt, args);
		if (spec.precision < 0)
			spec.precision = -1; /* a negative '*' precision counts as none */
	}
	length = parse_length(fmt);

	switch (c = *(*fmt)++) {
	case 'd':
	case 'i':
		value = (int64_t)fetch_integer(args, length, true);
		if (value < 0)
			format_integer(out, &spec, 0 - (uint64_t)value, 10, false, "-");
		else
			format_integer(out, &spec, (uint64_t)value, 10, false, sign_prefix(&spec));
		break;
	case 'u':
		format_integer(out, &spec, fetch_integer(args, length, false), 10, false, "");
		break;
	case 'o':
		format_integer(out, &spec, fetch_integer(args, length, false), 8, false, "");
		break;
	case 'x':
	case 'X': {
		uint64_t magnitude = fetch_integer(args, length, false);
		const char *prefix =
			spec.alternate && magnitude != 0 ? (c == 'x' ? "0x" : "0X") : "";

		format_integer(out, &spec, magnitude, 16, c == 'X', prefix);
		break;
	}
	case 'p':
		spec.zero = false;
		spec.precision = 16;
		format_integer(out, &spec, (uintptr_t)va_arg(*args, void *), 16, false, "0x");
		break;
	case 'c':
		c = (char)va_arg(*args, int);
		format_chars(out, &spec, &c, 1);
		break;
	case 's':
		format_string(out, &spec, va_arg(*args, const char *));
		break;
	case '%':
		output_char(out, '%');
		break;
	case '\0':
		/* A '%' that ends the format is printed; do not read past the terminator. */
		output_char(out, '%');
		(*fmt)--;
		break;
	default:
		output_char(out, '%');
		output_char(out, c);
		break;
	}
}

int vformat(char *buf, size_t size, const char *fmt, va_list args)
{
	struct format_output out = { .buf = buf, .size = size, .length = 0 };
	va_list args_copy;

	/* va_list may be an array type; a local copy makes &args_copy a true va_list pointer. */
	va_copy(args_copy, args);
	while (*fmt != '\0') {
		if (*fmt != '%') {
			output_char(&out, *fmt++);
			continue;
		}
		fmt++;
		format_conversion(&out, &fmt, &args_copy);
	}
	va_end(args_copy);

	if (size > 0)
		buf[out.length < size ? out.length : size - 1] = '\0';
	return out.length > INT32_MAX ? INT32_MAX : (int)out.length;
}

int format(char *buf, size_t size, const char *fmt, ...)
{
	va_list args;
	int length;

	va_start(args, fmt);
	length = vformat(buf, size, fmt, args);
	va_end(args);
	return length;
}

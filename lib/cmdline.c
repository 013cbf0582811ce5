/* SPDX-License-Identifier: MIT */
/* Kernel command-line parsing: words, option lookup, and the value parsers. */
#include <stdint.h>

#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/string.h"

/* The 16550 divisor latch counts periods of 115200 baud (a 1.8432 MHz clock divided by 16). */
#define SERIAL_BAUD_BASE 115200
#define SERIAL_DIVISOR_MAX UART_DIVISOR_MAX
#define SERIAL_PORT_MAX (0xffff - (UART_REGISTERS - 1)) /* a 16550 decodes port .. port + 7 */
/* The longest error cmdline_parse() builds before escaping it. */
#define ERROR_RAW_MAX 512

/* The legacy PC COM port addresses, by Linux name. */
static const struct {
	const char *name;
	uint16_t port;
} serial_ports[] = {
	{ "ttyS0", 0x3f8 },
	{ "ttyS1", 0x2f8 },
	{ "ttyS2", 0x3e8 },
	{ "ttyS3", 0x2e8 },
};

enum number_status {
	NUMBER_OK,
	NUMBER_MALFORMED, /* empty, or a character that is not a digit of the base */
	NUMBER_TOO_LARGE, /* well formed, but above UINT64_MAX */
};

static bool is_separator(char c)
{
	return c == ' ' || c == '\t';
}

static unsigned int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return (unsigned int)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (unsigned int)(c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (unsigned int)(c - 'A' + 10);
	return 16;
}

/* Parse s[0..length) as decimal or, when hex_allowed and it starts with "0x", as hex. */
static enum number_status parse_number(const char *s, size_t length, bool hex_allowed,
				       uint64_t *result)
{
	enum number_status status = NUMBER_OK;
	unsigned int base = 10;
	uint64_t value = 0;
	size_t i = 0;

	if (hex_allowed && length > 2 && s[0] == '0' && s[1] == 'x') {
		base = 16;
		i = 2;
	}
	if (i == length)
		return NUMBER_MALFORMED;
	/* Keep scanning after an overflow: a malformed number is reported as malformed. */
	for (; i < length; i++) {
		unsigned int digit = digit_value(s[i]);

		if (digit >= base)
			return NUMBER_MALFORMED;
		if (value > (UINT64_MAX - digit) / base)
			status = NUMBER_TOO_LARGE;
		value = value * base + digit;
	}
	*result = value;
	return status;
}

/* Every parser but the flag's needs a non-empty value; say what it should look like. */
static bool require_value(const struct cmdline_option *opt, const char *value, char *err,
			  size_t err_size)
{
	if (value != NULL && value[0] != '\0')
		return true;
	format(err, err_size, "needs a value: %s=%s", opt->name,
	       opt->syntax ? opt->syntax : "VALUE");
	return false;
}

bool cmdline_parse_flag(const struct cmdline_option *opt, const char *value, char *err,
			size_t err_size)
{
	if (value != NULL) {
		format(err, err_size, "takes no value; write just '%s'", opt->name);
		return false;
	}
	*(bool *)opt->dest = true;
	return true;
}

bool cmdline_parse_bool(const struct cmdline_option *opt, const char *value, char *err,
			size_t err_size)
{
	if (!require_value(opt, value, err, err_size))
		return false;
	if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0) {
		format(err, err_size, "'%s' is not 0 or 1", value);
		return false;
	}
	*(bool *)opt->dest = value[0] == '1';
	return true;
}

bool cmdline_parse_u64(const struct cmdline_option *opt, const char *value, char *err,
		       size_t err_size)
{
	uint64_t number = 0;
	enum number_status status;

	if (!require_value(opt, value, err, err_size))
		return false;
	status = parse_number(value, strlen(value), true, &number);
	if (status == NUMBER_MALFORMED) {
		format(err, err_size, "'%s' is not a decimal or 0x-prefixed hex number", value);
		return false;
	}
	if (status == NUMBER_TOO_LARGE) {
		format(err, err_size, "'%s' does not fit in 64 bits", value);
		return false;
	}
	if (number < opt->min || number > opt->max) {
		format(err, err_size, "'%s' is out of range %llu..%llu", value,
		       (unsigned long long)opt->min, (unsigned long long)opt->max);
		return false;
	}
	*(uint64_t *)opt->dest = number;
	return true;
}

/* Write milliseconds as "Ns" when they are whole seconds, else as "Nms". */
static void format_duration(char *buf, size_t size, uint64_t milliseconds)
{
	if (milliseconds % 1000 == 0)
		format(buf, size, "%llus", (unsigned long long)(milliseconds / 1000));
	else
		format(buf, size, "%llums", (unsigned long long)milliseconds);
}

bool cmdline_parse_duration_ms(const struct cmdline_option *opt, const char *value, char *err,
			       size_t err_size)
{
	uint64_t number = 0, unit = 1000;
	char min[32], max[32];
	size_t length;

	if (!require_value(opt, value, err, err_size))
		return false;
	length = strlen(value);
	if (length >= 2 && strcmp(value + length - 2, "ms") == 0) {
		unit = 1;
		length -= 2;
	} else if (value[length - 1] == 's') {
		length -= 1;
	}
	switch (parse_number(value, length, false, &number)) {
	case NUMBER_MALFORMED:
		format(err, err_size, "'%s' is not a duration: N or Ns (seconds), or Nms", value);
		return false;
	case NUMBER_TOO_LARGE:
		format(err, err_size, "'%s' does not fit in 64 bits of milliseconds", value);
		return false;
	case NUMBER_OK:
		break;
	}
	if (number > UINT64_MAX / unit) {
		format(err, err_size, "'%s' does not fit in 64 bits of milliseconds", value);
		return false;
	}
	if (number * unit < opt->min || number * unit > opt->max) {
		format_duration(min, sizeof(min), opt->min);
		format_duration(max, sizeof(max), opt->max);
		format(err, err_size, "'%s' is out of range %s..%s", value, min, max);
		return false;
	}
	*(uint64_t *)opt->dest = number * unit;
	return true;
}

/* Copy a value that the caller has checked to be shorter than CMDLINE_STRING_MAX. */
static void copy_string_value(const struct cmdline_option *opt, const char *value, size_t length)
{
	memcpy(opt->dest, value, length + 1);
}

/* Reject a value too long for a char[CMDLINE_STRING_MAX] destination. */
static bool check_string_length(size_t length, char *err, size_t err_size)
{
	if (length < CMDLINE_STRING_MAX)
		return true;
	format(err, err_size, "value is %zu characters long; the limit is %d", length,
	       CMDLINE_STRING_MAX - 1);
	return false;
}

bool cmdline_parse_string(const struct cmdline_option *opt, const char *value, char *err,
			  size_t err_size)
{
	if (!require_value(opt, value, err, err_size) ||
	    !check_string_length(strlen(value), err, err_size))
		return false;
	copy_string_value(opt, value, strlen(value));
	return true;
}

/* ",BAUD" after the address: a divisor of 115200 whose quotient fits the 16-bit latch. */
static bool parse_console_baud(const char *text, struct console_config *config, char *err,
			       size_t err_size)
{
	uint64_t number = 0;

	if (parse_number(text, strlen(text), false, &number) != NUMBER_OK || number == 0 ||
	    number > SERIAL_BAUD_BASE || SERIAL_BAUD_BASE % number != 0) {
		format(err, err_size, "baud '%s' is not a divisor of %d, such as 115200 or 9600",
		       text, SERIAL_BAUD_BASE);
		return false;
	}
	if (SERIAL_BAUD_BASE / number > SERIAL_DIVISOR_MAX) {
		format(err, err_size, "baud '%s' needs divisor %llu; the 16550's is at most %d",
		       text, (unsigned long long)(SERIAL_BAUD_BASE / number), SERIAL_DIVISOR_MAX);
		return false;
	}
	config->baud = (uint32_t)number;
	return true;
}

/* "mmio,ADDR" or "mmio32,ADDR" (value starts after "mmio," or "mmio32,"), up to a comma. */
static bool parse_console_mmio(const char *kind, const char *value, size_t length,
			       struct console_config *config, char *err, size_t err_size)
{
	uint64_t stride = config->io == UART_IO_MMIO32 ? UART_MMIO32_STRIDE : 1;
	uint64_t address = 0;

	if (parse_number(value, length, true, &address) != NUMBER_OK || address == 0 ||
	    address > UINT64_MAX - (UART_REGISTERS * stride - 1)) {
		format(err, err_size,
		       "%s address '%.*s' is not a nonzero decimal or 0x-prefixed hex number: "
		       "%s,ADDR[,BAUD]",
		       kind, (int)length, value, kind);
		return false;
	}
	if (address % stride != 0) {
		format(err, err_size, "%s address 0x%llx is not aligned to its %llu-byte registers",
		       kind, (unsigned long long)address, (unsigned long long)stride);
		return false;
	}
	config->mmio = address;
	return true;
}

/* "ttyS0".."ttyS3" or "0xPORT" in value[0, length). */
static bool parse_console_port(const char *value, size_t length, struct console_config *config,
			       char *err, size_t err_size)
{
	uint64_t number = 0;

	for (size_t i = 0; i < sizeof(serial_ports) / sizeof(serial_ports[0]); i++) {
		if (strlen(serial_ports[i].name) == length &&
		    strncmp(value, serial_ports[i].name, length) == 0) {
			config->port = serial_ports[i].port;
			return true;
		}
	}
	if (length <= 2 || strncmp(value, "0x", 2) != 0 ||
	    parse_number(value, length, true, &number) != NUMBER_OK || number == 0 ||
	    number > SERIAL_PORT_MAX) {
		format(err, err_size,
		       "port '%.*s' is not ttyS0..ttyS3, 0x1..0x%x, mmio,ADDR or mmio32,ADDR",
		       (int)length, value, SERIAL_PORT_MAX);
		return false;
	}
	config->port = (uint16_t)number;
	return true;
}

bool cmdline_parse_console(const struct cmdline_option *opt, const char *value, char *err,
			   size_t err_size)
{
	struct console_config config = { .baud = SERIAL_BAUD_BASE,
					 .io = UART_IO_PORT,
					 .given = true };
	const char *kind = NULL, *comma;
	size_t length;
	bool parsed;

	if (!require_value(opt, value, err, err_size))
		return false;
	if (strncmp(value, "mmio,", 5) == 0) {
		kind = "mmio";
		config.io = UART_IO_MMIO8;
	} else if (strncmp(value, "mmio32,", 7) == 0) {
		kind = "mmio32";
		config.io = UART_IO_MMIO32;
	}
	if (kind != NULL)
		value += strlen(kind) + 1;
	comma = strchr(value, ',');
	length = comma != NULL ? (size_t)(comma - value) : strlen(value);
	if (kind != NULL)
		parsed = parse_console_mmio(kind, value, length, &config, err, err_size);
	else
		parsed = parse_console_port(value, length, &config, err, err_size);
	if (!parsed)
		return false;
	if (comma != NULL && !parse_console_baud(comma + 1, &config, err, err_size))
		return false;
	*(struct console_config *)opt->dest = config;
	return true;
}

static bool is_glob_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '*' || c == '?';
}

bool cmdline_parse_globs(const struct cmdline_option *opt, const char *value, char *err,
			 size_t err_size)
{
	size_t length;

	if (!require_value(opt, value, err, err_size))
		return false;
	length = strlen(value);
	if (!check_string_length(length, err, err_size))
		return false;
	for (size_t i = 0; i < length; i++) {
		/* A comma at either end, or after another comma, leaves an empty glob. */
		if (value[i] == ',' && (i == 0 || i == length - 1 || value[i - 1] == ',')) {
			format(err, err_size, "'%s' has an empty glob", value);
			return false;
		}
		if (value[i] != ',' && !is_glob_char(value[i])) {
			if (value[i] > ' ' && value[i] <= '~')
				format(err, err_size,
				       "'%s' has '%c'; globs use only [A-Za-z0-9_.*?]", value,
				       value[i]);
			else
				format(err, err_size,
				       "'%s' has byte 0x%02x; globs use only [A-Za-z0-9_.*?]",
				       value, (unsigned char)value[i]);
			return false;
		}
	}
	copy_string_value(opt, value, length);
	return true;
}

/* The length of the word at s: up to the next space, tab or NUL. */
static size_t word_length(const char *s)
{
	size_t length = 0;

	while (s[length] != '\0' && !is_separator(s[length]))
		length++;
	return length;
}

/* The length of the option name in word[0..length): the text before the first '='. */
static size_t name_length(const char *word, size_t length)
{
	size_t i = 0;

	while (i < length && word[i] != '=')
		i++;
	return i;
}

/* The option named word[0..length), or NULL. */
static const struct cmdline_option *find_option(const struct cmdline_option *options, size_t count,
						const char *word, size_t length)
{
	for (size_t i = 0; i < count; i++) {
		if (strlen(options[i].name) == length &&
		    strncmp(options[i].name, word, length) == 0)
			return &options[i];
	}
	return NULL;
}

/* Whether some word in line[0..end) names the option name. */
static bool given_before(const char *line, const char *end, const char *name)
{
	while (line < end) {
		size_t length = word_length(line);

		if (length == 0) {
			line++;
			continue;
		}
		if (name_length(line, length) == strlen(name) &&
		    strncmp(line, name, strlen(name)) == 0)
			return true;
		line += length;
	}
	return false;
}

/*
 * A boot file name or URI: contains '/', '.' or ':' and no '='. A word that names an option
 * ("dr.lazy") is taken as that option even in first place.
 */
static bool is_file_name(const char *word, size_t length, const struct cmdline_option *options,
			 size_t count)
{
	bool has_file_char = false;

	for (size_t i = 0; i < length; i++) {
		if (word[i] == '=')
			return false;
		if (word[i] == '/' || word[i] == '.' || word[i] == ':')
			has_file_char = true;
	}
	return has_file_char && find_option(options, count, word, length) == NULL;
}

/* Look up the option word[0..length) names and run its parser; on failure, say why in err. */
static bool parse_word(const char *line, const char *word, size_t length,
		       const struct cmdline_option *options, size_t count, char *err,
		       size_t err_size)
{
	size_t name = name_length(word, length);
	const struct cmdline_option *opt = find_option(options, count, word, name);
	char value[CMDLINE_MAX];
	char reason[CMDLINE_STRING_MAX];

	if (opt == NULL) {
		format(err, err_size, "unknown option '%.*s'", (int)length, word);
		return false;
	}
	if (given_before(line, word, opt->name)) {
		format(err, err_size, "option '%s' given twice", opt->name);
		return false;
	}
	/* Invariant: length < CMDLINE_MAX, because cmdline_parse rejects longer lines. */
	if (name < length) {
		memcpy(value, word + name + 1, length - name - 1);
		value[length - name - 1] = '\0';
	}
	reason[0] = '\0';
	if (!opt->parse(opt, name < length ? value : NULL, reason, sizeof(reason))) {
		format(err, err_size, "option '%s': %s", opt->name, reason);
		return false;
	}
	return true;
}

size_t cmdline_escape(char *dest, size_t size, const char *text)
{
	size_t used = 0;

	for (; *text != '\0'; text++) {
		unsigned char c = (unsigned char)*text;
		char piece[5];
		size_t length;

		if (c == '\\')
			length = (size_t)format(piece, sizeof(piece), "\\\\");
		else if (c < ' ' || c > '~')
			length = (size_t)format(piece, sizeof(piece), "\\x%02x", c);
		else
			length = (size_t)format(piece, sizeof(piece), "%c", c);
		if (used + length >= size)
			break; /* only whole escapes: a cut one would read as something else */
		memcpy(dest + used, piece, length);
		used += length;
	}
	if (size > 0)
		dest[used] = '\0';
	return used;
}

bool cmdline_parse(const char *line, const struct cmdline_option *options, size_t count,
		   char *file_name, char *err, size_t err_size)
{
	const char *word = line;
	char first_error[ERROR_RAW_MAX] = "";
	char error[ERROR_RAW_MAX];
	size_t length;

	if (file_name != NULL)
		file_name[0] = '\0';
	if (err_size > 0)
		err[0] = '\0';
	if (strnlen(line, CMDLINE_MAX) >= CMDLINE_MAX) {
		format(err, err_size, "command line is %d characters or longer; the limit is %d",
		       CMDLINE_MAX, CMDLINE_MAX - 1);
		return false;
	}
	for (bool first = true;; first = false, word += length) {
		while (is_separator(*word))
			word++;
		if (*word == '\0')
			break;
		length = word_length(word);
		if (first && is_file_name(word, length, options, count)) {
			if (file_name != NULL)
				format(file_name, CMDLINE_STRING_MAX, "%.*s", (int)length, word);
			continue;
		}
		/* Keep going after an error: the words after it still take effect (exit=). */
		if (!parse_word(line, word, length, options, count, error, sizeof(error)) &&
		    first_error[0] == '\0')
			format(first_error, sizeof(first_error), "%s", error);
	}
	if (first_error[0] == '\0')
		return true;
	cmdline_escape(err, err_size, first_error);
	return false;
}

void cmdline_usage(const struct cmdline_option *options, size_t count, char *buf, size_t size)
{
	size_t used = 0;

	if (size > 0)
		buf[0] = '\0';
	for (size_t i = 0; i < count && used < size; i++) {
		used += (size_t)format(buf + used, size - used, "%s%s%s%s", i > 0 ? " " : "",
				       options[i].name, options[i].syntax != NULL ? "=" : "",
				       options[i].syntax != NULL ? options[i].syntax : "");
	}
}

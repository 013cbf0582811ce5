/* SPDX-License-Identifier: MIT */
/* Host filter for tests/test_decoder.py: decodes instructions given as hex, one per line. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "emulator/decode.h"

/* Longer than any line the test writes: an address and at most 15 bytes of hex. */
#define LINE_CAPACITY 256

static int hex_digit_value(char digit)
{
	if (digit >= '0' && digit <= '9')
		return digit - '0';
	if (digit >= 'a' && digit <= 'f')
		return digit - 'a' + 10;
	if (digit >= 'A' && digit <= 'F')
		return digit - 'A' + 10;
	return -1;
}

/*
 * Parse hex digit pairs, spaces allowed between bytes, into bytes[0..capacity). Returns the
 * byte count, or -1 for malformed text or more than capacity bytes.
 */
static int parse_hex_bytes(const char *text, uint8_t *bytes, size_t capacity)
{
	size_t count = 0;

	for (;;) {
		int high, low;

		while (*text == ' ' || *text == '\t')
			text++;
		if (*text == '\0' || *text == '\n')
			return (int)count;
		high = hex_digit_value(text[0]);
		low = high < 0 ? -1 : hex_digit_value(text[1]);
		if (low < 0 || count == capacity)
			return -1;
		bytes[count++] = (uint8_t)(high << 4 | low);
		text += 2;
	}
}

/*
 * stdin: "ADDRESS HEXBYTES" per line, exactly one instruction's bytes. stdout: "ADDRESS LENGTH
 * CLASS" (CLASS from decode_branch_name) or "ADDRESS invalid". Exit status 2 on a malformed
 * line, else 0.
 */
int main(void)
{
	char line[LINE_CAPACITY];

	while (fgets(line, sizeof(line), stdin)) {
		char *space = strchr(line, ' ');
		uint8_t bytes[DECODE_MAX_LENGTH + 1];
		struct decoded_instruction decoded;
		int count;

		if (!space) {
			fprintf(stderr, "decode-check: malformed line: %s", line);
			return 2;
		}
		*space = '\0';
		count = parse_hex_bytes(space + 1, bytes, sizeof(bytes));
		if (count < 0) {
			fprintf(stderr, "decode-check: malformed bytes at %s\n", line);
			return 2;
		}
		if (decode_instruction(bytes, (size_t)count, &decoded))
			printf("%s %u %s\n", line, decoded.length,
			       decode_branch_name(decoded.branch));
		else
			printf("%s invalid\n", line);
	}
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* The TSC's frequency, as platform/pc/tsc_calibrate.c found it. */
#include <stdint.h>

#include "arch/x86/tsc.h"

static uint64_t hz;
static const char *source = "none";

void tsc_set_hz(uint64_t new_hz, const char *new_source)
{
	hz = new_hz;
	source = new_source;
}

uint64_t tsc_hz(void)
{
	return hz;
}

const char *tsc_source(void)
{
	return source;
}

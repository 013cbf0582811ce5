/* SPDX-License-Identifier: MIT */
/* panic(): format the reason, then the one registered handler. */
#include <stdarg.h>
#include <stddef.h>

#include "lib/format.h"
#include "lib/panic.h"

static panic_handler handler;

void panic_set_handler(panic_handler new_handler)
{
	__atomic_store_n(&handler, new_handler, __ATOMIC_RELEASE);
}

void panic(const char *fmt, ...)
{
	char reason[PANIC_REASON_MAX];
	panic_handler end = __atomic_load_n(&handler, __ATOMIC_ACQUIRE);
	va_list args;

	va_start(args, fmt);
	vformat(reason, sizeof(reason), fmt, args);
	va_end(args);
	if (end)
		end(reason);
	__builtin_trap();
}

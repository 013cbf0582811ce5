/* SPDX-License-Identifier: MIT */
/* panic(): the kernel's one way to give up, through one handler registered from above. */
#ifndef LIB_PANIC_H
#define LIB_PANIC_H

/*
 * The handler ends the run with the reason (kernel/shutdown.c registers one that prints
 * "Bail out! reason" and the final line). It must not return.
 */
typedef void __attribute__((noreturn)) (*panic_handler)(const char *reason);

/* Replace the handler; until one is set, panic() traps (the host sees SIGILL). */
void panic_set_handler(panic_handler handler);

/* Longest reason, the terminating NUL included: a test name (96) and the locks it held fit. */
#define PANIC_REASON_MAX 320

/*
 * Format the reason (lib/format.c, truncated to PANIC_REASON_MAX - 1 characters) and call the
 * handler. Callable from any layer: lib/ is below all of them, so code at the bottom of the
 * call graph (the page allocator, spinlocks, traps) gives up without naming the code that ends
 * the run, as Linux's panic() runs the panic notifier chain.
 */
void __attribute__((noreturn, format(printf, 1, 2))) panic(const char *fmt, ...);

#endif

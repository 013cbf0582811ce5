/* SPDX-License-Identifier: MIT */
/* The console's lock: one line at a time from any CPU. */
#ifndef KERNEL_CONSOLE_LOCK_H
#define KERNEL_CONSOLE_LOCK_H

/*
 * Make each console_write() (lib/console.h) one critical section between CPUs, with interrupts
 * off. Once this CPU's per-CPU data is in place (percpu_init()): the lock records its holder.
 */
void console_lock_init(void);

#endif

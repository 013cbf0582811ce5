/* SPDX-License-Identifier: MIT */
/* QEMU's isa-debug-exit device: a write ends QEMU with status (value << 1) | 1 (docs/output.md). */
#ifndef PLATFORM_PC_EXIT_PORT_H
#define PLATFORM_PC_EXIT_PORT_H

#include <stdint.h>

#include "arch/x86/io.h"

/* The port QEMU's runner gives the device (-device isa-debug-exit,iobase=0xf4,iosize=4). */
#define ISA_DEBUG_EXIT_PORT 0xf4

/* QEMU exits at once; real hardware, where nothing decodes the port, goes on. */
static inline void exit_port_write(uint32_t value)
{
	outl(ISA_DEBUG_EXIT_PORT, value);
}

#endif

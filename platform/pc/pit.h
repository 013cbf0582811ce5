/* SPDX-License-Identifier: MIT */
/* The 8254 PIT's channel 0 as a periodic source (Intel 8254 datasheet; its input is 1.193182 MHz).
 */
#ifndef PLATFORM_PC_PIT_H
#define PLATFORM_PC_PIT_H

#include <stdint.h>

#include "arch/x86/io.h"

#define PIT_INPUT_HZ 1193182u
#define PIT_PORT_CHANNEL0 0x40
#define PIT_PORT_COMMAND 0x43
#define PIT_SELECT_CHANNEL0 (0u << 6)
#define PIT_ACCESS_LATCH (0u << 4) /* latch the count for two reads, low byte first */
#define PIT_ACCESS_LOW_HIGH (3u << 4)
#define PIT_MODE_RATE (2u << 1) /* mode 2: a pulse on OUT each period */
#define PIT_MODE_ONE_SHOT (0u << 1) /* mode 0: OUT rises once, at the end of the count */
#define PIT_ISA_IRQ 0 /* channel 0's OUT is ISA IRQ 0 */

/* Channel 0 in mode 2 (or mode 0) with reload (0 is 65536). */
static inline void pit_start(uint8_t mode, uint16_t reload)
{
	outb(PIT_PORT_COMMAND, PIT_SELECT_CHANNEL0 | PIT_ACCESS_LOW_HIGH | mode);
	outb(PIT_PORT_CHANNEL0, (uint8_t)reload);
	outb(PIT_PORT_CHANNEL0, (uint8_t)(reload >> 8));
}

#endif

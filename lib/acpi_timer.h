/* SPDX-License-Identifier: MIT */
/* The timers ACPI describes: the FADT's PM timer and the HPET table. Pure parsing, no hardware. */
#ifndef LIB_ACPI_TIMER_H
#define LIB_ACPI_TIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/acpi.h"

/* Generic Address Structure (ACPI 6.5 §5.2.3.2), 12 bytes. */
#define ACPI_GAS_OFF_SPACE_ID 0 /* u8, ACPI_GAS_SPACE_* */
#define ACPI_GAS_OFF_BIT_WIDTH 1 /* u8 */
#define ACPI_GAS_OFF_ADDRESS 4 /* u64 */
#define ACPI_GAS_SIZE 12
#define ACPI_GAS_SPACE_MEMORY 0
#define ACPI_GAS_SPACE_IO 1

/* Fixed ACPI Description Table (ACPI 6.5 §5.2.9, Table 5.9); signature "FACP". */
#define ACPI_FADT_SIGNATURE "FACP"
#define ACPI_FADT_OFF_PM_TMR_BLK 76 /* u32 I/O port of the PM timer, 0 when there is none */
#define ACPI_FADT_OFF_PM_TMR_LEN 91 /* u8, 4 when the PM timer is supported, else 0 */
#define ACPI_FADT_OFF_FLAGS 112 /* u32, ACPI_FADT_FLAG_* */
#define ACPI_FADT_V1_SIZE 116 /* ACPI 1.0 ends after Flags */
#define ACPI_FADT_OFF_X_PM_TMR_BLK 208 /* GAS; ACPI 2.0+, used when its address is nonzero */
#define ACPI_FADT_X_PM_TMR_END (ACPI_FADT_OFF_X_PM_TMR_BLK + ACPI_GAS_SIZE)
#define ACPI_FADT_PM_TMR_LEN 4
#define ACPI_FADT_FLAG_TMR_VAL_EXT (1u << 8) /* the PM timer counts 32 bits, else 24 */
#define ACPI_FADT_FLAG_HW_REDUCED_ACPI (1u << 20) /* no fixed hardware: no PM timer */

/* The PM timer counts at 3.579545 MHz (ACPI 6.5 §4.8.3.3, PM_TMR; Linux PMTMR_TICKS_PER_SEC). */
#define ACPI_PM_TIMER_HZ 3579545u

/* IA-PC HPET Description Table (IA-PC HPET spec 1.0a §3.2.4); signature "HPET". */
#define ACPI_HPET_SIGNATURE "HPET"
#define ACPI_HPET_OFF_BLOCK_ID 36 /* u32, a copy of the capabilities register's low half */
#define ACPI_HPET_OFF_BASE_ADDRESS 40 /* GAS, system memory */
#define ACPI_HPET_OFF_NUMBER 52 /* u8 */
#define ACPI_HPET_SIZE 56

/* HPET registers (HPET spec 1.0a §2.3), offsets from the base address, 64 bits each. */
#define HPET_REG_CAPABILITIES 0x000
#define HPET_REG_CONFIGURATION 0x010
#define HPET_REG_MAIN_COUNTER 0x0f0
#define HPET_MMIO_SIZE 0x400 /* 1 KiB of registers (§2.3.1) */
#define HPET_CAPABILITIES_PERIOD_SHIFT 32 /* COUNTER_CLK_PERIOD, femtoseconds, bits 63:32 */
#define HPET_CAPABILITIES_COUNT_SIZE (1ull << 13) /* the main counter has 64 bits */
#define HPET_CONFIGURATION_ENABLE (1ull << 0) /* ENABLE_CNF: the main counter runs */
/* §2.3.4: the period is nonzero and at most 0x05F5E100 fs (100 ns, a 10 MHz counter). */
#define HPET_PERIOD_MAX_FS 100000000u
#define FEMTOSECONDS_PER_SECOND 1000000000000000ull

struct acpi_pm_timer {
	uint16_t port; /* I/O port of the 32-bit PM_TMR register */
	unsigned int bits; /* 24 or 32 */
	bool extended; /* the port came from X_PM_TMR_BLK, not PM_TMR_BLK */
};

struct acpi_hpet {
	uint64_t address; /* physical address of the register block */
	uint8_t number; /* the HPET's sequence number */
};

enum acpi_timer_error {
	ACPI_TIMER_OK,
	ACPI_TIMER_BAD_TABLE, /* wrong signature, short Length, or bad checksum */
	ACPI_TIMER_HW_REDUCED, /* the FADT says HW_REDUCED_ACPI: no fixed hardware */
	ACPI_TIMER_NONE, /* no PM timer block, or an HPET table without an address */
	ACPI_TIMER_NOT_IO, /* X_PM_TMR_BLK is not in system I/O space, or beyond 16 bits */
	ACPI_TIMER_NOT_MEMORY, /* the HPET's base address is not in system memory */
};

/* A short human string for error, e.g. "the FADT has no PM timer block"; never NULL. */
const char *acpi_timer_error_name(enum acpi_timer_error error);

/*
 * The PM timer of the FADT in table[0, length): the signature, a Length of at least
 * ACPI_FADT_V1_SIZE and within length, and the checksum, then, as Linux's acpi_parse_fadt()
 * does, X_PM_TMR_BLK when the table reaches it and its address is nonzero (it must then be in
 * system I/O space), else PM_TMR_BLK with PM_TMR_LEN 4. TMR_VAL_EXT gives the width. *timer is
 * written only on ACPI_TIMER_OK.
 */
enum acpi_timer_error acpi_fadt_pm_timer(const void *table, size_t length,
					 struct acpi_pm_timer *timer);

/*
 * The HPET table in table[0, length): signature, a Length of ACPI_HPET_SIZE or more within
 * length, checksum, and a nonzero base address in system memory. *hpet is written only on
 * ACPI_TIMER_OK.
 */
enum acpi_timer_error acpi_hpet_parse(const void *table, size_t length, struct acpi_hpet *hpet);

/*
 * The HPET counter's frequency in Hz from its capabilities register, rounded to nearest; 0 when
 * the period is 0 or above HPET_PERIOD_MAX_FS, which the spec forbids (absent hardware reads
 * all ones).
 */
uint64_t hpet_hz(uint64_t capabilities);

/* Ticks from before to after of an up-counter bits wide (1 to 64) that wrapped at most once. */
static inline uint64_t counter_delta(uint64_t before, uint64_t after, unsigned int bits)
{
	uint64_t mask = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;

	return (after - before) & mask;
}

#endif

/* SPDX-License-Identifier: MIT */
/* Host checks of the emulated register file: a named profile, a fresh file, and MSR accesses. */
#ifndef TESTS_HOST_EMULATOR_CHECKS_H
#define TESTS_HOST_EMULATOR_CHECKS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "emulator/profile.h"
#include "emulator/registers.h"
#include "tests/host/host_test.h"

/* The profile of that name; a check fails, and an empty one stands in, where there is none. */
static inline struct emulator_profile named(const char *name)
{
	const struct emulator_profile *p = emulator_profile_find(name);

	host_checkf(p != NULL, "no profile %s", name);
	return p ? *p : (struct emulator_profile){ .name = "missing" };
}

/* The profile's registers as after reset. */
static inline struct emulator_registers fresh(const struct emulator_profile *p)
{
	struct emulator_registers r;

	emulator_registers_reset(&r, p);
	return r;
}

/* WRMSR raises #GP and changes nothing. */
#define expect_write_gp(p, r, msr, value) expect_write_gp_at(__LINE__, p, r, msr, value)
static inline void expect_write_gp_at(int line, const struct emulator_profile *p,
				      struct emulator_registers *r, uint32_t msr, uint64_t value)
{
	struct emulator_registers before = *r;

	host_checkf_at(__FILE__, line, emulator_write_msr(r, p, msr, value),
		       "%s: WRMSR %#x <- %#llx did not raise #GP", p->name, msr,
		       (unsigned long long)value);
	host_checkf_at(__FILE__, line, memcmp(&before, r, sizeof(before)) == 0,
		       "%s: WRMSR %#x <- %#llx raised #GP but changed the registers", p->name, msr,
		       (unsigned long long)value);
}

/* RDMSR raises #GP. */
#define expect_read_gp(p, r, msr) expect_read_gp_at(__LINE__, p, r, msr)
static inline void expect_read_gp_at(int line, const struct emulator_profile *p,
				     const struct emulator_registers *r, uint32_t msr)
{
	uint64_t value = 0;

	host_checkf_at(__FILE__, line, emulator_read_msr(r, p, msr, &value),
		       "%s: RDMSR %#x did not raise #GP", p->name, msr);
}

/* RDMSR returns expected. */
#define expect_read(p, r, msr, expected) expect_read_at(__LINE__, p, r, msr, expected)
static inline void expect_read_at(int line, const struct emulator_profile *p,
				  const struct emulator_registers *r, uint32_t msr,
				  uint64_t expected)
{
	uint64_t value = 0;
	bool gp = emulator_read_msr(r, p, msr, &value);

	host_checkf_at(__FILE__, line, !gp && value == expected,
		       "%s: RDMSR %#x: expected %#llx, got %s%#llx", p->name, msr,
		       (unsigned long long)expected, gp ? "#GP " : "", (unsigned long long)value);
}

/* WRMSR is accepted, and RDMSR then returns expected. */
#define expect_write(p, r, msr, value, expected) \
	expect_write_at(__LINE__, p, r, msr, value, expected)
static inline void expect_write_at(int line, const struct emulator_profile *p,
				   struct emulator_registers *r, uint32_t msr, uint64_t value,
				   uint64_t expected)
{
	host_checkf_at(__FILE__, line, !emulator_write_msr(r, p, msr, value),
		       "%s: WRMSR %#x <- %#llx raised #GP", p->name, msr,
		       (unsigned long long)value);
	expect_read_at(line, p, r, msr, expected);
}

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The TSC frequency: read from CPUID 0x15/0x16 or the hypervisor leaf 0x40000010, else measured
 * against the PIT (Intel 8254 data sheet), the ACPI PM timer or the HPET, in that order
 * (docs/hardware-facts.md, "TSC frequency"). tsc.source= forces one.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/io.h"
#include "arch/x86/paging.h"
#include "arch/x86/tsc.h"
#include "lib/acpi_timer.h"
#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/ktap.h"
#include "lib/string.h"
#include "platform/pc/acpi_tables.h"
#include "platform/pc/hpet.h"
#include "platform/pc/pit.h"
#include "platform/pc/tsc_calibrate.h"

#define PIT_RELOAD 0xffffu

#define CALIBRATION_MS 20
#define SPIN_LIMIT 50000000u
/*
 * A counter that reads the same this many times in a row is not counting: each read takes at
 * least one I/O or uncached MMIO access, far longer than a tick of any of them (PIT 838 ns,
 * PM timer 279 ns, HPET at most 100 ns). An absent device reads all ones.
 */
#define STUCK_READS 10000u
/* Below this the reference did not count: no TSC runs under 10 MHz. */
#define TSC_HZ_MINIMUM 10000000ull

#define TSC_WHY_MAX 160

enum tsc_source_id {
	TSC_SOURCE_AUTO, /* the first source that answers, in table order */
	TSC_SOURCE_CPUID,
	TSC_SOURCE_HYPERVISOR,
	TSC_SOURCE_PIT,
	TSC_SOURCE_PMTIMER,
	TSC_SOURCE_HPET,
	TSC_SOURCE_COUNT,
};

/* Each returns the TSC's Hz and sets *name, or returns 0 and writes why into why. */
typedef uint64_t (*tsc_calibrator)(const char **name, char *why, size_t size);

static uint64_t hz;
static const char *source = "none";
static enum tsc_source_id forced;
static const void *rsdp;
static size_t rsdp_length;

/*
 * SDM Vol. 2A, CPUID leaf 15H: TSC Hz = ECX * EBX / EAX, ECX the crystal's Hz. Where ECX is 0,
 * Linux's native_calibrate_tsc() takes the crystal from leaf 16H's base MHz (EAX) as
 * base_hz * EAX / EBX, which makes the TSC run at the base frequency.
 */
static uint64_t tsc_hz_from_cpuid(const char **name, char *why, size_t size)
{
	uint32_t max_leaf = cpuid(0, 0).eax;
	struct cpuid_result leaf;
	uint64_t base_hz;

	if (max_leaf < CPUID_LEAF_TSC) {
		format(why, size, "max basic leaf 0x%x, below 0x15", max_leaf);
		return 0;
	}
	leaf = cpuid(CPUID_LEAF_TSC, 0);
	if (leaf.eax == 0 || leaf.ebx == 0) {
		format(why, size, "leaf 0x15 gives no TSC/crystal ratio (EAX=%u EBX=%u)", leaf.eax,
		       leaf.ebx);
		return 0;
	}
	if (leaf.ecx != 0) {
		*name = "cpuid-0x15";
		return (uint64_t)leaf.ecx * leaf.ebx / leaf.eax;
	}
	base_hz = max_leaf >= CPUID_LEAF_FREQUENCY
			  ? (uint64_t)(cpuid(CPUID_LEAF_FREQUENCY, 0).eax & CPUID_16_EAX_BASE_MHZ) *
				    1000000
			  : 0;
	if (base_hz == 0) {
		format(why, size, "leaf 0x15 gives no crystal Hz and leaf 0x16 no base MHz");
		return 0;
	}
	*name = "cpuid-0x16";
	return base_hz;
}

/* The VMware convention, which KVM also follows: leaf 0x40000010 EAX is the TSC in kHz. */
static uint64_t tsc_hz_from_hypervisor(const char **name, char *why, size_t size)
{
	uint32_t max_leaf, khz;

	if (!(cpuid(1, 0).ecx & CPUID_1_ECX_HYPERVISOR)) {
		format(why, size, "no hypervisor (CPUID.1:ECX.HYPERVISOR=0)");
		return 0;
	}
	max_leaf = cpuid(CPUID_LEAF_HYPERVISOR, 0).eax;
	if (max_leaf < CPUID_LEAF_HYPERVISOR_TIMING) {
		format(why, size, "max hypervisor leaf 0x%x, below 0x40000010", max_leaf);
		return 0;
	}
	khz = cpuid(CPUID_LEAF_HYPERVISOR_TIMING, 0).eax;
	if (khz == 0) {
		format(why, size, "leaf 0x40000010 gives 0 kHz");
		return 0;
	}
	*name = "hypervisor-leaf";
	return (uint64_t)khz * 1000;
}

/*
 * A reference counter: read(context) gives its value, delta(before, after, context) the ticks
 * between two reads that are less than one wrap apart, at hz ticks a second.
 */
struct reference_counter {
	uint64_t (*read)(const void *context);
	uint64_t (*delta)(uint64_t before, uint64_t after, const void *context);
	const void *context;
	uint64_t hz;
	const char *what; /* for the reason: "channel 0", "the PM timer" */
};

/* One reading of the counter and the TSC when it was taken. */
struct reference_sample {
	uint64_t tsc; /* midway between the TSC reads that bracket the counter's */
	uint64_t value;
};

/*
 * The best of SAMPLE_TRIES readings: the one whose bracketing TSC reads lie closest together,
 * so that an interruption (an SMI, or the host descheduling a virtual CPU) between the TSC and
 * the counter is not counted, as Linux's tsc_read_refs() retries when the reads lie more than
 * SMI_TRESHOLD apart.
 */
#define SAMPLE_TRIES 5

static struct reference_sample reference_sample(const struct reference_counter *counter)
{
	struct reference_sample best = { 0, 0 };
	uint64_t best_width = UINT64_MAX;

	for (unsigned int i = 0; i < SAMPLE_TRIES; i++) {
		uint64_t before = rdtsc_ordered();
		uint64_t value = counter->read(counter->context);
		uint64_t after = rdtsc_ordered();

		if (after - before < best_width) {
			best_width = after - before;
			best = (struct reference_sample){ before + (after - before) / 2, value };
		}
	}
	return best;
}

/*
 * Count TSC cycles while the counter counts CALIBRATION_MS, polling it so that no wrap goes
 * unseen. A counter that does not change in STUCK_READS reads is not there.
 */
static uint64_t tsc_hz_against(const struct reference_counter *counter, char *why, size_t size)
{
	uint64_t target = counter->hz / 1000 * CALIBRATION_MS, elapsed = 0, previous, now, result;
	uint32_t spins = 0, stuck = 0;
	struct reference_sample first, last;

	first = reference_sample(counter);
	previous = first.value;
	while (elapsed < target) {
		now = counter->read(counter->context);
		stuck = now == previous ? stuck + 1 : 0;
		if (stuck == STUCK_READS || ++spins == SPIN_LIMIT) {
			format(why, size, "%s does not count (reads 0x%llx)", counter->what,
			       (unsigned long long)now);
			return 0;
		}
		elapsed += counter->delta(previous, now, counter->context);
		previous = now;
	}
	last = reference_sample(counter);
	elapsed += counter->delta(previous, last.value, counter->context);
	result = (last.tsc - first.tsc) * counter->hz / elapsed;
	if (result < TSC_HZ_MINIMUM) {
		format(why, size, "measured %llu Hz against %s, below 10 MHz",
		       (unsigned long long)result, counter->what);
		return 0;
	}
	return result;
}

static uint64_t pit_channel0_read(const void *context)
{
	uint8_t low, high;

	(void)context;
	outb(PIT_PORT_COMMAND, PIT_SELECT_CHANNEL0 | PIT_ACCESS_LATCH);
	low = inb(PIT_PORT_CHANNEL0);
	high = inb(PIT_PORT_CHANNEL0);
	return (uint16_t)(high << 8 | low);
}

/* Mode 2 counts down from PIT_RELOAD to 1, then reloads. */
static uint64_t pit_channel0_delta(uint64_t before, uint64_t after, const void *context)
{
	(void)context;
	return after <= before ? before - after : before + PIT_RELOAD - after;
}

/*
 * PIT channel 0 in mode 2, polled through latch commands: unlike channel 2 it needs no port
 * 0x61, which QEMU's microvm lacks. The 8259 must be masked (apic_init() does it), or IRQ0
 * would arrive once interrupts are on. The poll must see the counter at least every 55 ms.
 */
static uint64_t tsc_hz_from_pit(const char **name, char *why, size_t size)
{
	struct reference_counter counter = { pit_channel0_read, pit_channel0_delta, NULL,
					     PIT_INPUT_HZ, "channel 0" };
	uint64_t result;

	pit_start(PIT_MODE_RATE, (uint16_t)PIT_RELOAD);
	result = tsc_hz_against(&counter, why, size);
	if (result)
		*name = "pit";
	return result;
}

/* The PM timer's register is 32 bits wide; a 24-bit timer's top byte is reserved. */
static uint64_t pm_timer_read(const void *context)
{
	const struct acpi_pm_timer *timer = context;

	return counter_delta(0, inl(timer->port), timer->bits);
}

static uint64_t pm_timer_delta(uint64_t before, uint64_t after, const void *context)
{
	return counter_delta(before, after, ((const struct acpi_pm_timer *)context)->bits);
}

static uint64_t tsc_hz_from_pm_timer(const char **name, char *why, size_t size)
{
	struct acpi_pm_timer timer;
	struct reference_counter counter = { pm_timer_read, pm_timer_delta, &timer,
					     ACPI_PM_TIMER_HZ, "the PM timer" };
	enum acpi_timer_error timer_error;
	enum acpi_error error;
	const void *fadt;
	size_t length;
	uint64_t result;

	error = acpi_tables_find(rsdp, rsdp_length, ACPI_FADT_SIGNATURE, &fadt, &length);
	if (error) {
		format(why, size, "no FADT: %s", acpi_error_name(error));
		return 0;
	}
	timer_error = acpi_fadt_pm_timer(fadt, length, &timer);
	if (timer_error) {
		format(why, size, "FADT: %s", acpi_timer_error_name(timer_error));
		return 0;
	}
	result = tsc_hz_against(&counter, why, size);
	if (result)
		*name = "pmtimer";
	else
		format(why + strlen(why), size - strlen(why), " at port 0x%x", timer.port);
	return result;
}

/* The main counter's low 32 bits: a 32-bit HPET has no more, and they wrap after 42 s or more. */
static uint64_t hpet_counter_read(const void *context)
{
	return hpet_read32((volatile void *)context, HPET_REG_MAIN_COUNTER);
}

static uint64_t hpet_counter_delta(uint64_t before, uint64_t after, const void *context)
{
	(void)context;
	return counter_delta(before, after, 32);
}

/* The HPET's main counter, started if the firmware left it stopped, and left as found. */
static uint64_t tsc_hz_from_hpet(const char **name, char *why, size_t size)
{
	struct reference_counter counter = { hpet_counter_read, hpet_counter_delta, NULL, 0,
					     "the HPET" };
	struct acpi_hpet hpet;
	enum acpi_timer_error timer_error;
	enum acpi_error error;
	volatile void *base;
	uint64_t configuration, result;
	const void *table;
	size_t length;

	error = acpi_tables_find(rsdp, rsdp_length, ACPI_HPET_SIGNATURE, &table, &length);
	if (error) {
		format(why, size, "no HPET table: %s", acpi_error_name(error));
		return 0;
	}
	timer_error = acpi_hpet_parse(table, length, &hpet);
	if (timer_error) {
		format(why, size, "HPET table: %s", acpi_timer_error_name(timer_error));
		return 0;
	}
	if (hpet.address < DIRECT_MAP_UNCACHED ||
	    hpet.address > DIRECT_MAP_LIMIT - HPET_MMIO_SIZE) {
		format(why, size, "the HPET at 0x%llx is outside the uncached direct map",
		       (unsigned long long)hpet.address);
		return 0;
	}
	base = phys_to_virt(hpet.address);
	counter.context = (const void *)base;
	counter.hz = hpet_hz(hpet_read64(base, HPET_REG_CAPABILITIES));
	if (counter.hz == 0) {
		format(why, size, "the HPET at 0x%llx has no valid period (capabilities 0x%llx)",
		       (unsigned long long)hpet.address,
		       (unsigned long long)hpet_read64(base, HPET_REG_CAPABILITIES));
		return 0;
	}
	configuration = hpet_read64(base, HPET_REG_CONFIGURATION);
	hpet_write64(base, HPET_REG_CONFIGURATION, configuration | HPET_CONFIGURATION_ENABLE);
	result = tsc_hz_against(&counter, why, size);
	hpet_write64(base, HPET_REG_CONFIGURATION, configuration);
	if (result)
		*name = "hpet";
	return result;
}

/* In the order tried (docs/hardware-facts.md); the names tsc.source= takes. */
static const struct {
	const char *option;
	tsc_calibrator calibrate;
} sources[TSC_SOURCE_COUNT] = {
	[TSC_SOURCE_CPUID] = { "cpuid", tsc_hz_from_cpuid },
	[TSC_SOURCE_HYPERVISOR] = { "hypervisor", tsc_hz_from_hypervisor },
	[TSC_SOURCE_PIT] = { "pit", tsc_hz_from_pit },
	[TSC_SOURCE_PMTIMER] = { "pmtimer", tsc_hz_from_pm_timer },
	[TSC_SOURCE_HPET] = { "hpet", tsc_hz_from_hpet },
};

static bool parse_source(const struct cmdline_option *opt, const char *value, char *err,
			 size_t err_size)
{
	(void)opt;
	for (enum tsc_source_id id = TSC_SOURCE_CPUID; id < TSC_SOURCE_COUNT; id++) {
		if (value && strcmp(value, sources[id].option) == 0) {
			forced = id;
			return true;
		}
	}
	format(err, err_size, "'%s' is not a TSC source: cpuid, hypervisor, pit, pmtimer or hpet",
	       value ? value : "");
	return false;
}

CMDLINE_OPTION(option_tsc_source, .name = "tsc.source",
	       .syntax = "cpuid|hypervisor|pit|pmtimer|hpet", .parse = parse_source);

/* Find the frequency, and give it to arch/x86/tsc.h; 0 and "none" when nothing answers. */
static bool calibrate(char *error, size_t size)
{
	char why[TSC_WHY_MAX];

	if (forced) {
		why[0] = '\0';
		hz = sources[forced].calibrate(&source, why, sizeof(why));
		if (!hz)
			format(error, size, "option 'tsc.source': %s: %s", sources[forced].option,
			       why);
		return hz != 0;
	}
	for (enum tsc_source_id id = TSC_SOURCE_CPUID; id < TSC_SOURCE_COUNT; id++) {
		why[0] = '\0';
		hz = sources[id].calibrate(&source, why, sizeof(why));
		if (hz)
			return true;
		ktap_diag(0, "tsc: %s: %s", sources[id].option, why);
	}
	source = "none";
	format(error, size, "no TSC frequency source: tried cpuid, hypervisor, pit, pmtimer, hpet");
	return false;
}

bool tsc_calibrate(const void *loader_rsdp, size_t loader_rsdp_length, char *error, size_t size)
{
	bool found;

	rsdp = loader_rsdp;
	rsdp_length = loader_rsdp_length;
	found = calibrate(error, size);
	tsc_set_hz(hz, source);
	return found;
}

bool tsc_source_forced(void)
{
	return forced != TSC_SOURCE_AUTO;
}

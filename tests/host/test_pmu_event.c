/* SPDX-License-Identifier: MIT */
/* Host tests of pmu/event.c: exact EVTSEL and FIXED_CTR_CTRL bits, and round trips. */
#include <stdbool.h>
#include <stdint.h>

#include "pmu/event.h"
#include "tests/host/host_test.h"

static bool events_equal(const struct pmu_event *a, const struct pmu_event *b)
{
	return a->event == b->event && a->umask == b->umask && a->cmask == b->cmask &&
	       a->user == b->user && a->kernel == b->kernel && a->edge == b->edge &&
	       a->invert == b->invert && a->interrupt == b->interrupt &&
	       a->pebs_adaptive == b->pebs_adaptive;
}

HOST_TEST(pmu_evtsel_bits_are_at_the_sdm_positions)
{
	/* Written out bit by bit from the SDM IA32_PERFEVTSELx layout, not from the constants. */
	host_check_eq_u64(1ull << 16, EVTSEL_USR);
	host_check_eq_u64(1ull << 17, EVTSEL_OS);
	host_check_eq_u64(1ull << 18, EVTSEL_EDGE);
	host_check_eq_u64(1ull << 20, EVTSEL_INT);
	host_check_eq_u64(1ull << 22, EVTSEL_EN);
	host_check_eq_u64(1ull << 23, EVTSEL_INV);
	host_check_eq_u64(0x186, MSR_IA32_PERFEVTSEL0);
	host_check_eq_u64(0x38d, MSR_IA32_FIXED_CTR_CTRL);
	host_check_eq_u64(0x38f, MSR_IA32_PERF_GLOBAL_CTRL);
}

HOST_TEST(pmu_evtsel_encodes_known_values)
{
	/* INST_RETIRED.ANY_P (0xc0/0x00), user and kernel, enabled: Linux perf's 0x4300c0. */
	struct pmu_event instructions = { .event = 0xc0, .user = true, .kernel = true };
	/* UOPS_ISSUED.ANY with cmask 1, inverted, edge: stall periods, user only, PMI. */
	struct pmu_event stalls = { .event = 0x0e,
				    .umask = 0x01,
				    .cmask = 1,
				    .user = true,
				    .edge = true,
				    .invert = true,
				    .interrupt = true };
	struct pmu_event none = { 0 };

	host_check_eq_u64(0x4300c0, pmu_evtsel_encode(&instructions, true));
	host_check_eq_u64(0x0300c0, pmu_evtsel_encode(&instructions, false));
	host_check_eq_u64(0x01d5010e, pmu_evtsel_encode(&stalls, true));
	host_check_eq_u64(0, pmu_evtsel_encode(&none, false));
	host_check_eq_u64(0x400000, pmu_evtsel_encode(&none, true));
}

/*
 * A PEBS event never interrupts at its overflow: "Do NOT set local counter PMI/INT bit" (SDM
 * "Requirements to Program PEBS"), as Linux's intel_pmu_pebs_enable() clears INT and
 * intel_pmu_enable_fixed() leaves the fixed counter's PMI bit (bit 3 + 4i) clear.
 */
HOST_TEST(pmu_a_pebs_event_encodes_no_int_and_no_fixed_pmi_bit)
{
	struct pmu_event sampled = { .event = 0xc0, .kernel = true, .interrupt = true };
	struct pmu_event pebs = sampled;

	pebs.pebs = true;
	host_check_eq_u64(0x5200c0, pmu_evtsel_encode(&sampled, true));
	host_check_eq_u64(0x4200c0, pmu_evtsel_encode(&pebs, true));
	host_check_eq_u64(0x900, pmu_fixed_ctrl_encode(2, &sampled));
	host_check_eq_u64(0x100, pmu_fixed_ctrl_encode(2, &pebs));
}

HOST_TEST(pmu_evtsel_round_trips_every_field_combination)
{
	static const uint8_t bytes[] = { 0, 1, 0x3c, 0x80, 0xff };

	for (unsigned int flags = 0; flags < 128; flags++) {
		for (unsigned int b = 0; b < sizeof(bytes) * sizeof(bytes); b++) {
			struct pmu_event event = {
				.event = bytes[b % sizeof(bytes)],
				.umask = bytes[b / sizeof(bytes)],
				.cmask = bytes[(b + flags) % sizeof(bytes)],
				.user = flags & 1,
				.kernel = flags & 2,
				.edge = flags & 4,
				.invert = flags & 8,
				.interrupt = flags & 16,
				.pebs_adaptive = flags & 64,
			};
			bool enable = flags & 32, decoded_enable;
			struct pmu_event decoded;
			uint64_t evtsel = pmu_evtsel_encode(&event, enable);

			decoded_enable = pmu_evtsel_decode(evtsel, &decoded);
			if (!host_checkf(events_equal(&event, &decoded) && decoded_enable == enable,
					 "flags %#x bytes %u: 0x%llx did not round-trip", flags, b,
					 (unsigned long long)evtsel))
				return;
		}
	}
}

HOST_TEST(pmu_evtsel_decode_ignores_unnamed_bits)
{
	/* PC (19), ANY (21) and the upper half but bit 34 are not part of struct pmu_event. */
	uint64_t other = (1ull << 19) | (1ull << 21) | (0xffffffffull << 32 & ~EVTSEL_ADAPTIVE);
	uint64_t evtsel = 0x004300c0 | other;
	struct pmu_event event;

	host_check(pmu_evtsel_decode(evtsel, &event));
	host_check_eq_u64(0x004300c0, pmu_evtsel_encode(&event, true));
	host_check(!pmu_evtsel_decode(other, &event));
	host_check_eq_u64(0, pmu_evtsel_encode(&event, false));
}

HOST_TEST(pmu_fixed_ctrl_fields_are_four_bits_per_counter)
{
	struct pmu_event user_only = { .user = true };
	struct pmu_event everything = { .user = true, .kernel = true, .interrupt = true };
	struct pmu_event kernel_only = { .kernel = true };
	struct pmu_event both = { .user = true, .kernel = true };

	host_check_eq_u64(0xf, pmu_fixed_ctrl_mask(0));
	host_check_eq_u64(0xf000, pmu_fixed_ctrl_mask(3));
	host_check_eq_u64(0x2, pmu_fixed_ctrl_encode(0, &user_only));
	host_check_eq_u64(0xb0, pmu_fixed_ctrl_encode(1, &everything));
	host_check_eq_u64(0x100, pmu_fixed_ctrl_encode(2, &kernel_only));
	/* Linux's usual value for three fixed counters counting everywhere: 0x333. */
	host_check_eq_u64(0x333, pmu_fixed_ctrl_encode(0, &both) | pmu_fixed_ctrl_encode(1, &both) |
					 pmu_fixed_ctrl_encode(2, &both));
	host_check_eq_u64(1ull << 32, pmu_global_fixed(0));
	host_check_eq_u64(1ull << 7, pmu_global_gp(7));
}

HOST_TEST(pmu_fixed_ctrl_round_trips_and_ignores_other_counters)
{
	for (unsigned int counter = 0; counter < PMU_MAX_FIXED; counter++) {
		for (unsigned int flags = 0; flags < 8; flags++) {
			struct pmu_event event = { .user = flags & 1,
						   .kernel = flags & 2,
						   .interrupt = flags & 4 };
			/* Every other field full, and AnyThread set in this one. */
			uint64_t noise =
				~pmu_fixed_ctrl_mask(counter) |
				(FIXED_CTRL_ANY_THREAD << (FIXED_CTRL_FIELD_SIZE * counter));
			uint64_t ctrl = pmu_fixed_ctrl_encode(counter, &event);
			struct pmu_event decoded;
			bool counts;

			host_check_eq_u64(0, ctrl & ~pmu_fixed_ctrl_mask(counter));
			counts = pmu_fixed_ctrl_decode(ctrl | noise, counter, &decoded);
			host_checkf(events_equal(&event, &decoded) &&
					    counts == (event.user || event.kernel),
				    "fixed %u flags %#x", counter, flags);
		}
	}
}

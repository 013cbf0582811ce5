/* SPDX-License-Identifier: MIT */
/* Encoding events into IA32_PERFEVTSELx and IA32_FIXED_CTR_CTRL values, and back. */
#include <stdbool.h>
#include <stdint.h>

#include "pmu/event.h"

uint64_t pmu_evtsel_encode(const struct pmu_event *event, bool enable)
{
	uint64_t evtsel = ((uint64_t)event->event << EVTSEL_EVENT_SHIFT) |
			  ((uint64_t)event->umask << EVTSEL_UMASK_SHIFT) |
			  ((uint64_t)event->cmask << EVTSEL_CMASK_SHIFT);

	if (event->user)
		evtsel |= EVTSEL_USR;
	if (event->kernel)
		evtsel |= EVTSEL_OS;
	if (event->edge)
		evtsel |= EVTSEL_EDGE;
	if (event->invert)
		evtsel |= EVTSEL_INV;
	if (event->interrupt && !event->pebs)
		evtsel |= EVTSEL_INT;
	if (event->pebs_adaptive)
		evtsel |= EVTSEL_ADAPTIVE;
	if (enable)
		evtsel |= EVTSEL_EN;
	return evtsel;
}

bool pmu_evtsel_decode(uint64_t evtsel, struct pmu_event *event)
{
	*event = (struct pmu_event){
		.event = (uint8_t)((evtsel & EVTSEL_EVENT_MASK) >> EVTSEL_EVENT_SHIFT),
		.umask = (uint8_t)((evtsel & EVTSEL_UMASK_MASK) >> EVTSEL_UMASK_SHIFT),
		.cmask = (uint8_t)((evtsel & EVTSEL_CMASK_MASK) >> EVTSEL_CMASK_SHIFT),
		.user = (evtsel & EVTSEL_USR) != 0,
		.kernel = (evtsel & EVTSEL_OS) != 0,
		.edge = (evtsel & EVTSEL_EDGE) != 0,
		.invert = (evtsel & EVTSEL_INV) != 0,
		.interrupt = (evtsel & EVTSEL_INT) != 0,
		.pebs_adaptive = (evtsel & EVTSEL_ADAPTIVE) != 0,
	};
	return (evtsel & EVTSEL_EN) != 0;
}

uint64_t pmu_fixed_ctrl_mask(unsigned int counter)
{
	return FIXED_CTRL_FIELD_MASK << (FIXED_CTRL_FIELD_SIZE * counter);
}

uint64_t pmu_fixed_ctrl_encode(unsigned int counter, const struct pmu_event *event)
{
	uint64_t field = 0;

	if (event->kernel)
		field |= FIXED_CTRL_OS;
	if (event->user)
		field |= FIXED_CTRL_USR;
	if (event->interrupt && !event->pebs)
		field |= FIXED_CTRL_PMI;
	return field << (FIXED_CTRL_FIELD_SIZE * counter);
}

bool pmu_fixed_ctrl_decode(uint64_t ctrl, unsigned int counter, struct pmu_event *event)
{
	uint64_t field = (ctrl >> (FIXED_CTRL_FIELD_SIZE * counter)) & FIXED_CTRL_FIELD_MASK;

	*event = (struct pmu_event){
		.user = (field & FIXED_CTRL_USR) != 0,
		.kernel = (field & FIXED_CTRL_OS) != 0,
		.interrupt = (field & FIXED_CTRL_PMI) != 0,
	};
	return (field & (FIXED_CTRL_OS | FIXED_CTRL_USR)) != 0;
}

struct pmu_event pmu_generic_event(bool amd, enum pmu_generic_event which)
{
	static const uint8_t intel_map[] = {
		[PMU_GENERIC_CYCLES] = 0x3c,
		[PMU_GENERIC_INSTRUCTIONS] = 0xc0,
		[PMU_GENERIC_BRANCHES] = 0xc4,
		[PMU_GENERIC_BRANCH_MISSES] = 0xc5,
	};
	static const uint8_t amd_map[] = {
		[PMU_GENERIC_CYCLES] = 0x76,
		[PMU_GENERIC_INSTRUCTIONS] = 0xc0,
		[PMU_GENERIC_BRANCHES] = 0xc2,
		[PMU_GENERIC_BRANCH_MISSES] = 0xc3,
	};
	struct pmu_event event = { 0 };

	if ((unsigned int)which < sizeof(intel_map) / sizeof(intel_map[0]))
		event.event = amd ? amd_map[which] : intel_map[which];
	return event;
}

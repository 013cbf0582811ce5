/* SPDX-License-Identifier: MIT */
/* boot suite: the boot information copied from the loader is sane. */
#include "arch/x86/paging.h"
#include "boot/boot_info.h"
#include "lib/string.h"
#include "runner/options.h"
#include "runner/test.h"

TEST(boot, memory_map_is_sane)
{
	const struct boot_info *info = boot_info_get();
	extern const char __kernel_physical_start[], __kernel_physical_end[];
	uint64_t kernel_start = (uint64_t)__kernel_physical_start;
	uint64_t kernel_end = (uint64_t)__kernel_physical_end;
	bool kernel_in_available = false;

	check(info->region_count > 0, "%zu regions", info->region_count);
	for (size_t i = 0; i < info->region_count; i++) {
		const struct memory_region *a = &info->regions[i];

		check(a->length > 0, "region %zu is empty", i);
		check(a->base + a->length > a->base, "region %zu wraps", i);
		if (a->type == MEMORY_AVAILABLE && a->base <= kernel_start &&
		    a->base + a->length >= kernel_end)
			kernel_in_available = true;
		for (size_t j = 0; j < i; j++) {
			const struct memory_region *b = &info->regions[j];
			bool overlap =
				a->base < b->base + b->length && b->base < a->base + a->length;

			check(!(overlap && a->type == MEMORY_AVAILABLE &&
				b->type == MEMORY_AVAILABLE),
			      "available regions %zu and %zu overlap", j, i);
		}
	}
	check(kernel_in_available, "kernel 0x%llx-0x%llx is not in available memory",
	      (unsigned long long)kernel_start, (unsigned long long)kernel_end);
}

TEST(boot, command_line_was_parsed)
{
	const struct boot_info *info = boot_info_get();
	struct run_options parsed = run_options;
	char error[128] = "";

	/* Parsing the saved line again must succeed and give the options the run uses. */
	check(options_parse(info->cmdline, error, sizeof(error)), "%s", error);
	check(memcmp(&parsed, &run_options, sizeof(parsed)) == 0, "options differ on re-parse");
	check(info->protocol == 1 || info->protocol == 2, "multiboot%u", info->protocol);
	check(run_options.timeout_ms >= 1 && run_options.timeout_ms <= 600000, "timeout %llu ms",
	      (unsigned long long)run_options.timeout_ms);
}

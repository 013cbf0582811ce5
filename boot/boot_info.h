/* SPDX-License-Identifier: MIT */
/* What the boot loader told us, copied out of its multiboot1 or multiboot2 information. */
#ifndef BOOT_BOOT_INFO_H
#define BOOT_BOOT_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/pfa.h"
#include "lib/cmdline.h"

#define BOOT_REGIONS_MAX 64
#define BOOT_LOADER_NAME_MAX 64
#define BOOT_RSDP_MAX 36 /* ACPI 2.0 RSDP */

struct boot_info {
	unsigned int protocol; /* 1 or 2 */
	char cmdline[CMDLINE_MAX];
	char loader_name[BOOT_LOADER_NAME_MAX];
	struct memory_region regions[BOOT_REGIONS_MAX];
	size_t region_count;
	uint8_t rsdp[BOOT_RSDP_MAX]; /* for SMP bring-up; rsdp_length 0 when absent */
	size_t rsdp_length;
};

/*
 * Copy the loader's information (at physical info_phys) into *info, before anything else
 * uses free memory: GRUB may leave it in memory that is not ours. On failure (a bad magic,
 * no memory map, a command line of CMDLINE_MAX or more) return false with the reason in err;
 * info->cmdline then holds what fits of the line (its first CMDLINE_MAX - 1 characters).
 */
bool boot_info_copy(uint32_t magic, uint32_t info_phys, struct boot_info *info, char *err,
		    size_t err_size);

/* The copy start_kernel() made. */
const struct boot_info *boot_info_get(void);

#endif

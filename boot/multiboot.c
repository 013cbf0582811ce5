/* SPDX-License-Identifier: MIT */
/* Multiboot 0.6.96 and 2.0 boot information: the command line, the memory map, the RSDP. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/paging.h"
#include "boot/boot_info.h"
#include "lib/format.h"
#include "lib/string.h"

#define MB1_BOOTLOADER_MAGIC 0x2badb002
#define MB1_INFO_CMDLINE (1u << 2)
#define MB1_INFO_MEMORY_MAP (1u << 6)
#define MB1_INFO_LOADER_NAME (1u << 9)

#define MB2_BOOTLOADER_MAGIC 0x36d76289
#define MB2_TAG_END 0
#define MB2_TAG_CMDLINE 1
#define MB2_TAG_LOADER_NAME 2
#define MB2_TAG_MEMORY_MAP 6
#define MB2_TAG_ACPI_OLD 14
#define MB2_TAG_ACPI_NEW 15
#define MB2_TAG_ALIGN 8

struct mb1_info {
	uint32_t flags;
	uint32_t mem_lower, mem_upper;
	uint32_t boot_device;
	uint32_t cmdline;
	uint32_t mods_count, mods_addr;
	uint32_t syms[4];
	uint32_t mmap_length, mmap_addr;
	uint32_t drives_length, drives_addr;
	uint32_t config_table;
	uint32_t boot_loader_name;
} __attribute__((packed));

struct mb1_mmap_entry {
	uint32_t size; /* of the rest of the entry */
	uint64_t base, length;
	uint32_t type;
} __attribute__((packed));

struct mb2_tag {
	uint32_t type, size;
} __attribute__((packed));

struct mb2_mmap {
	struct mb2_tag tag;
	uint32_t entry_size, entry_version;
} __attribute__((packed));

struct mb2_mmap_entry {
	uint64_t base, length;
	uint32_t type, reserved;
} __attribute__((packed));

/* A string too long for dest is an error, and dest gets its first size - 1 characters. */
static bool copy_string(char *dest, size_t size, const char *src, const char *what, char *err,
			size_t err_size)
{
	strlcpy(dest, src, size);
	if (strnlen(src, size) < size)
		return true;
	format(err, err_size, "the %s is %zu characters or longer", what, size);
	return false;
}

/* Zero-length entries (QEMU's multiboot1 map has one) carry nothing and are dropped. */
static void add_region(struct boot_info *info, uint64_t base, uint64_t length, uint32_t type)
{
	if (length && info->region_count < BOOT_REGIONS_MAX)
		info->regions[info->region_count++] = (struct memory_region){ base, length, type };
}

static bool copy_mb1(const struct mb1_info *mb, struct boot_info *info, char *err, size_t err_size)
{
	info->protocol = 1;
	if ((mb->flags & MB1_INFO_CMDLINE) &&
	    !copy_string(info->cmdline, sizeof(info->cmdline), phys_to_virt(mb->cmdline),
			 "command line", err, err_size))
		return false;
	if (mb->flags & MB1_INFO_LOADER_NAME)
		strlcpy(info->loader_name, phys_to_virt(mb->boot_loader_name),
			sizeof(info->loader_name));
	if (mb->flags & MB1_INFO_MEMORY_MAP) {
		uint64_t address = mb->mmap_addr, end = address + mb->mmap_length;

		while (address < end) {
			const struct mb1_mmap_entry *entry = phys_to_virt(address);

			add_region(info, entry->base, entry->length, entry->type);
			address += entry->size + sizeof(entry->size);
		}
	}
	return true;
}

static void copy_mb2_memory_map(const struct mb2_mmap *map, struct boot_info *info)
{
	const uint8_t *entry = (const uint8_t *)(map + 1);
	const uint8_t *end = (const uint8_t *)map + map->tag.size;

	for (; entry + sizeof(struct mb2_mmap_entry) <= end; entry += map->entry_size) {
		const struct mb2_mmap_entry *region = (const struct mb2_mmap_entry *)entry;

		add_region(info, region->base, region->length, region->type);
		if (map->entry_size == 0)
			break;
	}
}

static bool copy_mb2(const uint8_t *mb, struct boot_info *info, char *err, size_t err_size)
{
	uint32_t total_size = *(const uint32_t *)mb;
	const uint8_t *tag_address = mb + MB2_TAG_ALIGN;

	info->protocol = 2;
	while (tag_address + sizeof(struct mb2_tag) <= mb + total_size) {
		const struct mb2_tag *tag = (const struct mb2_tag *)tag_address;
		const char *payload = (const char *)(tag + 1);
		size_t payload_size = tag->size - sizeof(*tag);

		if (tag->type == MB2_TAG_END || tag->size < sizeof(*tag))
			break;
		if (tag->type == MB2_TAG_CMDLINE &&
		    !copy_string(info->cmdline, sizeof(info->cmdline), payload, "command line", err,
				 err_size))
			return false;
		if (tag->type == MB2_TAG_LOADER_NAME)
			strlcpy(info->loader_name, payload, sizeof(info->loader_name));
		if (tag->type == MB2_TAG_MEMORY_MAP)
			copy_mb2_memory_map((const struct mb2_mmap *)tag, info);
		if (tag->type == MB2_TAG_ACPI_OLD || tag->type == MB2_TAG_ACPI_NEW) {
			info->rsdp_length =
				payload_size < BOOT_RSDP_MAX ? payload_size : BOOT_RSDP_MAX;
			memcpy(info->rsdp, payload, info->rsdp_length);
		}
		tag_address += (tag->size + MB2_TAG_ALIGN - 1) & ~(uint32_t)(MB2_TAG_ALIGN - 1);
	}
	return true;
}

bool boot_info_copy(uint32_t magic, uint32_t info_phys, struct boot_info *info, char *err,
		    size_t err_size)
{
	bool copied;

	memset(info, 0, sizeof(*info));
	if (magic == MB1_BOOTLOADER_MAGIC)
		copied = copy_mb1(phys_to_virt(info_phys), info, err, err_size);
	else if (magic == MB2_BOOTLOADER_MAGIC)
		copied = copy_mb2(phys_to_virt(info_phys), info, err, err_size);
	else {
		format(err, err_size, "not started by a multiboot loader (magic 0x%x)", magic);
		return false;
	}
	if (copied && info->region_count == 0) {
		format(err, err_size, "the boot loader gave no memory map");
		return false;
	}
	return copied;
}

/* SPDX-License-Identifier: MIT */
/* ACPI table parsing: RSDP, RSDT/XSDT lookup and the MADT's CPU list (ACPI 6.5 §5.2). Pure. */
#ifndef LIB_ACPI_H
#define LIB_ACPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Every multi-byte field is little endian and may sit at any alignment (ACPI 6.5 §5.2.2). Offsets
 * are in bytes from the start of the structure.
 */

/* Root System Description Pointer (ACPI 6.5 §5.2.5.3). */
#define ACPI_RSDP_SIGNATURE "RSD PTR "
#define ACPI_RSDP_SIGNATURE_SIZE 8
#define ACPI_RSDP_ALIGN 16 /* §5.2.5.1: found on a 16-byte boundary */
#define ACPI_RSDP_OFF_SIGNATURE 0
#define ACPI_RSDP_OFF_CHECKSUM 8 /* covers the first ACPI_RSDP_V1_SIZE bytes */
#define ACPI_RSDP_OFF_REVISION 15 /* 0 for ACPI 1.0, 2 for ACPI 2.0 and later */
#define ACPI_RSDP_OFF_RSDT_ADDRESS 16 /* u32 physical address */
#define ACPI_RSDP_OFF_LENGTH 20 /* u32, whole structure; revision >= 2 only */
#define ACPI_RSDP_OFF_XSDT_ADDRESS 24 /* u64 physical address; revision >= 2 only */
#define ACPI_RSDP_OFF_EXTENDED_CHECKSUM 32 /* covers Length bytes; revision >= 2 only */
#define ACPI_RSDP_V1_SIZE 20
#define ACPI_RSDP_V2_SIZE 36
#define ACPI_RSDP_REVISION_EXTENDED 2 /* first revision with Length and XsdtAddress */

/* System Description Table Header, common to every table but the RSDP (ACPI 6.5 §5.2.6). */
#define ACPI_SIGNATURE_SIZE 4
#define ACPI_HEADER_OFF_SIGNATURE 0
#define ACPI_HEADER_OFF_LENGTH 4 /* u32, whole table including the header */
#define ACPI_HEADER_OFF_REVISION 8
#define ACPI_HEADER_OFF_CHECKSUM 9 /* the whole table sums to zero */
#define ACPI_HEADER_SIZE 36

/* RSDT (§5.2.7) and XSDT (§5.2.8): the header, then physical addresses of the other tables. */
#define ACPI_RSDT_SIGNATURE "RSDT"
#define ACPI_XSDT_SIGNATURE "XSDT"
#define ACPI_RSDT_ENTRY_SIZE 4
#define ACPI_XSDT_ENTRY_SIZE 8 /* not 8-byte aligned: the header is 36 bytes */

/* Multiple APIC Description Table (ACPI 6.5 §5.2.12). */
#define ACPI_MADT_SIGNATURE "APIC"
#define ACPI_MADT_OFF_LOCAL_APIC_ADDRESS 36 /* u32 physical address */
#define ACPI_MADT_OFF_FLAGS 40 /* u32 */
#define ACPI_MADT_OFF_ENTRIES 44
#define ACPI_MADT_FLAG_PCAT_COMPAT (1u << 0) /* dual 8259s are installed */

/* Every MADT entry starts with a type byte and a length byte that covers the whole entry. */
#define ACPI_MADT_ENTRY_OFF_TYPE 0
#define ACPI_MADT_ENTRY_OFF_LENGTH 1
#define ACPI_MADT_ENTRY_HEADER_SIZE 2

/* Interrupt controller structure types (ACPI 6.5 §5.2.12); the ones parsed here. */
#define ACPI_MADT_TYPE_LOCAL_APIC 0
#define ACPI_MADT_TYPE_IO_APIC 1
#define ACPI_MADT_TYPE_INTERRUPT_OVERRIDE 2
#define ACPI_MADT_TYPE_LOCAL_APIC_OVERRIDE 5
#define ACPI_MADT_TYPE_LOCAL_X2APIC 9

/* Processor Local APIC Structure (ACPI 6.5 §5.2.12.2). */
#define ACPI_LOCAL_APIC_OFF_PROCESSOR_UID 2 /* u8 */
#define ACPI_LOCAL_APIC_OFF_APIC_ID 3 /* u8 */
#define ACPI_LOCAL_APIC_OFF_FLAGS 4 /* u32, ACPI_LOCAL_APIC_FLAG_* */
#define ACPI_LOCAL_APIC_SIZE 8

/* I/O APIC Structure (ACPI 6.5 §5.2.12.3). */
#define ACPI_IO_APIC_OFF_ID 2 /* u8 */
#define ACPI_IO_APIC_OFF_ADDRESS 4 /* u32 physical address, after a reserved u8 */
#define ACPI_IO_APIC_OFF_GSI_BASE 8 /* u32: the GSI of its first input */
#define ACPI_IO_APIC_SIZE 12

/* Interrupt Source Override Structure (ACPI 6.5 §5.2.12.5): an ISA IRQ on another GSI. */
#define ACPI_INTERRUPT_OVERRIDE_OFF_BUS 2 /* u8, 0: ISA */
#define ACPI_INTERRUPT_OVERRIDE_OFF_SOURCE 3 /* u8: the ISA IRQ */
#define ACPI_INTERRUPT_OVERRIDE_OFF_GSI 4 /* u32 */
#define ACPI_INTERRUPT_OVERRIDE_OFF_FLAGS 8 /* u16, MPS INTI flags: polarity 1:0, trigger 3:2 */
#define ACPI_INTERRUPT_OVERRIDE_SIZE 10

/* Local APIC Address Override Structure (ACPI 6.5 §5.2.12.8). */
#define ACPI_LOCAL_APIC_OVERRIDE_OFF_ADDRESS 4 /* u64, after a reserved u16 */
#define ACPI_LOCAL_APIC_OVERRIDE_SIZE 12

/* Processor Local x2APIC Structure (ACPI 6.5 §5.2.12.12). */
#define ACPI_LOCAL_X2APIC_OFF_X2APIC_ID 4 /* u32, after a reserved u16 */
#define ACPI_LOCAL_X2APIC_OFF_FLAGS 8 /* u32, ACPI_LOCAL_APIC_FLAG_* */
#define ACPI_LOCAL_X2APIC_OFF_PROCESSOR_UID 12 /* u32 */
#define ACPI_LOCAL_X2APIC_SIZE 16

/* Local APIC Flags, shared by types 0 and 9 (ACPI 6.5 §5.2.12.2). */
#define ACPI_LOCAL_APIC_FLAG_ENABLED (1u << 0) /* the processor is ready for use */
/* ACPI 6.3+: when Enabled is clear, the OS may enable it at run time; reserved (zero) before. */
#define ACPI_LOCAL_APIC_FLAG_ONLINE_CAPABLE (1u << 1)

#define ACPI_IO_APICS_MAX 8
#define ACPI_INTERRUPT_OVERRIDES_MAX 16

/* One Processor Local APIC or Processor Local x2APIC entry. */
struct acpi_cpu {
	uint32_t apic_id;
	uint32_t processor_uid;
	bool enabled; /* ACPI_LOCAL_APIC_FLAG_ENABLED */
	/*
	 * ACPI_LOCAL_APIC_FLAG_ONLINE_CAPABLE, as stored. Meaningful only when !enabled and the
	 * firmware implements ACPI 6.3+; the MADT revision cannot tell (ACPI 6.2b used 45).
	 */
	bool online_capable;
	bool x2apic; /* from a Processor Local x2APIC entry (type 9) */
};

struct acpi_io_apic {
	uint8_t id;
	uint32_t address; /* physical */
	uint32_t gsi_base;
};

struct acpi_interrupt_override {
	uint8_t source; /* the ISA IRQ */
	uint32_t gsi;
	uint16_t flags; /* MPS INTI flags */
};

/*
 * The MADT's header fields and interrupt routing. Its CPUs are not copied, so that a table of any
 * size is read whole: acpi_madt_next_cpu() reads them from the table, which must stay mapped.
 */
struct acpi_madt {
	const void *table; /* the table acpi_madt_parse() checked; NULL when none */
	size_t length; /* its Length */
	uint64_t local_apic_address; /* from the header, or the type-5 override when present */
	uint32_t flags; /* ACPI_MADT_FLAG_* */
	uint8_t revision; /* the MADT header's Revision */
	unsigned int cpu_count; /* type-0 and type-9 entries, enabled or not */
	unsigned int io_apic_count; /* entries beyond ACPI_IO_APICS_MAX are dropped */
	struct acpi_io_apic io_apics[ACPI_IO_APICS_MAX];
	unsigned int override_count; /* ISA overrides only; beyond the maximum, dropped */
	struct acpi_interrupt_override overrides[ACPI_INTERRUPT_OVERRIDES_MAX];
};

enum acpi_error {
	ACPI_OK,
	ACPI_ERROR_NO_RSDP, /* no "RSD PTR " signature */
	ACPI_ERROR_RSDP_CHECKSUM, /* the v1 or the extended checksum */
	ACPI_ERROR_RSDP_LENGTH, /* buffer shorter than the RSDP, or a bad Length field */
	ACPI_ERROR_TABLE_SIGNATURE, /* a root or a table has an unexpected signature */
	ACPI_ERROR_TABLE_LENGTH, /* a Length field below the header or past the buffer */
	ACPI_ERROR_TABLE_CHECKSUM,
	ACPI_ERROR_NOT_FOUND, /* no root entry has the signature */
	ACPI_ERROR_ENTRY_LENGTH, /* a MADT entry is too short or runs past the table */
	ACPI_ERROR_MAP, /* the acpi_map callback could not map the root or the found table */
};

/* A short human string for error, e.g. "RSDP checksum mismatch"; never NULL. */
const char *acpi_error_name(enum acpi_error error);

/* The ACPI checksum of bytes [0, length): all bytes of a structure, its checksum byte included,
 * sum to zero mod 256 when it is valid (ACPI 6.5 §5.2.5.3, §5.2.6). */
uint8_t acpi_checksum(const void *base, size_t length);

/*
 * Scan [start, start + length) at start + 16 * k for ACPI_RSDP_SIGNATURE with a valid v1
 * checksum over ACPI_RSDP_V1_SIZE bytes that all lie in the range. start must be the mapping of a
 * 16-byte-aligned physical address: the RSDP lies on a 16-byte boundary in the first KiB of the
 * EBDA or in 0xe0000-0xfffff (ACPI 6.5 §5.2.5.1). Returns the first match or NULL.
 */
const void *acpi_rsdp_find(const void *start, size_t length);

/*
 * Validate the RSDP in rsdp[0, length): the signature, the v1 checksum and, for revision >= 2,
 * a Length field in [ACPI_RSDP_V2_SIZE, length] and the extended checksum over it. Sets *root to
 * the XSDT address with *extended = true when revision >= 2 and XsdtAddress != 0, else to the
 * RSDT address with *extended = false. Leaves *root and *extended alone on error.
 */
enum acpi_error acpi_rsdp_parse(const void *rsdp, size_t length, uint64_t *root, bool *extended);

/*
 * Returns a pointer to length readable bytes of physical memory at phys, or NULL. Pointers it
 * returns must stay valid at least until the acpi_table_find() call that asked returns; the
 * table pointer that call returns must stay valid for as long as the caller uses it.
 */
typedef const void *(*acpi_map)(uint64_t phys, size_t length, void *context);

/*
 * Find the first table with signature through the RSDT (extended false, 32-bit entries) or the
 * XSDT (extended true, 64-bit entries) at root. The root must have the matching signature, a
 * Length of at least ACPI_HEADER_SIZE, and a valid checksum; a trailing partial entry is
 * ignored. For each entry map the header, then, when the signature matches, the whole table by
 * its Length. Entries that are zero or whose header cannot be mapped are skipped. The first
 * matching table must have a Length of at least ACPI_HEADER_SIZE and a valid checksum. On
 * ACPI_OK sets *table and *length (the table's Length).
 */
enum acpi_error acpi_table_find(uint64_t root, bool extended, const char signature[4], acpi_map map,
				void *context, const void **table, size_t *length);

/*
 * Parse the MADT in table[0, length): the header (signature, a Length in
 * [ACPI_MADT_OFF_ENTRIES, length], checksum), then each entry up to Length. Types 0 and 9 count a
 * CPU, type 1 adds an I/O APIC, type 2 (ISA bus) an override, type 5 replaces local_apic_address,
 * other types are skipped by their length. An entry with a length below 2, past the table's end,
 * or below its type's size is ACPI_ERROR_ENTRY_LENGTH, and no CPU of the table is read then.
 * *madt is fully written on ACPI_OK (madt->table is table) and unspecified on error.
 */
enum acpi_error acpi_madt_parse(const void *table, size_t length, struct acpi_madt *madt);

/*
 * The CPU entry (type 0 or 9) after *cursor, in table order, into *cpu: start with *cursor = 0;
 * false after the last (madt->cpu_count in all). Only for a madt that acpi_madt_parse() returned
 * ACPI_OK for, while its table is mapped: the entries' lengths were checked there.
 */
bool acpi_madt_next_cpu(const struct acpi_madt *madt, size_t *cursor, struct acpi_cpu *cpu);

/* The GSI of ISA IRQ irq: its override's, else irq itself (ACPI 6.5 §5.2.12.5). */
uint32_t acpi_madt_isa_gsi(const struct acpi_madt *madt, uint8_t irq);

/*
 * The I/O APIC with the highest GSI base not above gsi, and in *input gsi's input there, or NULL.
 * The MADT does not say how many inputs each has: the caller checks *input against the I/O APIC's
 * own count (its version register).
 */
const struct acpi_io_apic *acpi_madt_io_apic_of(const struct acpi_madt *madt, uint32_t gsi,
						unsigned int *input);

#endif

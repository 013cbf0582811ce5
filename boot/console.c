/* SPDX-License-Identifier: MIT */
/* The boot console: which UART carries the log, chosen before the first line, told after it. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "boot/console.h"
#include "lib/acpi_spcr.h"
#include "lib/format.h"
#include "lib/ktap.h"
#include "platform/pc/acpi_tables.h"
#include "platform/pc/serial.h"

#define REASON_MAX 192
#define COM1_PORT 0x3f8
#define COM1_BAUD 115200

static struct console_config chosen;
static char why[2 * REASON_MAX];

/* "port 0x2f8, 115200 baud", "mmio32 0xfe032000, baud as the firmware set it, 48000000 Hz". */
static void describe(char *buf, size_t size, const struct console_config *config)
{
	static const char *const kinds[] = {
		[UART_IO_PORT] = "port",
		[UART_IO_MMIO8] = "mmio",
		[UART_IO_MMIO32] = "mmio32",
	};
	int used = format(
		buf, size, "%s 0x%llx", kinds[config->io],
		(unsigned long long)(config->io == UART_IO_PORT ? config->port : config->mmio));

	if (config->baud == UART_BAUD_KEEP)
		used += format(buf + used, size - (size_t)used, ", baud as the firmware set it");
	else
		used += format(buf + used, size - (size_t)used, ", %u baud", config->baud);
	if (config->clock_hz)
		format(buf + used, size - (size_t)used, ", %u Hz clock", config->clock_hz);
}

/* The SPCR's UART into *config if it is one the kernel can use; else why not, in reason. */
static bool spcr_console(const void *rsdp, size_t rsdp_length, struct console_config *config,
			 char *reason, size_t size)
{
	char where[REASON_MAX], probe[REASON_MAX];
	struct acpi_spcr spcr;
	const void *table;
	size_t length;
	enum acpi_error error =
		acpi_tables_find(rsdp, rsdp_length, ACPI_SPCR_SIGNATURE, &table, &length);

	if (error != ACPI_OK) {
		format(reason, size, "no ACPI SPCR: %s",
		       error == ACPI_ERROR_NOT_FOUND ? "the RSDT or XSDT lists none"
						     : acpi_error_name(error));
		return false;
	}
	if (!acpi_spcr_parse(table, length, &spcr, probe, sizeof(probe))) {
		format(reason, size, "ACPI SPCR revision %u refused: %s", spcr.revision, probe);
		return false;
	}
	describe(where, sizeof(where), &spcr.console);
	if (!serial_probe(&spcr.console, probe, sizeof(probe))) {
		format(reason, size, "ACPI SPCR names %s: %s", where, probe);
		return false;
	}
	*config = spcr.console;
	format(reason, size, "from ACPI SPCR revision %u, interface type 0x%02x (%s)",
	       spcr.revision, spcr.interface_type, acpi_spcr_type_name(spcr.interface_type));
	return true;
}

bool boot_console_start(const struct console_config *given, bool valid, const void *rsdp,
			size_t rsdp_length, char *error, size_t size)
{
	char where[REASON_MAX], probe[REASON_MAX], spcr_reason[REASON_MAX];
	const char *console_said = given->given ? "console= refused" : "no console=";
	bool stands = valid;

	if (valid && given->given) {
		describe(where, sizeof(where), given);
		/* COM1 is taken unprobed, as the default always was (an 8250 has no scratch). */
		if ((given->io == UART_IO_PORT && given->port == COM1_PORT) ||
		    serial_probe(given, probe, sizeof(probe))) {
			chosen = *given;
			serial_init(&chosen);
			format(why, sizeof(why), "from console=");
			return true;
		}
		format(error, size, "option 'console': %s: %s", where, probe);
		stands = false;
	} else if (!valid) {
		console_said = "the command line does not stand";
	}
	if (spcr_console(rsdp, rsdp_length, &chosen, spcr_reason, sizeof(spcr_reason))) {
		format(why, sizeof(why), "%s; %s", spcr_reason, console_said);
	} else {
		chosen = (struct console_config){ .port = COM1_PORT, .baud = COM1_BAUD };
		format(why, sizeof(why), "COM1, the default (%s; %s)", console_said, spcr_reason);
	}
	serial_init(&chosen);
	return stands;
}

void boot_console_report(void)
{
	char where[REASON_MAX];

	describe(where, sizeof(where), &chosen);
	ktap_diag(0, "console: %s: %s", where, why);
}

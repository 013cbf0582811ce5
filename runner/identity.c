/* SPDX-License-Identifier: MIT */
/* Naming the platform from CPUID facts and the runner's word: pure, host-tested. */
#include <stdbool.h>
#include <stddef.h>

#include "lib/format.h"
#include "lib/string.h"
#include "runner/identity.h"

#define SIGNATURE_TCG "TCGTCGTCGTCG"

/* Copy the letters and digits of text to out (at most size - 1 of them). */
static void letters_and_digits(const char *text, char *out, size_t size)
{
	size_t length = 0;

	for (; *text && length + 1 < size; text++) {
		char c = *text;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
			out[length++] = c;
	}
	out[length] = '\0';
}

static void name_hypervisor(const struct platform_facts *facts, char *identity, size_t size,
			    char *how, size_t how_size)
{
	char clean[sizeof(facts->signature)];

	if (strcmp(facts->signature, SIGNATURE_TCG) == 0) {
		format(identity, size, "tcg");
	} else if (facts->kvm && facts->host && *facts->host) {
		format(identity, size, "%s", facts->host);
		format(how, how_size, "hypervisor \"%s\", platform.host=%s", facts->signature,
		       facts->host);
		return;
	} else if (facts->kvm) {
		format(identity, size, "kvm");
		format(how, how_size, "hypervisor \"%s\", no platform.host", facts->signature);
		return;
	} else {
		letters_and_digits(facts->signature, clean, sizeof(clean));
		format(identity, size, "hv-%s", *clean ? clean : "unknown");
	}
	if (facts->host && *facts->host)
		format(how, how_size,
		       "hypervisor \"%s\"; platform.host=%s ignored: not a KVM guest",
		       facts->signature, facts->host);
	else
		format(how, how_size, "hypervisor \"%s\"", facts->signature);
}

void platform_identity_name(const struct platform_facts *facts, char *identity, size_t size,
			    char *how, size_t how_size)
{
	char vendor[sizeof(facts->vendor)];

	if (facts->forced && *facts->forced) {
		char machine[PLATFORM_IDENTITY_MAX];
		struct platform_facts real = *facts;

		real.forced = "";
		platform_identity_name(&real, machine, sizeof(machine), how, how_size);
		format(identity, size, "%s", facts->forced);
		format(how, how_size, "selftest.platform: the machine is %s", machine);
		return;
	}
	if (facts->hypervisor) {
		name_hypervisor(facts, identity, size, how, how_size);
		return;
	}
	letters_and_digits(facts->vendor, vendor, sizeof(vendor));
	format(identity, size, "metal-%s-%u-%u", *vendor ? vendor : "unknown", facts->family,
	       facts->model);
	format(how, how_size, "no hypervisor: vendor=%s family=%u model=%u", facts->vendor,
	       facts->family, facts->model);
}

/* SPDX-License-Identifier: MIT */
/* Decoding the CPU's identity from CPUID leaves 0 and 1 and the hypervisor leaves. */
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "lib/string.h"
#include "platform/pc/cpu_identity.h"

#define FAMILY_EXTENDED 0xfu /* the family that adds the extended family */
#define FAMILY_P6 0x6u /* with FAMILY_EXTENDED and above, the model takes the extended model */

/* Twelve characters from three registers, in the order given, NUL-terminated. */
static void registers_text(char text[13], uint32_t first, uint32_t second, uint32_t third)
{
	memcpy(text, &first, 4);
	memcpy(text + 4, &second, 4);
	memcpy(text + 8, &third, 4);
	text[12] = '\0';
}

void cpu_identity_decode(const struct cpuid_result *leaf0, const struct cpuid_result *leaf1,
			 struct cpu_identity *identity)
{
	uint32_t version = leaf1->eax;

	registers_text(identity->vendor, leaf0->ebx, leaf0->edx, leaf0->ecx);
	identity->family = CPUID_1_EAX_FAMILY(version);
	identity->model = CPUID_1_EAX_MODEL(version);
	identity->stepping = CPUID_1_EAX_STEPPING(version);
	if (identity->family == FAMILY_EXTENDED)
		identity->family += CPUID_1_EAX_EXTENDED_FAMILY(version);
	if (identity->family == FAMILY_P6 || identity->family >= FAMILY_EXTENDED)
		identity->model |= CPUID_1_EAX_EXTENDED_MODEL(version) << 4;
	identity->hypervisor = leaf1->ecx & CPUID_1_ECX_HYPERVISOR;
}

void cpu_identity_signature(const struct cpuid_result *leaf, char signature[13])
{
	registers_text(signature, leaf->ebx, leaf->ecx, leaf->edx);
}

/* SPDX-License-Identifier: MIT */
/* Host tests of platform/pc/cpu_identity.c: CPUID leaves 0 and 1 as Linux displays them. */
#include <stdint.h>

#include "platform/pc/cpu_identity.h"
#include "tests/host/host_test.h"

#define GENU 0x756e6547u /* "Genu" */
#define INEI 0x49656e69u /* "ineI" */
#define NTEL 0x6c65746eu /* "ntel" */
#define HYPERVISOR_BIT (1u << 31)

static struct cpu_identity decode(uint32_t version, uint32_t features_ecx)
{
	struct cpuid_result leaf0 = { .eax = 0x16, .ebx = GENU, .ecx = NTEL, .edx = INEI };
	struct cpuid_result leaf1 = { .eax = version, .ecx = features_ecx };
	struct cpu_identity identity;

	cpu_identity_decode(&leaf0, &leaf1, &identity);
	return identity;
}

HOST_TEST(cpu_identity_reads_the_vendor_from_ebx_edx_ecx)
{
	host_check_str("GenuineIntel", decode(0x00050654, 0).vendor);
}

/* Skylake-SP, 0x00050654: family 6 takes the extended model, 0x55 = 85 (Linux: "model 85"). */
HOST_TEST(cpu_identity_family_6_takes_the_extended_model)
{
	struct cpu_identity identity = decode(0x00050654, 0);

	host_check_eq_u64(6, identity.family);
	host_check_eq_u64(85, identity.model);
	host_check_eq_u64(4, identity.stepping);
	host_check(!identity.hypervisor);
}

/* Zen 2, 0x00830f10: family 0xF adds the extended family 8 (23) and takes the extended model 3
 * (0x31 = 49). */
HOST_TEST(cpu_identity_family_15_adds_the_extended_family)
{
	struct cpu_identity identity = decode(0x00830f10, HYPERVISOR_BIT);

	host_check_eq_u64(23, identity.family);
	host_check_eq_u64(49, identity.model);
	host_check_eq_u64(0, identity.stepping);
	host_check(identity.hypervisor);
}

/* Family 5 ignores both extended fields, whatever they hold. */
HOST_TEST(cpu_identity_family_5_ignores_the_extended_fields)
{
	struct cpu_identity identity = decode(0x0ff10543, 0);

	host_check_eq_u64(5, identity.family);
	host_check_eq_u64(4, identity.model);
	host_check_eq_u64(3, identity.stepping);
}

HOST_TEST(cpu_identity_signature_reads_ebx_ecx_edx)
{
	/* QEMU TCG's leaf 0x40000000: "TCGTCGTCGTCG" */
	struct cpuid_result leaf = {
		.eax = 0x40000001, .ebx = 0x54474354, .ecx = 0x43544743, .edx = 0x47435447
	};
	char signature[13];

	cpu_identity_signature(&leaf, signature);
	host_check_str("TCGTCGTCGTCG", signature);
}

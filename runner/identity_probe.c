/* SPDX-License-Identifier: MIT */
/* The platform identity on this machine: CPUID, platform.host= and selftest.platform=. */
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "lib/cmdline.h"
#include "lib/format.h"
#include "lib/ktap.h"
#include "lib/string.h"
#include "platform/pc/cpu_identity.h"
#include "runner/identity.h"

#define SIGNATURE_KVM "KVMKVMKVM"
/* Linux's kvm_cpuid_base(): KVM's leaves may sit behind another's (Hyper-V enlightenments). */
#define HYPERVISOR_LEAF_STEP 0x100
#define HYPERVISOR_LEAF_LAST 0x40010000

static char host[CMDLINE_STRING_MAX];
static char forced[CMDLINE_STRING_MAX];
static char identity[PLATFORM_IDENTITY_MAX];
static char how[160];

/* The hosts the runner can tell apart (docs/output.md); anything else is a usage error. */
static bool parse_host(const struct cmdline_option *opt, const char *value, char *err,
		       size_t err_size)
{
	static const char *const hosts[] = { "kvm-pvm", "kvm-vmx", "kvm-svm" };

	for (size_t i = 0; value && i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		if (strcmp(value, hosts[i]) == 0) {
			strlcpy(opt->dest, value, CMDLINE_STRING_MAX);
			return true;
		}
	}
	format(err, err_size, "'%s' is not a host: kvm-pvm, kvm-vmx or kvm-svm",
	       value ? value : "");
	return false;
}

/* An identity of letters, digits, '-' and '_', as platform_identity_name() makes them. */
static bool parse_forced(const struct cmdline_option *opt, const char *value, char *err,
			 size_t err_size)
{
	size_t length = value ? strlen(value) : 0;

	for (size_t i = 0; i < length; i++) {
		char c = value[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_'))
			length = 0;
	}
	if (length == 0 || length >= PLATFORM_IDENTITY_MAX) {
		format(err, err_size, "'%s' is not a platform identity ([A-Za-z0-9_-], at most %u)",
		       value ? value : "", PLATFORM_IDENTITY_MAX - 1);
		return false;
	}
	strlcpy(opt->dest, value, CMDLINE_STRING_MAX);
	return true;
}

CMDLINE_OPTION(option_platform_host, .name = "platform.host", .syntax = "kvm-pvm|kvm-vmx|kvm-svm",
	       .parse = parse_host, .dest = host);
CMDLINE_OPTION(option_selftest_platform, .name = "selftest.platform", .syntax = "IDENTITY",
	       .parse = parse_forced, .dest = forced);

/* A hypervisor leaf's signature: EBX, ECX, EDX. */
static void signature_of(uint32_t leaf, char signature[13])
{
	struct cpuid_result r = cpuid_silicon(leaf, 0);

	cpu_identity_signature(&r, signature);
}

/* The silicon's (or hypervisor's) own CPUID, never the emulated CPU's. */
static void probe(struct platform_facts *facts)
{
	struct cpuid_result leaf0 = cpuid_silicon(CPUID_LEAF_VENDOR, 0);
	struct cpuid_result leaf1 = cpuid_silicon(CPUID_LEAF_FEATURES, 0);
	struct cpu_identity identity;

	cpu_identity_decode(&leaf0, &leaf1, &identity);
	memcpy(facts->vendor, identity.vendor, sizeof(facts->vendor)); /* "GenuineIntel" */
	facts->family = identity.family;
	facts->model = identity.model;
	facts->hypervisor = identity.hypervisor;
	if (!facts->hypervisor)
		return;
	signature_of(CPUID_LEAF_HYPERVISOR, facts->signature);
	for (uint32_t leaf = CPUID_LEAF_HYPERVISOR; leaf < HYPERVISOR_LEAF_LAST;
	     leaf += HYPERVISOR_LEAF_STEP) {
		char signature[13];

		signature_of(leaf, signature);
		if (strcmp(signature, SIGNATURE_KVM) == 0) {
			facts->kvm = true; /* the first, as Linux's hypervisor_cpuid_base() stops */
			break;
		}
	}
}

const char *platform_identity(void)
{
	struct platform_facts facts = { .host = host, .forced = forced };

	if (!identity[0]) {
		probe(&facts);
		platform_identity_name(&facts, identity, sizeof(identity), how, sizeof(how));
	}
	return identity;
}

void platform_identity_report(void)
{
	ktap_diag(0, "platform: identity=%s (%s)", platform_identity(), how);
}

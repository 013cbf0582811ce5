/* SPDX-License-Identifier: MIT */
/* The platform identity that known defects are keyed by: tcg, kvm-pvm, metal-..., hv-... */
#ifndef RUNNER_IDENTITY_H
#define RUNNER_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>

#define PLATFORM_IDENTITY_MAX 64

/* What the machine and the runner say; the input of platform_identity_name(). */
struct platform_facts {
	bool hypervisor; /* CPUID.1:ECX.HYPERVISOR */
	char signature[13]; /* CPUID 0x40000000 EBX, ECX, EDX; "" without a hypervisor */
	bool kvm; /* "KVMKVMKVM" at 0x40000000, or behind another signature at 0x40000100.. */
	char vendor[13]; /* the silicon's CPUID 0 vendor string */
	unsigned int family, model; /* displayed family and model, as Linux's /proc/cpuinfo */
	const char *host; /* platform.host: "kvm-pvm", "kvm-vmx", "kvm-svm", or "" */
	const char *forced; /* selftest.platform: the identity to play, or "" */
};

/*
 * Name the platform, from the most exact fact there is:
 *   selftest.platform=NAME           NAME (a test of the known-defects matcher)
 *   signature "TCGTCGTCGTCG"         tcg
 *   a KVM signature                  platform.host (kvm-pvm, kvm-vmx, kvm-svm), else kvm
 *   another signature                hv-SIGNATURE, letters and digits only (hv-unknown if none)
 *   no hypervisor                    metal-VENDOR-FAMILY-MODEL (metal-GenuineIntel-6-85)
 * and write how it was told into how (for the report line). A platform.host under a signature
 * other than KVM's is ignored, and how says so.
 */
void platform_identity_name(const struct platform_facts *facts, char *identity, size_t size,
			    char *how, size_t how_size);

/* The kernel's: probe the CPU once, print "# platform: identity=NAME (how)", return NAME. */
const char *platform_identity(void);
void platform_identity_report(void);

#endif

/* SPDX-License-Identifier: MIT */
/* Host tests of runner/identity.c: the platform identity from CPUID facts and platform.host. */
#include <string.h>

#include "runner/identity.h"
#include "tests/host/host_test.h"

static const struct {
	const char *what;
	struct platform_facts facts;
	const char *identity;
	const char *how;
} identity_cases[] = {
	{ "QEMU TCG",
	  { .hypervisor = true, .signature = "TCGTCGTCGTCG", .vendor = "AuthenticAMD" },
	  "tcg",
	  "hypervisor \"TCGTCGTCGTCG\"" },
	{ "TCG: platform.host is KVM's word, ignored elsewhere",
	  { .hypervisor = true, .signature = "TCGTCGTCGTCG", .host = "kvm-pvm" },
	  "tcg",
	  "hypervisor \"TCGTCGTCGTCG\"; platform.host=kvm-pvm ignored: not a KVM guest" },
	{ "KVM-PVM",
	  { .hypervisor = true, .signature = "KVMKVMKVM", .kvm = true, .host = "kvm-pvm" },
	  "kvm-pvm",
	  "hypervisor \"KVMKVMKVM\", platform.host=kvm-pvm" },
	{ "KVM on VMX",
	  { .hypervisor = true, .signature = "KVMKVMKVM", .kvm = true, .host = "kvm-vmx" },
	  "kvm-vmx",
	  "hypervisor \"KVMKVMKVM\", platform.host=kvm-vmx" },
	{ "KVM on SVM",
	  { .hypervisor = true, .signature = "KVMKVMKVM", .kvm = true, .host = "kvm-svm" },
	  "kvm-svm",
	  "hypervisor \"KVMKVMKVM\", platform.host=kvm-svm" },
	{ "KVM, the runner did not say which",
	  { .hypervisor = true, .signature = "KVMKVMKVM", .kvm = true, .host = "" },
	  "kvm",
	  "hypervisor \"KVMKVMKVM\", no platform.host" },
	{ "KVM behind Hyper-V's signature",
	  { .hypervisor = true, .signature = "Microsoft Hv", .kvm = true, .host = "kvm-vmx" },
	  "kvm-vmx",
	  "hypervisor \"Microsoft Hv\", platform.host=kvm-vmx" },
	{ "Hyper-V",
	  { .hypervisor = true, .signature = "Microsoft Hv" },
	  "hv-MicrosoftHv",
	  "hypervisor \"Microsoft Hv\"" },
	{ "VMware", { .hypervisor = true, .signature = "VMwareVMware" }, "hv-VMwareVMware", NULL },
	{ "a hypervisor without a signature", { .hypervisor = true }, "hv-unknown", NULL },
	{ "bare metal, Intel",
	  { .vendor = "GenuineIntel", .family = 6, .model = 85 },
	  "metal-GenuineIntel-6-85",
	  "no hypervisor: vendor=GenuineIntel family=6 model=85" },
	{ "bare metal, AMD",
	  { .vendor = "AuthenticAMD", .family = 25, .model = 1 },
	  "metal-AuthenticAMD-25-1",
	  NULL },
	{ "bare metal, spaces in the vendor",
	  { .vendor = "  Shanghai  ", .family = 7, .model = 91 },
	  "metal-Shanghai-7-91",
	  NULL },
	{ "selftest.platform plays another",
	  { .hypervisor = true, .signature = "TCGTCGTCGTCG", .forced = "kvm-pvm" },
	  "kvm-pvm",
	  "selftest.platform: the machine is tcg" },
};

HOST_TEST(platform_identity_names_each_platform_exactly)
{
	for (size_t i = 0; i < sizeof(identity_cases) / sizeof(identity_cases[0]); i++) {
		char identity[PLATFORM_IDENTITY_MAX], how[160];

		platform_identity_name(&identity_cases[i].facts, identity, sizeof(identity), how,
				       sizeof(how));
		host_checkf(strcmp(identity, identity_cases[i].identity) == 0, "%s: identity %s",
			    identity_cases[i].what, identity);
		if (identity_cases[i].how)
			host_checkf(strcmp(how, identity_cases[i].how) == 0, "%s: how '%s'",
				    identity_cases[i].what, how);
	}
}

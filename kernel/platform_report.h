/* SPDX-License-Identifier: MIT */
/* The platform report printed at boot as KTAP diagnostics. */
#ifndef KERNEL_PLATFORM_REPORT_H
#define KERNEL_PLATFORM_REPORT_H

/* CPU identity, hypervisor, TSC, Debug Store and PMU features, and MSR read-back probes. */
void platform_report(void);

#endif

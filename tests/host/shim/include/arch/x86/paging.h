/* SPDX-License-Identifier: MIT */
/* Host shim of arch/x86/paging.h: the direct map is the shim's page pool. */
/*
 * The layout and PTE bits come from the real header. Physical addresses SHIM_POOL_PHYS and up
 * (below DIRECT_MAP_UNCACHED: write-back) map to the pool's host addresses
 * (tests/host/shim/shim.h); any other address fails the test.
 */
#ifndef SHIM_ARCH_X86_PAGING_H
#define SHIM_ARCH_X86_PAGING_H

#include <stdint.h>

/* The real ones add DIRECT_MAP_BASE, or clear with REP STOSQ: renamed out of the way. */
#define phys_to_virt shim_unused_direct_map_phys_to_virt
#define virt_to_phys shim_unused_direct_map_virt_to_phys
#define clear_pages shim_unused_asm_clear_pages
#include_next "arch/x86/paging.h"
#undef phys_to_virt
#undef virt_to_phys
#undef clear_pages

void *phys_to_virt(uint64_t phys);
uint64_t virt_to_phys(const void *virt);

#endif

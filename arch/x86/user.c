/* SPDX-License-Identifier: MIT */
/* The first ring-3 frame of a user task, and a frame sent to other 64-bit ring-3 code. */
#include <stdint.h>

#include "arch/x86/gdt.h"
#include "arch/x86/processor-flags.h"
#include "arch/x86/user.h"

void user_frame_init(struct cpu_regs *frame, uint64_t rip, uint64_t rsp, uint64_t arg)
{
	*frame = (struct cpu_regs){
		.rdi = arg,
		.rip = rip,
		.cs = GDT_USER_CODE | SELECTOR_RPL_USER,
		.rflags = RFLAGS_FIXED | RFLAGS_IF,
		.rsp = rsp,
		.ss = GDT_USER_DATA | SELECTOR_RPL_USER,
	};
}

void user_frame_redirect(struct cpu_regs *frame, uint64_t rip)
{
	frame->rip = rip;
	frame->cs = GDT_USER_CODE | SELECTOR_RPL_USER;
	frame->ss = GDT_USER_DATA | SELECTOR_RPL_USER;
}

; SPDX-License-Identifier: MIT
; return_to_user_mode(frame): leave the kernel through a struct cpu_regs (arch/x86/user.h).

%include "arch/x86/registers.inc"

extern divert_resume
global return_to_user_mode

section .text
; rdi = the frame, at the top of the task's kernel stack. Interrupts must be off.
return_to_user_mode:
	push rdi
	call divert_resume		; a CPU model may trace the task from its first instruction
	pop rdi
	mov rsp, rdi
	pop_general_registers
	add rsp, 16			; vector and error code
	swapgs				; the user's GS base is 0; the kernel's goes to KERNEL_GS_BASE
	iretq

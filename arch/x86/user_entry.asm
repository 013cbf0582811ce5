; SPDX-License-Identifier: MIT
; enter_user_mode(rip, rsp, arg): the first IRET of a user task (arch/x86/user.h).

%include "arch/x86/registers.inc"

global enter_user_mode

RFLAGS_FIXED_IF	equ 0x202

section .text
enter_user_mode:
	cli
	push GDT_USER_DATA | RPL_USER	; ss
	push rsi			; rsp
	push RFLAGS_FIXED_IF		; rflags
	push GDT_USER_CODE | RPL_USER	; cs
	push rdi			; rip
	mov rdi, rdx
	xor eax, eax
	xor ebx, ebx
	xor ecx, ecx
	xor edx, edx
	xor esi, esi
	xor ebp, ebp
	xor r8d, r8d
	xor r9d, r9d
	xor r10d, r10d
	xor r11d, r11d
	xor r12d, r12d
	xor r13d, r13d
	xor r14d, r14d
	xor r15d, r15d
	mov ds, ax
	mov es, ax
	swapgs				; the user's GS base is 0; the kernel's goes to KERNEL_GS_BASE
	iretq

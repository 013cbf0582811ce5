; SPDX-License-Identifier: MIT
; Fault probes that cannot be written as inline asm, because they break the stack.

global probe_double_fault

; Canonical, in the lower half, never mapped in the kernel's address space (the first 2 MiB).
UNMAPPED_STACK	equ 0x1000

section .text
probe_double_fault:
	mov rsp, UNMAPPED_STACK
	push rax			; #PF, whose delivery faults again: #DF
	ud2				; not reached

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

; A known branch sequence for BTS: two taken jumps, each from a labelled instruction to a
; labelled target, then a return. A BTS buffer must hold (branch_1 -> target_1) and
; (branch_2 -> target_2) in that order.
global probe_branches
global probe_branch_1
global probe_branch_1_target
global probe_branch_2
global probe_branch_2_target

probe_branches:
probe_branch_1:
	jmp probe_branch_1_target
	ud2
probe_branch_1_target:
probe_branch_2:
	jmp probe_branch_2_target
	ud2
probe_branch_2_target:
	ret

; SPDX-License-Identifier: MIT
; Ring-3 program of the lbr suite, linked into .user_text (tests/kernel/lbr_tasks.c): a call
; stack two levels deep that yields at the bottom until told to stop.

%include "arch/x86/user-abi.inc"

extern user_syscall_gate

section .user_text progbits alloc exec nowrite align=16

; rdi = struct lbr_user_rounds { rounds; stop }: CALL level 1, CALL level 2, then until stop:
; rounds += 1, yield. Returns through both levels and exits(0).
LBR_ROUNDS	equ 0
LBR_STOP	equ 8
global user_lbr_levels
global user_lbr_level_1
global user_lbr_level_2
user_lbr_levels:
	mov rbx, rdi			; preserved by system calls
	call user_lbr_level_1
	xor edi, edi
	mov eax, SYSCALL_EXIT
	call user_syscall_gate
	ud2
user_lbr_level_1:
	call user_lbr_level_2
	ret
user_lbr_level_2:
.loop:
	add qword [rbx + LBR_ROUNDS], 1
	mov eax, SYSCALL_YIELD
	call user_syscall_gate
	cmp qword [rbx + LBR_STOP], 0
	je .loop
	ret

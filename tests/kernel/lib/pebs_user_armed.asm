; SPDX-License-Identifier: MIT
; A ring-3 program whose instructions are a known number, so that a PEBS counter of its ring-3
; instructions can overflow at its last one (tests/kernel/ds_quiescent.c).

%include "arch/x86/user-abi.inc"

extern user_syscall_gate		; arch/x86/user_gate.asm

section .user_text progbits alloc exec nowrite align=16

; rdi = a qword n >= 1. Retires 1 + 2n + 3 ring-3 instructions here, and the gate's SYSCALL
; (none where the gate traps: its UD2 raises #UD and does not retire); then exit(0).
global user_pebs_overflow_at_exit
user_pebs_overflow_at_exit:
	mov rcx, [rdi]
.loop:
	dec rcx
	jnz .loop
	xor edi, edi
	mov eax, SYSCALL_EXIT
	call user_syscall_gate
	ud2				; exit does not return

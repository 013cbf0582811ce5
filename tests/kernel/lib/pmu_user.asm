; SPDX-License-Identifier: MIT
; Ring-3 programs of the pmu suite, linked into .user_text (tests/kernel/pmu_arch.c).
; Position-independent, as arch/x86/user_probes.asm.

%include "arch/x86/user-abi.inc"

extern user_syscall_gate

section .user_text progbits alloc exec nowrite align=16

; rdi = struct user_rdpmc { ecx; value }: RDPMC of the counter ECX names, into value; exit(0).
; A #GP at user_rdpmc_at ends the task (no fault handler).
global user_rdpmc
global user_rdpmc_at
user_rdpmc:
	mov rbx, rdi
	mov ecx, [rbx]
user_rdpmc_at:
	rdpmc
	mov [rbx + 8], eax
	mov [rbx + 12], edx
	xor edi, edi
	mov eax, SYSCALL_EXIT
	call user_syscall_gate
	ud2

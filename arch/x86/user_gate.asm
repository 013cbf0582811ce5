; SPDX-License-Identifier: MIT
; The kernel's own ring-3 code in .user_text (arch/x86/user.h): the system-call gate and user_exit.
; Position-independent: mapped at USER_TEXT_BASE in every user address space.

%include "arch/x86/user-abi.inc"

section .user_text progbits alloc exec nowrite align=4096

; Every system call of a user program goes through here; the kernel may patch the instruction
; at boot (arch/x86/syscall.h, syscall_use_trap()). Clobbers rcx and r11.
global user_syscall_gate
user_syscall_gate:
	syscall				; or UD2, after syscall_use_trap()
	ret

; rdi = code: exit(code). sched/user.c runs it to choose the system-call instruction.
global user_exit
user_exit:
	mov eax, SYSCALL_EXIT
	call user_syscall_gate
	ud2				; exit does not return

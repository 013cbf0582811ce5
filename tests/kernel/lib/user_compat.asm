; SPDX-License-Identifier: MIT
; Ring-3 programs that enter compatibility mode through the DPL-3 32-bit code segment, linked into
; .user_text (tests/kernel/sched_user_compat.c). Position-independent, as tests/kernel/lib/user_programs.asm.

%include "arch/x86/registers.inc"
%include "arch/x86/user-abi.inc"

USER_NOT_FAULTED	equ 0xbad
USER_COMPAT_RAN		equ 0x320	; exit code base: + the bytes a PUSH took

extern user_syscall_gate

; Far-jump to %1 in compatibility mode on the stack in %2 (the far pointer goes below the task's
; own rsp, which rbp keeps, so that the jump itself needs nothing of %2).
%macro enter_compatibility_mode 2
	mov rbp, rsp
	lea rax, [rel %1]
	mov dword [rsp - 8], eax
	mov word [rsp - 4], GDT_USER_CODE32 | RPL_USER
	lea rbx, [rsp - 8]
	mov rsp, %2
	jmp dword far [rbx]
%endmacro

; From compatibility mode back to %1 in 64-bit mode, on the task's own stack (ebp: below 4 GiB).
; No absolute address is known here: the return target is found from EIP. Clobbers eax.
%macro leave_compatibility_mode 1
	mov esp, ebp
	call %%here
%%here:
	pop eax
	add eax, %1 - %%here
	push dword GDT_USER_CODE | RPL_USER
	push eax
	retf
%endmacro

%macro exit_64 0
	mov eax, SYSCALL_EXIT
	call user_syscall_gate
	ud2
%endmacro

section .user_text progbits alloc exec nowrite align=16

; exit(USER_COMPAT_RAN + 4) when the probe ran as 32-bit code, whose PUSH moves the stack by 4
; bytes (8 in 64-bit mode). The bytes decode to instructions of the same lengths in either mode,
; as tests/test_decoder.py reads every instruction of the image as 64-bit code.
global user_compat_round_trip
user_compat_round_trip:
	enter_compatibility_mode .compat, rsp
BITS 32
.compat:
	mov esi, esp
	push eax
	sub esi, esp
	pop eax
	leave_compatibility_mode .back
BITS 64
.back:
	lea edi, [rsi + USER_COMPAT_RAN]
	exit_64

; SYSCALL in compatibility mode on the stack rdi (0: the task's own). AMD enters ring 0 at
; IA32_CSTAR with this rsp; Intel raises #UD. Exits USER_NOT_FAULTED should the SYSCALL return.
global user_compat_syscall, user_compat_syscall_at
user_compat_syscall:
	test rdi, rdi
	cmovz rdi, rsp
	enter_compatibility_mode .compat, rdi
BITS 32
.compat:
user_compat_syscall_at:
	syscall
	leave_compatibility_mode .back
BITS 64
.back:
	mov edi, USER_NOT_FAULTED
	exit_64

; The system-call gate, called from compatibility mode with SYSCALL_EXIT(0) in eax and edi.
global user_compat_gate
user_compat_gate:
	enter_compatibility_mode .compat, rsp
BITS 32
.compat:
	mov eax, SYSCALL_EXIT
	xor edi, edi
	call user_syscall_gate
	leave_compatibility_mode .back
BITS 64
.back:
	mov edi, USER_NOT_FAULTED
	exit_64

; One instruction in compatibility mode, then back: exit(USER_NOT_FAULTED) if it did not fault.
%macro compat_probe 2
global user_compat_%1, user_compat_%1_at
user_compat_%1:
	enter_compatibility_mode .compat, rsp
BITS 32
.compat:
user_compat_%1_at:
	%2
	leave_compatibility_mode .back
BITS 64
.back:
	mov edi, USER_NOT_FAULTED
	exit_64
%endmacro

compat_probe int80, {int 0x80}
compat_probe sysenter, sysenter
; A #GP in compatibility mode, for the fault handler's entry: CLI at CPL 3.
compat_probe cli, cli

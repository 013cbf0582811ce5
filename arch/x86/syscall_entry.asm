; SPDX-License-Identifier: MIT
; SYSCALL entry: build a struct cpu_regs on the task's kernel stack, call handle_syscall(),
; return by IRET (arch/x86/syscall.h).

%include "arch/x86/registers.inc"

extern handle_syscall
global syscall_entry

CPU_KERNEL_STACK_TOP	equ 8		; arch/x86/percpu.h
CPU_USER_RSP		equ 16
VECTOR_SYSCALL		equ 0x80	; arch/x86/user-abi.h: the vector recorded in the frame

section .text
; On entry: rcx = user rip, r11 = user rflags, rsp = user rsp, interrupts off (SFMASK).
syscall_entry:
	swapgs
	mov [gs:CPU_USER_RSP], rsp
	mov rsp, [gs:CPU_KERNEL_STACK_TOP]
	push GDT_USER_DATA | RPL_USER	; ss
	push qword [gs:CPU_USER_RSP]	; rsp
	push r11			; rflags
	push GDT_USER_CODE | RPL_USER	; cs
	push rcx			; rip
	push 0				; error code
	push VECTOR_SYSCALL		; vector
	push_general_registers
	cld
	mov rdi, rsp
	call handle_syscall
	pop_general_registers
	add rsp, 16			; vector and error code
	swapgs
	iretq

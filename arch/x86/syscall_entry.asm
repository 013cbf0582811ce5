; SPDX-License-Identifier: MIT
; SYSCALL entries: build a struct cpu_regs on the task's kernel stack, call the C side, return by
; IRET (arch/x86/syscall.h).

%include "arch/x86/registers.inc"

extern handle_syscall
extern handle_exception
global syscall_entry
global syscall_compat_entry

CPU_KERNEL_STACK_TOP	equ 8		; arch/x86/percpu.h
CPU_USER_RSP		equ 16
VECTOR_SYSCALL		equ 0x80	; arch/x86/user-abi.h: the vector recorded in the frame
X86_EXC_UD		equ 6		; arch/x86/exceptions.h
SYSCALL_LENGTH		equ 2		; 0f 05 (SDM Vol. 2B SYSCALL)

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

; IA32_CSTAR: SYSCALL from compatibility mode, which AMD CPUs (and QEMU) deliver here in 64-bit mode,
; with the kernel's CS but ring 3's RSP (AMD APM Vol. 3 SYSCALL). Intel raises #UD instead (SDM
; Vol. 2B SYSCALL); so does this entry: it switches to the kernel stack as the 64-bit entry does,
; then hands handle_exception() the frame of a ring-3 #UD at the SYSCALL, RIP = RCX - 2.
syscall_compat_entry:
	swapgs
	mov [gs:CPU_USER_RSP], rsp
	mov rsp, [gs:CPU_KERNEL_STACK_TOP]
	push GDT_USER_DATA | RPL_USER	; ss
	push qword [gs:CPU_USER_RSP]	; rsp
	push r11			; rflags
	push GDT_USER_CODE32 | RPL_USER	; cs
	sub rcx, SYSCALL_LENGTH
	push rcx			; rip: the SYSCALL itself
	push 0				; error code
	push X86_EXC_UD			; vector
	push_general_registers
	cld
	mov rdi, rsp
	call handle_exception
	pop_general_registers
	add rsp, 16			; vector and error code
	swapgs
	iretq

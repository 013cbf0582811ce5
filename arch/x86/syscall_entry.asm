; SPDX-License-Identifier: MIT
; SYSCALL entries: build a struct cpu_regs on the task's kernel stack, call the C side, return by
; IRET (arch/x86/syscall.h).

%include "arch/x86/registers.inc"

extern handle_syscall
extern handle_exception
global syscall_entry
global syscall_compat_entry
global syscall_entry_iret

CPU_KERNEL_STACK_TOP	equ 8		; arch/x86/percpu.h
CPU_USER_RSP		equ 16
VECTOR_SYSCALL		equ 0x80	; arch/x86/user-abi.h: the vector recorded in the frame
X86_EXC_UD		equ 6		; arch/x86/exceptions.h
%define SYSCALL_LENGTH 2		; 0f 05 (SDM Vol. 2B SYSCALL)

; A SYSCALL's way into the kernel, as an interrupt frame (struct cpu_regs) on the task's kernel
; stack, handed to %4: ring 3's CS %1, RIP rcx less %2, vector %3. Back by IRET, at label %5.
%macro syscall_frame_and_call 5
	swapgs
	mov [gs:CPU_USER_RSP], rsp
	mov rsp, [gs:CPU_KERNEL_STACK_TOP]
	push GDT_USER_DATA | RPL_USER	; ss
	push qword [gs:CPU_USER_RSP]	; rsp
	push r11			; rflags
	push %1 | RPL_USER		; cs
%if %2
	sub rcx, %2
%endif
	push rcx			; rip
	push 0				; error code
	push %3				; vector
	push_general_registers
	cld
	mov rdi, rsp
	call %4
	pop_general_registers
	add rsp, 16			; vector and error code
	swapgs
%5:
	iretq
%endmacro

section .text
; On entry: rcx = user rip, r11 = user rflags, rsp = user rsp, interrupts off (SFMASK).
syscall_entry:
	syscall_frame_and_call GDT_USER_CODE, 0, VECTOR_SYSCALL, handle_syscall, syscall_entry_iret

; IA32_CSTAR: SYSCALL from compatibility mode, which AMD CPUs (and QEMU) deliver here in 64-bit mode,
; with the kernel's CS but ring 3's RSP (AMD APM Vol. 3 SYSCALL). Intel raises #UD instead (SDM
; Vol. 2B SYSCALL); so does this entry: it switches to the kernel stack as the 64-bit entry does,
; then hands handle_exception() the frame of a ring-3 #UD at the SYSCALL, RIP = RCX - 2.
syscall_compat_entry:
	syscall_frame_and_call GDT_USER_CODE32, SYSCALL_LENGTH, X86_EXC_UD, handle_exception, syscall_compat_entry_iret

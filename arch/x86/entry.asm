; SPDX-License-Identifier: MIT
; Exception and interrupt entry: one stub per vector, one common path into handle_exception().

extern handle_exception
%include "arch/x86/registers.inc"

global interrupt_stubs
global interrupt_entry_end
global entry_common_iret
global entry_paranoid_iret


; Vectors for which the CPU pushes an error code (SDM Vol. 3 Table 6-1).
%define HAS_ERROR_CODE(v) ((v) == 8 || ((v) >= 10 && (v) <= 14) || (v) == 17 || (v) == 21 || (v) == 29 || (v) == 30)

; Vectors that may arrive before the SYSCALL entry's SWAPGS (a data #DB held back by MOV SS) or at any
; moment (NMI, #MC, #DF): they cannot trust CS to tell which GS base is live.
%define PARANOID(v) ((v) == 1 || (v) == 2 || (v) == 8 || (v) == 18)

MSR_GS_BASE equ 0xc0000101
CPU_REGS_SIZE equ 22 * 8		; sizeof(struct cpu_regs): 15 registers, vector, error code, 5 of frame

STUB_SIZE equ 16

section .text
align 16
; Each stub is exactly STUB_SIZE bytes, so the IDT can index them as interrupt_stubs + 16 * v.
interrupt_stubs:
%assign vector 0
%rep 256
	align STUB_SIZE
%if !HAS_ERROR_CODE(vector)
	push 0
%endif
	push vector
%if PARANOID(vector)
	jmp entry_paranoid
%else
	jmp entry_common
%endif
%assign vector vector + 1
%endrep

; Frame on entry: vector, error code, rip, cs, rflags, rsp, ss (struct cpu_regs, upper part).
entry_common:
	test byte [rsp + 3 * 8], 3	; saved CS: from ring 3?
	jz .from_kernel
	swapgs
.from_kernel:
	push_general_registers
	cld
	mov rdi, rsp
	call handle_exception
	pop_general_registers
	test byte [rsp + 3 * 8], 3
	jz .to_kernel
	swapgs
.to_kernel:
	add rsp, 16			; vector and error code
entry_common_iret:
	iretq

; Like entry_common, but the live GS base decides, whatever CS says (SDM Vol. 2B SWAPGS): it is the
; kernel's when it is this CPU's struct cpu, which gdt.c keeps just above the IST frame. Not its
; sign: ring 3 can set any GS base where WRGSBASE works without CR4.FSGSBASE (KVM-PVM), or with it.
entry_paranoid:
	push_general_registers
	mov ecx, MSR_GS_BASE
	rdmsr
	shl rdx, 32
	or rax, rdx
	xor ebx, ebx			; rbx: 1 when this entry swapped GS
	cmp rax, [rsp + CPU_REGS_SIZE]	; the IST_CPU_SLOT (arch/x86/gdt.h)
	je .kernel_gs
	swapgs
	mov ebx, 1
.kernel_gs:
	cld
	mov rdi, rsp
	call handle_exception
	test ebx, ebx
	jz .restore
	swapgs
.restore:
	pop_general_registers
	add rsp, 16			; vector and error code
entry_paranoid_iret:
	iretq

; The end of the code above: dr/ refuses breakpoints in [interrupt_stubs, interrupt_entry_end).
interrupt_entry_end:

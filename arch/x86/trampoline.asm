; SPDX-License-Identifier: MIT
; Application-processor start-up: copied to TRAMPOLINE_BASE (below 1 MiB) and entered there by a
; STARTUP IPI in real mode with CS = TRAMPOLINE_BASE >> 4, IP = 0 (SDM Vol. 3 §9.4.4.1). It goes
; real mode -> protected mode -> IA-32e mode as SDM Vol. 3 §10.8.5 orders it, then calls the
; 64-bit entry that the boot CPU left in the parameters, on the stack it left there.
;
; The parameters (struct trampoline_parameters in arch/x86/ap_start.c, same order) are patched into
; the copy: CR3, EFER and the entry once, the stack and the index before each CPU is started.
; The page tables they name identity-map the trampoline.

%include "arch/x86/registers.inc"

TRAMPOLINE_BASE	equ 0x8000
TRAMPOLINE_CODE32	equ 0x08
TRAMPOLINE_DATA	equ 0x10
TRAMPOLINE_CODE64	equ 0x18

%define AT(label) (TRAMPOLINE_BASE + (label) - trampoline_start)

global trampoline_start
global trampoline_end
global trampoline_parameters

section .rodata
align 16
bits 16
trampoline_start:
	cli
	cld
	mov ax, cs
	mov ds, ax
	lgdt [trampoline_gdt_pointer - trampoline_start]
	mov eax, cr0
	or eax, CR0_PE
	mov cr0, eax
	jmp dword TRAMPOLINE_CODE32:AT(protected_entry)

bits 32
protected_entry:
	mov ax, TRAMPOLINE_DATA
	mov ds, ax
	mov es, ax
	mov ss, ax
	mov eax, cr4
	or eax, CR4_PAE
	mov cr4, eax
	mov eax, [AT(parameter_cr3)]
	mov cr3, eax
	mov ecx, MSR_EFER
	rdmsr
	or eax, [AT(parameter_efer)]
	wrmsr
	mov eax, cr0
	or eax, CR0_PG | CR0_WP
	mov cr0, eax
	jmp TRAMPOLINE_CODE64:AT(long_entry)

bits 64
long_entry:
	xor eax, eax
	mov ds, ax
	mov es, ax
	mov ss, ax
	mov fs, ax
	mov gs, ax
	mov rsp, [AT(parameter_stack)]
	mov edi, [AT(parameter_index)]
	mov rax, [AT(parameter_entry)]
	call rax			; does not return
.halt:
	cli
	hlt
	jmp .halt

align 8
trampoline_gdt:
	dq 0
	dq 0x00cf9a000000ffff		; 0x08: 32-bit ring-0 code, flat
	dq 0x00cf92000000ffff		; 0x10: ring-0 data, flat
	dq 0x00af9a000000ffff		; 0x18: 64-bit ring-0 code
trampoline_gdt_pointer:
	dw trampoline_gdt_pointer - trampoline_gdt - 1
	dd AT(trampoline_gdt)

align 8
trampoline_parameters:
parameter_cr3:
	dd 0				; the AP page tables, below 4 GiB
parameter_efer:
	dd 0				; ORed into EFER: LME, and NXE and SCE as the boot CPU has them
parameter_stack:
	dq 0
parameter_entry:
	dq 0
parameter_index:
	dd 0
	dd 0
trampoline_end:

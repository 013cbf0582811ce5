; SPDX-License-Identifier: MIT
; 32-bit multiboot entry: build the boot page tables, enter long mode, jump to the higher half.
;
; Boot page tables (they stay the kernel's for good; every address space shares PML4 256-511):
;   PML4[0]   -> identity map of 0-4 GiB, only until paging_init() removes it
;   PML4[256] -> direct map: 0xffff800000000000 + phys, 0-4 GiB, 3-4 GiB uncached (MMIO)
;   PML4[511] -> kernel image: 0xffffffff80000000 + phys, 0-2 GiB
; All with 2 MiB pages.

%include "boot/multiboot.inc"
%include "arch/x86/registers.inc"

COM1		equ 0x3f8
PD_ENTRIES	equ 4 * 512		; four page directories: 4 GiB
PD_UNCACHED	equ 3 * 512		; first entry at 3 GiB

extern start_kernel
extern __bss_start
extern __bss_end
global boot_entry
global boot_pml4

section .boot.text
bits 32
boot_entry:
	cli
	cld
	mov [boot_magic], eax
	mov [boot_info], ebx

	mov eax, 0x80000000
	cpuid
	cmp eax, 0x80000001
	jb no_long_mode
	mov eax, 0x80000001
	cpuid
	test edx, CPUID_80000001_EDX_LM
	jz no_long_mode
	mov ebp, edx			; keep the NX bit for EFER below

	; Zero .bss: it holds the page tables and the stack.
	mov edi, __bss_start - KERNEL_VIRTUAL_BASE
	mov ecx, __bss_end - KERNEL_VIRTUAL_BASE
	sub ecx, edi
	shr ecx, 2
	xor eax, eax
	rep stosd

	mov edi, boot_pd_direct - KERNEL_VIRTUAL_BASE
	; A and D preset: the Debug Store may sit anywhere in the direct map (SDM DS restrictions).
	mov eax, PTE_PRESENT | PTE_WRITE | PTE_HUGE | PTE_ACCESSED | PTE_DIRTY
	xor edx, edx
	mov ecx, PD_ENTRIES
.fill_pd:
	mov [edi], eax
	mov [edi + 4], edx
	add eax, 0x200000
	adc edx, 0
	add edi, 8
	loop .fill_pd

	mov edi, boot_pd_direct - KERNEL_VIRTUAL_BASE + PD_UNCACHED * 8
	mov ecx, PD_ENTRIES - PD_UNCACHED
.uncache_pd:
	or dword [edi], PTE_PCD | PTE_PWT
	add edi, 8
	loop .uncache_pd

	mov edi, boot_pdpt_direct - KERNEL_VIRTUAL_BASE
	mov eax, boot_pd_direct - KERNEL_VIRTUAL_BASE + (PTE_PRESENT | PTE_WRITE | PTE_ACCESSED)
	mov ecx, 4
.fill_pdpt:
	mov [edi], eax
	add eax, 4096
	add edi, 8
	loop .fill_pdpt

	mov edi, boot_pdpt_kernel - KERNEL_VIRTUAL_BASE
	mov eax, boot_pd_direct - KERNEL_VIRTUAL_BASE + (PTE_PRESENT | PTE_WRITE | PTE_ACCESSED)
	mov [edi + 510 * 8], eax
	add eax, 4096
	mov [edi + 511 * 8], eax

	mov edi, boot_pml4 - KERNEL_VIRTUAL_BASE
	mov eax, boot_pdpt_direct - KERNEL_VIRTUAL_BASE + (PTE_PRESENT | PTE_WRITE | PTE_ACCESSED)
	mov [edi], eax
	mov [edi + 256 * 8], eax
	mov eax, boot_pdpt_kernel - KERNEL_VIRTUAL_BASE + (PTE_PRESENT | PTE_WRITE | PTE_ACCESSED)
	mov [edi + 511 * 8], eax

	mov cr3, edi
	mov eax, cr4
	or eax, CR4_PAE
	mov cr4, eax
	mov ecx, MSR_EFER
	rdmsr
	or eax, EFER_LME
	test ebp, CPUID_80000001_EDX_NX
	jz .no_nx
	or eax, EFER_NXE
.no_nx:
	wrmsr
	mov eax, cr0
	or eax, CR0_PG | CR0_PE | CR0_WP
	mov cr0, eax

	lgdt [boot_gdt_pointer]
	jmp GDT_KERNEL_CODE:long_mode_entry

; Without long mode nothing else can run: say so on COM1 and stop.
no_long_mode:
	mov esi, no_long_mode_message
	mov dx, COM1
.next:
	lodsb
	test al, al
	jz .halt
	out dx, al
	jmp .next
.halt:
	hlt
	jmp .halt

bits 64
long_mode_entry:
	mov ax, GDT_KERNEL_DATA
	mov ds, ax
	mov es, ax
	mov ss, ax
	xor eax, eax
	mov fs, ax
	mov gs, ax
	mov rax, higher_half_entry
	jmp rax

section .boot.data
align 8
boot_gdt:
	dq 0
	dq 0x00af9a000000ffff		; 0x08: 64-bit ring-0 code
	dq 0x00cf92000000ffff		; 0x10: ring-0 data
boot_gdt_pointer:
	dw boot_gdt_pointer - boot_gdt - 1
	dd boot_gdt
boot_magic:
	dd 0
boot_info:
	dd 0
no_long_mode_message:
	db "switchyard: this CPU has no long mode", 13, 10, 0

section .text
higher_half_entry:
	mov rsp, boot_stack_top
	xor ebp, ebp
	mov edi, [abs boot_magic]
	mov esi, [abs boot_info]
	call start_kernel
.halt:
	cli
	hlt
	jmp .halt

section .bss
align 4096
boot_pml4:
	resb 4096
boot_pdpt_direct:
	resb 4096
boot_pdpt_kernel:
	resb 4096
boot_pd_direct:
	resb 4096 * 4
align 16
boot_stack:
	resb 16384
boot_stack_top:

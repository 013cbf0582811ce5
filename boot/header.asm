; SPDX-License-Identifier: MIT
; Multiboot1 and multiboot2 headers; the linker places .multiboot first in the image.

%include "boot/multiboot.inc"

section .multiboot
align 8
mb2_header:
	dd MB2_HEADER_MAGIC
	dd MB2_ARCHITECTURE_I386
	dd mb2_header_end - mb2_header
	dd -(MB2_HEADER_MAGIC + MB2_ARCHITECTURE_I386 + (mb2_header_end - mb2_header))
	; No entry-address or EFI tags: GRUB then enters in 32-bit protected mode, paging off,
	; boot services exited, on BIOS and on UEFI alike.
	align 8
	dw MB2_TAG_END
	dw 0
	dd 8
mb2_header_end:

align 4
mb1_header:
	dd MB1_HEADER_MAGIC
	dd MB1_HEADER_PAGE_ALIGN | MB1_HEADER_MEMORY_INFO
	dd -(MB1_HEADER_MAGIC + (MB1_HEADER_PAGE_ALIGN | MB1_HEADER_MEMORY_INFO))

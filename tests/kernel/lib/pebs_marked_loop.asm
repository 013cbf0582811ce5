; SPDX-License-Identifier: MIT
; A kernel loop with known register values, for PEBS records to be checked against
; (tests/kernel/pebs_registers.c): r12 and r13 hold the marks from the first iteration to the
; last, both restored on return (callee-saved, System V AMD64 ABI).

PEBS_MARK_R12	equ 0x5eb512a1c0de0012	; tests/kernel/pebs_registers.c: PEBS_MARK_R12
PEBS_MARK_R13	equ 0x5eb513a1c0de0013	; tests/kernel/pebs_registers.c: PEBS_MARK_R13

section .text

global pebs_marked_loop, pebs_marked_loop_body, pebs_marked_loop_end

; void pebs_marked_loop(uint64_t iterations): 2 instructions an iteration, iterations >= 1.
pebs_marked_loop:
	push r12
	push r13
	mov r12, PEBS_MARK_R12
	mov r13, PEBS_MARK_R13
pebs_marked_loop_body:
	dec rdi
	jnz pebs_marked_loop_body
pebs_marked_loop_end:
	pop r13
	pop r12
	ret

; SPDX-License-Identifier: MIT
; Known branch sequences for the lbr suite (tests/kernel/lib/lbr_probe.h): each branch from a
; labelled instruction to a labelled target, one of each kind LBR_SELECT filters.

section .text

global lbr_probe
global lbr_probe_jcc, lbr_probe_jcc_target
global lbr_probe_call, lbr_probe_call_return
global lbr_probe_callee, lbr_probe_callee_ret
global lbr_probe_ind_jmp, lbr_probe_ind_target
global lbr_probe_rel_jmp, lbr_probe_rel_target
global lbr_probe_ind_call, lbr_probe_ind_call_return
global lbr_probe_last
global lbr_probe_end
global lbr_probe_loop
global lbr_probe_other, lbr_probe_other_end

; Taken, oldest first: JZ (taken), JNZ (not taken: no entry), CALL rel32, RET, JMP RAX,
; JMP rel32, CALL RAX, RET, and the last RET back to the caller.
lbr_probe:
	xor eax, eax			; ZF = 1
lbr_probe_jcc:
	jz lbr_probe_jcc_target
	ud2
lbr_probe_jcc_target:
	jnz lbr_probe			; not taken
lbr_probe_call:
	call lbr_probe_callee
lbr_probe_call_return:
	lea rax, [rel lbr_probe_ind_target]
lbr_probe_ind_jmp:
	jmp rax
	ud2
lbr_probe_ind_target:
lbr_probe_rel_jmp:
	jmp strict near lbr_probe_rel_target
	ud2
lbr_probe_rel_target:
	lea rax, [rel lbr_probe_callee]
lbr_probe_ind_call:
	call rax
lbr_probe_ind_call_return:
lbr_probe_last:
	ret
lbr_probe_callee:
lbr_probe_callee_ret:
	ret

; rdi = calls of lbr_probe, at least 1: all of its branches stay inside [lbr_probe, lbr_probe_end).
lbr_probe_loop:
	call lbr_probe
	dec rdi
	jnz lbr_probe_loop
	ret
lbr_probe_end:

; Other code for another task: a loop of taken JCCs, then the return.
lbr_probe_other:
	mov ecx, 4
.loop:
	dec ecx
	jnz .loop
	ret
lbr_probe_other_end:

; SPDX-License-Identifier: MIT
; A loop of known length for the handler tests (tests/kernel/lib/handler_probe.h): rdi times DEC
; and a JNZ back to it, then RET.

section .text

global handler_probe_loop
global handler_probe_loop_head, handler_probe_loop_branch, handler_probe_loop_ret

; 2 * rdi + 2 instructions (rdi >= 1), rdi + 1 branches retired, rdi taken: rdi - 1 JNZ back to
; the head, and the RET.
handler_probe_loop:
	mov rcx, rdi
handler_probe_loop_head:
	dec rcx
handler_probe_loop_branch:
	jnz handler_probe_loop_head
handler_probe_loop_ret:
	ret

; SPDX-License-Identifier: MIT
; switch_context(save, load) and the first "return" of a new task (arch/x86/context.h).

global switch_context
global context_trampoline

section .text
; The push order fixes struct context: rip (by call), rbp, rbx, r12, r13, r14, r15.
switch_context:
	push rbp
	push rbx
	push r12
	push r13
	push r14
	push r15
	mov [rdi], rsp
	mov rsp, rsi
	pop r15
	pop r14
	pop r13
	pop r12
	pop rbx
	pop rbp
	ret

; context_init() puts the entry in r12 and its argument in r13.
context_trampoline:
	mov rdi, r13
	xor ebp, ebp			; end of the frame-pointer chain
	call r12
	ud2				; entry must not return

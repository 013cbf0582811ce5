; SPDX-License-Identifier: MIT
; Ring-3 programs that read their own counters with RDPMC from the self-monitoring page
; (pmu/pmu.h struct pmu_user_page), linked into .user_text (tests/kernel/pmu_self.c).

%include "arch/x86/user-abi.inc"

extern user_syscall_gate

USER_PMU_BASE	equ 0x40000000	; arch/x86/user-abi.h (checked in tests/kernel/pmu_self.c)

; struct self_rounds (tests/kernel/pmu_self.c), at rdi:
SELF_ITERATIONS	equ 0
SELF_ROUNDS	equ 8
SELF_EVENT	equ 16		; the event read: its offset in the page
SELF_RETRIES	equ 24
SELF_REGRESSIONS equ 32
SELF_LAST	equ 40
SELF_DONE	equ 48
SELF_T0		equ 56
SELF_T1		equ 64
SELF_T2		equ 72
SELF_REPEAT	equ 80
SELF_RACE	equ 88		; nonzero: each round reads racing a yield, then plainly
; struct pmu_user_page
PAGE_SEQ	equ 0
EVENT_INDEX	equ 0
EVENT_COUNT	equ 8
EVENT_BASE	equ 16
EVENT_MASK	equ 24

section .user_text progbits alloc exec nowrite align=16

; The read (r14 = the page, rsi = its event, rbx = struct self_rounds): rax = the event's count.
; After the RDPMC that counts, 8 instructions retire here to the return's.
self_read:
.again:
	mov r8, [r14 + PAGE_SEQ]
	mov rcx, [rsi + EVENT_INDEX]
	mov r9, [rsi + EVENT_COUNT]
	mov r10, [rsi + EVENT_BASE]
	mov r11, [rsi + EVENT_MASK]
	mov rax, r9
	test rcx, rcx
	jz .check			; not on a counter: the count alone
	dec ecx
	rdpmc
	shl rdx, 32
	or rax, rdx
	sub rax, r10
	and rax, r11
	add rax, r9
.check:
	cmp r8, [r14 + PAGE_SEQ]
	jne .retry
	ret
.retry:					; the page changed under the read: a switch came between
	inc qword [rbx + SELF_RETRIES]
	jmp .again

; A read that yields between taking the page and its RDPMC: the worst moment for a switch. The
; other task runs on the same counter meanwhile, and the page's base is no longer this task's:
; the changed seq must send it back to read again (self_read, counting the retry).
self_read_racing:
	mov r8, [r14 + PAGE_SEQ]
	push r8
	push qword [rsi + EVENT_INDEX]
	push qword [rsi + EVENT_COUNT]
	push qword [rsi + EVENT_BASE]
	push qword [rsi + EVENT_MASK]
	mov eax, SYSCALL_YIELD
	call user_syscall_gate
	mov rsi, r14
	add rsi, [rbx + SELF_EVENT]
	pop r11
	pop r10
	pop r9
	pop rcx
	pop r8
	mov rax, r9
	test rcx, rcx
	jz .check
	dec ecx
	rdpmc
	shl rdx, 32
	or rax, rdx
	sub rax, r10
	and rax, r11
	add rax, r9
.check:
	cmp r8, [r14 + PAGE_SEQ]
	jne .retry
	ret
.retry:
	inc qword [rbx + SELF_RETRIES]
	jmp self_read

; rdi = struct self_rounds: rounds of (the DEC/JNZ loop, a read, a yield); a read that returns
; less than the one before is a regression. Then a last read, stored, and sleep until woken:
; 6 instructions after that read's return, the SYSCALL's included.
global user_self_rounds
user_self_rounds:
	mov rbx, rdi
	mov r14, USER_PMU_BASE
	mov rsi, r14
	add rsi, [rbx + SELF_EVENT]
	mov r12, [rbx + SELF_ROUNDS]
	xor r15, r15
.round:
	mov r13, [rbx + SELF_ITERATIONS]
.loop:
	dec r13
	jnz .loop
	cmp qword [rbx + SELF_RACE], 0
	je .plain
	call self_read_racing
	cmp rax, r15
	jae .raced
	inc qword [rbx + SELF_REGRESSIONS]
.raced:
	mov r15, rax
.plain:
	call self_read
	cmp rax, r15
	jae .monotonic
	inc qword [rbx + SELF_REGRESSIONS]
.monotonic:
	mov r15, rax
	mov eax, SYSCALL_YIELD
	call user_syscall_gate
	dec r12
	jnz .round
	call self_read
	mov [rbx + SELF_LAST], rax
	mov qword [rbx + SELF_DONE], 1
	mov rdi, -1
	mov eax, SYSCALL_SLEEP
	call user_syscall_gate
	xor edi, edi
	mov eax, SYSCALL_EXIT
	call user_syscall_gate
	ud2

; rdi = struct self_rounds: SELF_REPEAT reads, then as many SYSCALL_GET_TASK_ID calls, timed
; with RDTSC (t0, t1, t2); exit(0).
global user_self_read_cost
user_self_read_cost:
	mov rbx, rdi
	mov r14, USER_PMU_BASE
	mov rsi, r14
	add rsi, [rbx + SELF_EVENT]
	mov r12, [rbx + SELF_REPEAT]
	rdtsc
	shl rdx, 32
	or rax, rdx
	mov [rbx + SELF_T0], rax
.reads:
	call self_read
	dec r12
	jnz .reads
	rdtsc
	shl rdx, 32
	or rax, rdx
	mov [rbx + SELF_T1], rax
	mov r12, [rbx + SELF_REPEAT]
.calls:
	mov eax, SYSCALL_GET_TASK_ID
	call user_syscall_gate
	dec r12
	jnz .calls
	rdtsc
	shl rdx, 32
	or rax, rdx
	mov [rbx + SELF_T2], rax
	xor edi, edi
	mov eax, SYSCALL_EXIT
	call user_syscall_gate
	ud2

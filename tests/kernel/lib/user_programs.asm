; SPDX-License-Identifier: MIT
; The tests' user programs, linked into .user_text and mapped at USER_TEXT_BASE
; (tests/kernel/lib/user_programs.h). Position-independent: they touch only registers, their stack
; and what rdi points to.

%include "arch/x86/user-abi.inc"

USER_NOT_FAULTED	equ 0xbad
REGISTER_PATTERN_ROUNDS	equ 150
SPIN_PER_ROUND		equ 2000
PATTERN_STEP		equ 0x9e3779b97f4a7c15	; distinct values for each register

extern user_syscall_gate		; arch/x86/user_gate.asm

; Every system call goes through user_syscall_gate, whose instruction the kernel may patch at
; boot (arch/x86/syscall.h, syscall_use_trap()). Clobbers rcx and r11.
%macro system_call 1
	mov eax, %1
	call user_syscall_gate
%endmacro

%macro exit_with 1
	mov rdi, %1
	system_call SYSCALL_EXIT
	ud2				; exit does not return
%endmacro

section .user_text progbits alloc exec nowrite align=16

global user_read_byte
user_read_byte:
	movzx edi, byte [rdi]
	system_call SYSCALL_EXIT
	ud2

global user_write_byte
user_write_byte:
	mov byte [rdi], 1
	exit_with 0

; One privileged instruction each: #GP(0) at CPL 3 (SDM Vol. 3 §5.9).
%macro privileged 2
global user_%1
global user_%1_at
user_%1:
user_%1_at:
	%2
	exit_with USER_NOT_FAULTED
%endmacro

privileged wrmsr, wrmsr
privileged rdmsr, rdmsr
privileged write_dr7, {mov dr7, rax}
privileged read_dr0, {mov rax, dr0}
privileged hlt, hlt
privileged cli, cli
privileged lgdt, {lgdt [rsp]}
; Descriptor-table reads: allowed in ring 3 unless CR4.UMIP is set, then #GP(0) (SDM Vol. 3 §2.5).
privileged sgdt, {sgdt [rsp - 16]}
privileged sidt, {sidt [rsp - 16]}
privileged sldt, {sldt ax}
privileged str, {str ax}
privileged smsw, {smsw ax}

; Registers checked, in this order; the exit code names the first corrupted one (1-based).
%define PATTERN_GPRS rbx, rcx, rdx, rsi, rbp, r8, r9, r10, r11, r12, r13, r14, r15

; rdi = seed. rax counts the spin, rdi the rounds; everything else carries the pattern.
global user_register_pattern
user_register_pattern:
	mov rax, PATTERN_STEP
	; Fill: the k-th register gets k * (seed + 1) * PATTERN_STEP.
	lea rbx, [rdi + 1]		; never all zero, whatever the seed
	imul rbx, rax
	mov rcx, rbx
	add rcx, rbx
	mov rdx, rcx
	add rdx, rbx
	mov rsi, rdx
	add rsi, rbx
	mov rbp, rsi
	add rbp, rbx
	mov r8, rbp
	add r8, rbx
	mov r9, r8
	add r9, rbx
	mov r10, r9
	add r10, rbx
	mov r11, r10
	add r11, rbx
	mov r12, r11
	add r12, rbx
	mov r13, r12
	add r13, rbx
	mov r14, r13
	add r14, rbx
	mov r15, r14
	add r15, rbx
%assign k 0
%rep 16
	movq xmm %+ k, rbx		; xmm k: rbx low, r(8 + k % 8) high
	pinsrq xmm %+ k, r %+ %eval(8 + (k % 8)), 1
	%assign k k + 1
%endrep
	push rbx			; the reference copies, on the user stack
	push rcx
	push rdx
	push rsi
	push rbp
	push r8
	push r9
	push r10
	push r11
	push r12
	push r13
	push r14
	push r15
	mov rdi, REGISTER_PATTERN_ROUNDS
.round:
	stc
	mov eax, SPIN_PER_ROUND
.spin:					; preemption lands here, mid-pattern
	dec eax				; leaves CF alone
	jnz .spin
	jnc .bad_flags
	push rdi
	push rcx			; system calls clobber rcx and r11 by definition
	push r11
	system_call SYSCALL_YIELD
	pop r11
	pop rcx
	pop rdi
	jnc .bad_flags			; CF survived the system call?
	; Compare each GPR with its copy: [rsp] is r15, [rsp + 96] is rbx.
	cmp rbx, [rsp + 96]
	jne .bad_1
	cmp rcx, [rsp + 88]
	jne .bad_2
	cmp rdx, [rsp + 80]
	jne .bad_3
	cmp rsi, [rsp + 72]
	jne .bad_4
	cmp rbp, [rsp + 64]
	jne .bad_5
	cmp r8, [rsp + 56]
	jne .bad_6
	cmp r9, [rsp + 48]
	jne .bad_7
	cmp r10, [rsp + 40]
	jne .bad_8
	cmp r11, [rsp + 32]
	jne .bad_9
	cmp r12, [rsp + 24]
	jne .bad_10
	cmp r13, [rsp + 16]
	jne .bad_11
	cmp r14, [rsp + 8]
	jne .bad_12
	cmp r15, [rsp]
	jne .bad_13
%assign k 0
%rep 16
	movq rax, xmm %+ k
	cmp rax, rbx
	jne .bad_xmm_ %+ k
	pextrq rax, xmm %+ k, 1
	cmp rax, r %+ %eval(8 + (k % 8))
	jne .bad_xmm_ %+ k
	%assign k k + 1
%endrep
	dec rdi
	jnz .round
	exit_with 0
%assign number 1
%rep 13
.bad_ %+ number:
	exit_with number
	%assign number number + 1
%endrep
%assign k 0
%rep 16
.bad_xmm_ %+ k:
	exit_with 14 + k
	%assign k k + 1
%endrep
.bad_flags:
	exit_with 30

; rdi = struct yield_timing (arch/x86/user.h): until stop is set or capacity samples are
; taken, the TSC cycles from before a yield to after it; then count, exit(0).
YIELD_STOP	equ 0
YIELD_CAPACITY	equ 8
YIELD_COUNT	equ 16
YIELD_SAMPLES	equ 24

global user_yield_timing
user_yield_timing:
	mov rsi, rdi
	xor r9d, r9d			; samples taken (rcx does not survive SYSCALL)
.sample:
	cmp qword [rsi + YIELD_STOP], 0
	jne .done
	cmp r9, [rsi + YIELD_CAPACITY]
	jae .done
	lfence
	rdtsc
	shl rdx, 32
	or rax, rdx
	mov r8, rax
	system_call SYSCALL_YIELD
	lfence
	rdtsc
	shl rdx, 32
	or rax, rdx
	sub rax, r8
	mov [rsi + YIELD_SAMPLES + r9 * 8], rax
	inc r9
	jmp .sample
.done:
	mov [rsi + YIELD_COUNT], r9
	exit_with 0

; A fault handler (task_set_fault_handler): rdi = vector; exit(USER_FAULT_EXIT_BASE + vector).
USER_FAULT_EXIT_BASE	equ 100
global user_exit_with_vector
user_exit_with_vector:
	add rdi, USER_FAULT_EXIT_BASE
	system_call SYSCALL_EXIT
	ud2

; rdi = a NUL-terminated string in user memory.
global user_write_message
user_write_message:
	mov rsi, rdi
	xor edx, edx
.length:
	cmp byte [rsi + rdx], 0
	je .write
	inc rdx
	jmp .length
.write:
	mov rdi, rsi
	mov rsi, rdx
	system_call SYSCALL_WRITE
	system_call SYSCALL_GET_TASK_ID
	mov rdi, rax
	system_call SYSCALL_EXIT
	ud2

; rdi = struct counted_rounds (arch/x86/user.h): rounds of (iterations DEC/JNZ, then yield), then
; exit(0) at once if exit_when_done is set, else sleep until woken, then exit(0). Its ring-3
; instructions are a known number: 2 per iteration, ROUND_OVERHEAD a round, and a fixed few
; around them.
COUNTED_ITERATIONS	equ 0
COUNTED_ROUNDS		equ 8
COUNTED_DONE		equ 16
COUNTED_EXIT_WHEN_DONE	equ 24
global user_counted_rounds
user_counted_rounds:
	mov rbx, rdi			; preserved by system calls
	mov r12, [rbx + COUNTED_ROUNDS]
.round:
	mov r13, [rbx + COUNTED_ITERATIONS]
.loop:
	dec r13
	jnz .loop
	system_call SYSCALL_YIELD
	dec r12
	jnz .round
	mov qword [rbx + COUNTED_DONE], 1
	cmp qword [rbx + COUNTED_EXIT_WHEN_DONE], 0
	jne .exit
	mov rdi, -1			; until sched_wake()
	system_call SYSCALL_SLEEP
.exit:
	exit_with 0

; rdi = milliseconds.
global user_sleep
user_sleep:
	system_call SYSCALL_SLEEP
	exit_with 0

; rdi = struct user_dr_script (arch/x86/user.h): optionally install a breakpoint by system call,
; repeat an action on the target, then read the task's hits into the script; exit(0).
DR_SCRIPT_INSTALL	equ 0
DR_SCRIPT_ADDRESS	equ 8
DR_SCRIPT_TYPE		equ 16
DR_SCRIPT_LENGTH	equ 24
DR_SCRIPT_ACTION	equ 32
DR_SCRIPT_TARGET	equ 40
DR_SCRIPT_REPEAT	equ 48
DR_SCRIPT_RESULT	equ 56
DR_SCRIPT_HIT_COUNT	equ 64
DR_SCRIPT_HITS		equ 72
DR_SCRIPT_HITS_MAX	equ 16
ACTION_CALL		equ 1
ACTION_WRITE		equ 2
ACTION_READ		equ 3

global user_dr_script
user_dr_script:
	mov rbx, rdi			; preserved by system calls
	cmp qword [rbx + DR_SCRIPT_INSTALL], 0
	je .act
	mov rdi, [rbx + DR_SCRIPT_ADDRESS]
	mov rsi, [rbx + DR_SCRIPT_TYPE]
	mov rdx, [rbx + DR_SCRIPT_LENGTH]
	system_call SYSCALL_DR_INSTALL
	mov [rbx + DR_SCRIPT_RESULT], rax
.act:
	mov r12, [rbx + DR_SCRIPT_REPEAT]
	mov r13, [rbx + DR_SCRIPT_TARGET]
.again:
	test r12, r12
	jz .read_hits
	dec r12
	mov rax, [rbx + DR_SCRIPT_ACTION]
	cmp rax, ACTION_CALL
	jne .not_call
	call r13
	jmp .again
.not_call:
	cmp rax, ACTION_WRITE
	jne .not_write
	mov byte [r13], 1
	jmp .again
.not_write:
	cmp rax, ACTION_READ
	jne .again
	movzx eax, byte [r13]
	jmp .again
.read_hits:
	lea rdi, [rbx + DR_SCRIPT_HITS]
	mov rsi, DR_SCRIPT_HITS_MAX
	system_call SYSCALL_DR_READ_HITS
	mov [rbx + DR_SCRIPT_HIT_COUNT], rax
	exit_with 0

; A breakpoint target in user code.
global user_dr_target
user_dr_target:
	nop
	ret

; rdi = where to store three qwords: the records in the task's BTS buffer, and the from and to
; of the last one, read through its read-only view of the Debug Store (USER_DS_BASE), after 16
; taken branches of its own; exit(0).
USER_DS_BASE		equ 0x30000000
USER_DS_BTS_OFFSET	equ 0x100000
DS_BTS_BASE		equ 0x00
DS_BTS_INDEX		equ 0x08
BTS_RECORD_SIZE		equ 24

global user_ds_poll
user_ds_poll:
	mov rsi, rdi
	mov ecx, 16			; some ring-3 branches first, for a real BTS to record
.branch:
	dec ecx
	jnz .branch
	mov rax, [USER_DS_BASE + DS_BTS_INDEX]
	sub rax, [USER_DS_BASE + DS_BTS_BASE]	; bytes used: the index is a kernel address
	mov r8, rax
	xor edx, edx
	mov ecx, BTS_RECORD_SIZE
	div rcx
	mov [rsi], rax
	test rax, rax
	jz .done
	lea r9, [USER_DS_BASE + USER_DS_BTS_OFFSET + r8 - BTS_RECORD_SIZE]
	mov rax, [r9]
	mov [rsi + 8], rax
	mov rax, [r9 + 8]
	mov [rsi + 16], rax
.done:
	exit_with 0

; rdi = a counter: read the DS area through the view at USER_DS_BASE and count each read, until
; a read faults (the view was unmapped); the task has no fault handler, so that ends it.
global user_ds_read_loop
user_ds_read_loop:
.again:
	mov rax, [USER_DS_BASE + DS_BTS_BASE]
	inc qword [rdi]
	jmp .again

; Set RFLAGS.TF itself (the kernel did not ask for it): the next instruction traps with DR6.BS.
RFLAGS_TF		equ 0x100
RFLAGS_DF		equ 0x400
global user_set_trap_flag
user_set_trap_flag:
	pushfq
	or qword [rsp], RFLAGS_TF
	popfq
	nop				; #DB (single step) after this one
	nop
	exit_with USER_NOT_FAULTED

; ICEBP (INT1, opcode f1): a #DB trap that sets no DR6 bit (SDM Vol. 3 §18.3.1).
global user_icebp
user_icebp:
	db 0xf1
	exit_with USER_NOT_FAULTED

; STD, then CLI: #GP(0) with RFLAGS.DF set.
global user_fault_with_df
user_fault_with_df:
	std
	cli
	exit_with USER_NOT_FAULTED

; rdi = the stack pointer to switch to; then a push there, which faults when it is not mapped.
global user_bad_stack
user_bad_stack:
	mov rsp, rdi
	push rax
	exit_with USER_NOT_FAULTED

; A fault handler that reports how it was entered: exit(USER_FAULT_EXIT_BASE + vector
; + RFLAGS.TF + RFLAGS.DF, + USER_HANDLER_MISALIGNED unless rsp + 8 is 16-byte aligned).
USER_HANDLER_MISALIGNED	equ 0x10000
global user_fault_entry_report
user_fault_entry_report:
	pushfq
	pop rax
	and eax, RFLAGS_TF | RFLAGS_DF
	add rdi, rax
	add rdi, USER_FAULT_EXIT_BASE
	lea rax, [rsp + 8]
	test eax, 15
	jz .aligned
	add rdi, USER_HANDLER_MISALIGNED
.aligned:
	system_call SYSCALL_EXIT
	ud2

; rdi = struct user_syscall_script (arch/x86/user.h): make each call in turn, with the full
; 64-bit number and arguments, and store what it returned; exit(0).
SCRIPT_COUNT		equ 0
SCRIPT_CALLS		equ 8
CALL_NUMBER		equ 0
CALL_ARG0		equ 8
CALL_ARG1		equ 16
CALL_ARG2		equ 24
CALL_RESULT		equ 32
CALL_SIZE		equ 40

global user_syscall_script
user_syscall_script:
	mov rbx, rdi			; rbx, r12, r13 are preserved by system calls
	lea r12, [rbx + SCRIPT_CALLS]
	mov r13, [rbx + SCRIPT_COUNT]
.next:
	test r13, r13
	jz .done
	mov rax, [r12 + CALL_NUMBER]
	mov rdi, [r12 + CALL_ARG0]
	mov rsi, [r12 + CALL_ARG1]
	mov rdx, [r12 + CALL_ARG2]
	call user_syscall_gate
	mov [r12 + CALL_RESULT], rax
	add r12, CALL_SIZE
	dec r13
	jmp .next
.done:
	exit_with 0

; Set RFLAGS.TF itself and SYSCALL at once (not through the gate: the CALL would trap first).
; FMASK clears TF for the kernel; the IRET back sets it, and the task traps in ring 3.
global user_trap_flag_into_syscall
user_trap_flag_into_syscall:
	mov eax, SYSCALL_GET_TASK_ID
	pushfq
	or qword [rsp], RFLAGS_TF
	popfq
	syscall				; the instruction after POPF: TF applies to it
	nop
	exit_with USER_NOT_FAULTED

; rdi = where to store two qwords: the first record's header (format qword) and its eventing
; IP (the basic group's first qword, after the 16-byte header), read through the read-only view
; of its architectural-PEBS buffer at USER_DS_BASE + USER_DS_PEBS_OFFSET, after 400 DEC/JNZ
; rounds of its own; exit(0).
USER_DS_PEBS_OFFSET	equ 0x200000
ARCH_PEBS_HEADER_BYTES	equ 16

global user_arch_pebs_peek
user_arch_pebs_peek:
	mov rsi, rdi
	mov ecx, 400
.loop:
	dec ecx
	jnz .loop
	mov rax, [USER_DS_BASE + USER_DS_PEBS_OFFSET]
	mov [rsi], rax
	mov rax, [USER_DS_BASE + USER_DS_PEBS_OFFSET + ARCH_PEBS_HEADER_BYTES]
	mov [rsi + 8], rax
	exit_with 0

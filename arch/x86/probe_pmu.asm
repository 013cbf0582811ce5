; SPDX-License-Identifier: MIT
; A known loop between the two WRMSRs of IA32_PERF_GLOBAL_CTRL that start and stop the counters,
; so that what they count is known exactly (arch/x86/probe_pmu.h).

MSR_IA32_PERF_GLOBAL_CTRL	equ 0x38f

; The WRMSR as the accessors in arch/x86/msr.h execute it: as itself, or diverted to a CPU
; model (UD2 and the instruction's bytes, at a site listed in .divert: arch/x86/divert.h).
%macro global_ctrl_write 1
%if %1
%%site:
	ud2
	wrmsr
	section .divert progbits alloc noexec nowrite align=8
	dq %%site
	section .text
%else
	wrmsr
%endif
%endmacro

; rdi = the GLOBAL_CTRL value that starts the counters, rsi = iterations (at least 1). Counted
; between the WRMSRs: 1 + 2 x iterations + 3 instructions, iterations branches (the JNZs).
%macro counted_loop 1
	mov ecx, MSR_IA32_PERF_GLOBAL_CTRL
	mov rax, rdi
	mov rdx, rdi
	shr rdx, 32
	global_ctrl_write %1
	mov rcx, rsi
%%loop:
	dec rcx
	jnz %%loop
	xor eax, eax
	xor edx, edx
	mov ecx, MSR_IA32_PERF_GLOBAL_CTRL
	global_ctrl_write %1
	ret
%endmacro

section .text
global probe_counted_loop_plain
global probe_counted_loop_diverted

probe_counted_loop_plain:
	counted_loop 0

probe_counted_loop_diverted:
	counted_loop 1

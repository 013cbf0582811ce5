# switchyard: one Makefile for the kernel, the host tests, the harness and the set-up.

CC := gcc
LD := ld
NASM := nasm
OBJCOPY := objcopy
HOST_CC := gcc
PYTHON := /usr/bin/python3

BUILD := build

CFLAGS := -std=gnu11 -O2 -g -ffreestanding -fno-pic -fno-pie -fno-stack-protector \
	-fno-builtin -fno-omit-frame-pointer -fno-asynchronous-unwind-tables -fno-toplevel-reorder \
	-mcmodel=kernel -mno-red-zone -mno-sse -mno-mmx -mno-sse2 -mno-avx \
	-Wall -Wextra -Werror -Wstrict-prototypes -Wmissing-prototypes -I. -MMD -MP
NASMFLAGS := -f elf64 -g -I. -Werror
LDFLAGS := -nostdlib -static -z max-page-size=0x1000 -z noexecstack -T boot/kernel.ld

HOST_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -I. \
	-fsanitize=address,undefined -fno-sanitize-recover=all

OBJS := \
	boot/header.o \
	boot/entry.o \
	boot/main.o \
	boot/multiboot.o \
	arch/x86/apic.o \
	arch/x86/context.o \
	arch/x86/cpuid.o \
	arch/x86/debugctl.o \
	arch/x86/divert.o \
	arch/x86/entry.o \
	arch/x86/fpu.o \
	arch/x86/gdt.o \
	arch/x86/paging.o \
	arch/x86/percpu.o \
	arch/x86/pfa.o \
	arch/x86/platform.o \
	arch/x86/platform_report.o \
	arch/x86/probe.o \
	arch/x86/serial.o \
	arch/x86/setjmp.o \
	arch/x86/smp.o \
	arch/x86/spinlock.o \
	arch/x86/switch.o \
	arch/x86/switch_hooks.o \
	arch/x86/syscall.o \
	arch/x86/syscall_entry.o \
	arch/x86/traps.o \
	arch/x86/trampoline.o \
	arch/x86/tsc.o \
	arch/x86/user.o \
	arch/x86/user_entry.o \
	arch/x86/user_probes.o \
	dr/breakpoint.o \
	dr/exception.o \
	dr/install.o \
	dr/layout.o \
	dr/reserve.o \
	dr/switch.o \
	dr/syscall.o \
	ds/area.o \
	ds/context.o \
	ds/detect.o \
	ds/pmi.o \
	ds/records.o \
	ds/switch.o \
	emulator/core.o \
	emulator/decode.o \
	emulator/pebs_record.o \
	emulator/profile.o \
	emulator/registers.o \
	emulator/step.o \
	emulator/store.o \
	lib/acpi.o \
	lib/cmdline.o \
	lib/console.o \
	lib/crc32.o \
	lib/format.o \
	lib/glob.o \
	lib/ktap.o \
	lib/report.o \
	lib/sort.o \
	lib/string.o \
	pmu/detect.o \
	pmu/event.o \
	pmu/pmu.o \
	pmu/rotate.o \
	pmu/scale.o \
	pmu/switch.o \
	runner/debug_state.o \
	runner/isolation.o \
	runner/options.o \
	runner/runner.o \
	sched/scheduler.o \
	sched/syscall.o \
	sched/task.o \
	sched/user.o \
	sched/wait.o

TEST_OBJS := $(patsubst %.c,%.o,$(sort $(wildcard tests/kernel/*.c)))

KERNEL_OBJS := $(addprefix $(BUILD)/,$(OBJS) $(TEST_OBJS))

# Debian packages the build and the tests need; `make deps` installs only the missing ones.
DEPS := gcc make binutils nasm qemu-system-x86 python3 python3-pytest python3-pytest-timeout \
	python3-matplotlib \
	grub-pc-bin grub-efi-amd64-bin grub-common xorriso mtools ovmf ipxe-qemu dnsmasq-base iproute2 \
	python3-serial python3-yaml lava-common

# The two commands of the README: each installs what it needs first.
ACCEL ?= auto
SMP ?= 2
CMDLINE ?=
LOG ?=

all: $(BUILD)/switchyard.elf $(BUILD)/switchyard32.elf

run: deps all
	$(PYTHON) scripts/run --accel $(ACCEL) --smp $(SMP) --cmdline "$(CMDLINE)"

# Benchmarks (tests=*.benchmark_*) under TCG, and KVM when usable: $(BENCH_OUT)/results.json
# and switch-cost.png/.svg.
BENCH_OUT ?= $(BUILD)/bench

bench: deps all
	$(PYTHON) scripts/bench --out $(BENCH_OUT)

# Real hardware: a hybrid BIOS+UEFI GRUB ISO, and a TFTP tree with GRUB netboot images, an iPXE
# script and a dnsmasq.conf. GRUB and the kernel share the serial port CONSOLE (ttyS0, ttyS1,
# 0x2f8[,BAUD]); CMDLINE holds the other kernel options.
CONSOLE ?= ttyS0

iso: deps all
	$(PYTHON) scripts/mkiso --console $(CONSOLE) --cmdline "$(CMDLINE)" --out $(BUILD)/switchyard.iso

pxe: deps all
	$(PYTHON) scripts/mkpxe --console $(CONSOLE) --cmdline "$(CMDLINE)" --out $(BUILD)/pxe

# Only the delivery tests: ISO, PXE, UEFI, dnsmasq, serial capture and LAVA, under TCG.
delivery: deps all
	$(PYTHON) -m pytest -m delivery tests/test_delivery.py

# With LOG=path, judge a log captured elsewhere (real hardware) instead of booting.
ifeq ($(LOG),)
check: deps all host-test
	$(PYTHON) -m pytest
else
check: deps
	$(PYTHON) scripts/run --check-log "$(LOG)"
	SWITCHYARD_LOG="$(abspath $(LOG))" $(PYTHON) -m pytest tests/test_kernel.py
endif

deps:
	@missing=$$(for package in $(DEPS); do \
		dpkg-query -W -f='$${Status}\n' $$package 2>/dev/null | grep -q '^install ok installed$$' \
			|| echo $$package; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "  DEPS    installing:" $$missing; \
		sudo=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends \
			$$missing >/dev/null; \
	fi

$(BUILD)/switchyard.elf: $(KERNEL_OBJS) boot/kernel.ld
	$(LD) $(LDFLAGS) -o $@ $(KERNEL_OBJS)

# QEMU's -kernel takes multiboot1 only from a 32-bit ELF; the entry code is 32-bit already.
$(BUILD)/switchyard32.elf: $(BUILD)/switchyard.elf
	$(OBJCOPY) -O elf32-i386 $< $@

$(BUILD)/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.asm Makefile
	@mkdir -p $(dir $@)
	@echo "  NASM    $<"
	@$(NASM) $(NASMFLAGS) -MD $(BUILD)/$*.d -MP $< -o $@

# Host unit tests of the pure code in lib/ (and later dr/, ds/), with sanitizers.
HOST_LIB_SRCS := \
	dr/breakpoint.c \
	dr/layout.c \
	dr/reserve.c \
	ds/area.c \
	ds/records.c \
	emulator/decode.c \
	emulator/pebs_record.c \
	emulator/profile.c \
	emulator/registers.c \
	lib/acpi.c \
	lib/cmdline.c \
	lib/console.c \
	lib/crc32.c \
	lib/format.c \
	lib/glob.c \
	lib/ktap.c \
	lib/report.c \
	lib/sort.c \
	pmu/event.c \
	pmu/rotate.c \
	pmu/scale.c \
	pmu/switch.c
HOST_TEST_SRCS := $(sort $(wildcard tests/host/*.c))

$(BUILD)/host/host-tests: $(HOST_TEST_SRCS) $(HOST_LIB_SRCS) $(wildcard tests/host/*.h lib/*.h dr/*.h ds/*.h emulator/*.h pmu/*.h) Makefile
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(HOST_CC) $(HOST_CFLAGS) -o $@ $(HOST_TEST_SRCS) $(HOST_LIB_SRCS)

host-test: $(BUILD)/host/host-tests
	$(BUILD)/host/host-tests

# The filter that tests/test_decoder.py feeds objdump's instructions through.
$(BUILD)/host/decode-check: tests/decode_check/decode_check.c emulator/decode.c emulator/decode.h Makefile
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(HOST_CC) $(HOST_CFLAGS) -o $@ tests/decode_check/decode_check.c emulator/decode.c

FORMAT_SRCS := $(sort $(wildcard boot/*.[ch] arch/x86/*.[ch] dr/*.[ch] ds/*.[ch] lib/*.[ch] pmu/*.[ch] runner/*.[ch] sched/*.[ch] \
	emulator/*.[ch] tests/kernel/*.c tests/host/*.[ch] tests/decode_check/*.c))

format-check:
	clang-format --dry-run --Werror $(FORMAT_SRCS)

clean:
	rm -rf $(BUILD)

.PHONY: all run check bench deps host-test format-check clean iso pxe delivery

-include $(KERNEL_OBJS:.o=.d)

# switchyard: one Makefile for the kernel, the host tests, the harness and the set-up.

CC := gcc
LD := ld
NASM := nasm
OBJCOPY := objcopy
HOST_CC := gcc
PYTHON := /usr/bin/python3

BUILD := build

# No built-in implicit rules, as Linux's Makefile has it (MAKEFLAGS += -rR there): every rule is
# written here, and make no longer searches its built-in ones for each header of every .d file.
MAKEFLAGS += --no-builtin-rules

CFLAGS := -std=gnu11 -O2 -g -ffreestanding -fno-pic -fno-pie -fno-stack-protector \
	-fno-builtin -fno-omit-frame-pointer -fno-asynchronous-unwind-tables -fno-toplevel-reorder \
	-mcmodel=kernel -mno-red-zone -mno-sse -mno-mmx -mno-sse2 -mno-avx \
	-Wall -Wextra -Werror -Wstrict-prototypes -Wmissing-prototypes -I. -MMD -MP
NASMFLAGS := -f elf64 -g -I. -Werror
LDFLAGS := -nostdlib -static -z max-page-size=0x1000 -z noexecstack -T boot/kernel.ld

# -O0: the host tests build and run in 12 s instead of 18 (14 s of CPU instead of 24) from a
# fresh clone, where make check pays it; the sanitizers check as much. The warnings that need
# the optimizer (-Wmaybe-uninitialized) come from the kernel's -O2 build of the same sources.
HOST_CFLAGS := -std=gnu11 -O0 -g -Wall -Wextra -Werror -I. \
	-fsanitize=address,undefined -fno-sanitize-recover=all

OBJS := \
	boot/header.o \
	boot/entry.o \
	boot/console.o \
	boot/main.o \
	boot/multiboot.o \
	arch/x86/ap_start.o \
	arch/x86/apic.o \
	arch/x86/context.o \
	arch/x86/cpuid.o \
	arch/x86/debugctl.o \
	arch/x86/divert.o \
	arch/x86/entry.o \
	arch/x86/fpu.o \
	arch/x86/gdt.o \
	arch/x86/nmi.o \
	arch/x86/paging.o \
	arch/x86/percpu.o \
	arch/x86/probe.o \
	arch/x86/probe_pmu.o \
	arch/x86/setjmp.o \
	arch/x86/switch.o \
	arch/x86/syscall.o \
	arch/x86/syscall_entry.o \
	arch/x86/trampoline.o \
	arch/x86/traps.o \
	arch/x86/tsc.o \
	arch/x86/user.o \
	arch/x86/user_entry.o \
	arch/x86/user_gate.o \
	debugstate/debugstate.o \
	platform/pc/acpi_tables.o \
	platform/pc/cpu_identity.o \
	platform/pc/ioapic.o \
	platform/pc/nmi_timer.o \
	platform/pc/serial.o \
	platform/pc/tsc_calibrate.o \
	kernel/address_space.o \
	kernel/console_lock.o \
	kernel/percpu.o \
	kernel/pfa.o \
	kernel/platform_report.o \
	kernel/shutdown.o \
	kernel/smp.o \
	kernel/spinlock.o \
	kernel/switch_hooks.o \
	lib/acpi.o \
	lib/acpi_spcr.o \
	lib/acpi_timer.o \
	lib/cmdline.o \
	lib/console.o \
	lib/crc32.o \
	lib/format.o \
	lib/glob.o \
	lib/ktap.o \
	lib/panic.o \
	lib/report.o \
	lib/sort.o \
	lib/string.o \
	lib/uart.o \
	emulator/core.o \
	emulator/decode.o \
	emulator/pebs_record.o \
	emulator/profile.o \
	emulator/registers.o \
	emulator/amd.o \
	emulator/lbr.o \
	emulator/arch_pebs.o \
	emulator/arch_pebs_record.o \
	emulator/arch_pebs_store.o \
	emulator/nmi.o \
	emulator/lbr_amd.o \
	emulator/step.o \
	emulator/store.o \
	dr/bpext.o \
	dr/breakpoint.o \
	dr/dr.o \
	dr/exception.o \
	dr/install.o \
	dr/layout.o \
	dr/reserve.o \
	dr/state.o \
	dr/switch.o \
	dr/syscall.o \
	ds/activate.o \
	ds/arch_pebs.o \
	ds/arch_pebs_context.o \
	ds/arch_pebs_records.o \
	ds/buffer.o \
	ds/context.o \
	ds/detect.o \
	ds/drain.o \
	ds/ds.o \
	ds/records.o \
	ds/state.o \
	ds/switch.o \
	lbr/amd.o \
	lbr/detect.o \
	lbr/lbr.o \
	lbr/state.o \
	pmu/detect.o \
	pmu/event.o \
	pmu/pmu.o \
	pmu/selfmon.o \
	pmu/rotate.o \
	pmu/scale.o \
	pmu/switch.o \
	sched/scheduler.o \
	sched/syscall.o \
	sched/task.o \
	sched/user.o \
	sched/wait.o \
	runner/debug_state.o \
	runner/host_sync.o \
	runner/identity.o \
	runner/identity_probe.o \
	runner/isolation.o \
	runner/known_defects.o \
	runner/options.o \
	runner/runner.o

TEST_OBJS := $(patsubst %.c,%.o,$(sort $(wildcard tests/kernel/*.c tests/kernel/lib/*.c))) \
	$(patsubst %.asm,%.o,$(sort $(wildcard tests/kernel/lib/*.asm)))

KERNEL_OBJS := $(addprefix $(BUILD)/,$(OBJS) $(TEST_OBJS))

# Debian packages the build and the tests need; `make deps` installs only the missing ones.
# linux-source-6.1 (139 MB) is for Linux's own KTAP parser, tools/testing/kunit/kunit.py, which
# tests/harness/test_known_defects.py runs on our logs.
DEPS := gcc make binutils nasm qemu-system-x86 python3 python3-pytest python3-pytest-timeout \
	python3-matplotlib \
	grub-pc-bin grub-efi-amd64-bin grub-common xorriso mtools ovmf ipxe-qemu dnsmasq-base iproute2 \
	python3-serial python3-yaml lava-common python3-pytest-xdist \
	linux-source-6.1
# LAVA's dispatcher (about 300 packages) only when asked: `make deps LAVA=1`, or `make lava`.
LAVA_DEPS := lava-dispatcher lavacli socat
DEPS += $(if $(LAVA),$(LAVA_DEPS))

# The two commands of the README: each installs what it needs first.
ACCEL ?= auto
SMP ?= 2
CMDLINE ?=
LOG ?=

all: $(BUILD)/switchyard.elf $(BUILD)/switchyard32.elf $(BUILD)/witness/libwitness.so

run: deps all
	$(PYTHON) scripts/run --accel $(ACCEL) --smp $(SMP) --cmdline "$(CMDLINE)"

# Benchmarks (tests=*.benchmark_*) under TCG, and KVM when usable: $(BENCH_OUT)/results.json
# and switch-cost.png/.svg.
BENCH_OUT ?= $(BUILD)/bench

bench: deps all
	$(PYTHON) scripts/bench --out $(BENCH_OUT)

# Linux as the peer (docs/compare.md): Debian's kernel image and busybox-static, fetched with
# apt-get download and unpacked into $(BUILD)/compare (never installed), boot on the same QEMU as
# switchyard's benchmarks, which boot in the same run: $(BENCH_OUT)/compare.json, compare.png/.svg.
compare: DEPS += libc6-dev
compare: deps all
	$(PYTHON) scripts/compare --out $(BENCH_OUT) --work $(BUILD)/compare \
		--kernel $(BUILD)/switchyard32.elf

# Fuzz the log checker, the kernel's command line and the kernel's API (scripts/fuzz): SEED
# (default: the time), FUZZ_SECONDS a kind, FUZZ_API=quick|soak|off the kernel-API boot. Prints
# the inputs tried and how many were wrongly accepted, with a command that replays a failure.
FUZZ_SECONDS ?= 60
FUZZ_API ?= quick
fuzz: deps all
	$(PYTHON) scripts/fuzz --seconds $(FUZZ_SECONDS) $(if $(SEED),--seed $(SEED)) \
		--kernel-api $(FUZZ_API) --kernel $(BUILD)/switchyard32.elf

# Long budgets (budget=soak: stress tests for up to a minute, benchmarks at full size) with
# SEEDS random seeds under TCG, and KVM when usable; each seed is printed with its verdict and
# its log kept in $(SOAK_OUT). Fails if any boot does. CMDLINE adds kernel options (tests=...).
SEEDS ?= 5
SOAK_OUT ?= $(BUILD)/soak

soak: deps all
	$(PYTHON) scripts/soak --kernel $(BUILD)/switchyard32.elf --seeds $(SEEDS) --smp $(SMP) \
		--cmdline "$(CMDLINE)" --out $(SOAK_OUT)

# Real hardware: a hybrid BIOS+UEFI GRUB ISO, and a TFTP tree with GRUB netboot images, an iPXE
# script and a dnsmasq.conf. GRUB and the kernel share the serial port CONSOLE (ttyS0, ttyS1,
# 0x2f8[,BAUD]); CMDLINE holds the other kernel options.
CONSOLE ?= ttyS0

iso: deps all
	$(PYTHON) scripts/mkiso --console $(CONSOLE) --cmdline "$(CMDLINE)" --out $(BUILD)/switchyard.iso

# make pxe takes PXE_INTERFACE, PXE_DHCP_RANGE or PXE_PROXY_DHCP (a subnet: proxy-DHCP beside
# the lab's DHCP server), PXE_TFTP_ROOT (where the tree will be served) and PXE_LAVA=1 (GRUB
# stops at its prompt for LAVA); unset, scripts/mkpxe's defaults apply.
pxe: deps all
	$(PYTHON) scripts/mkpxe --console $(CONSOLE) --cmdline "$(CMDLINE)" --out $(BUILD)/pxe \
		$(if $(PXE_INTERFACE),--interface '$(PXE_INTERFACE)') \
		$(if $(PXE_DHCP_RANGE),--dhcp-range '$(PXE_DHCP_RANGE)') \
		$(if $(PXE_PROXY_DHCP),--proxy-dhcp '$(PXE_PROXY_DHCP)') \
		$(if $(PXE_TFTP_ROOT),--tftp-root '$(PXE_TFTP_ROOT)') $(if $(PXE_LAVA),--lava)

# The LAVA jobs run by the real lava-run (Debian's lava-dispatcher), QEMU as the board: the qemu
# device type, and the x86 type with deploy/lava/switchyard-ipxe.yaml. Every test must be one
# LAVA case with our result (scripts/lava-qemu, docs/lava.md); work and results in $(BUILD)/lava.
# The status is the jobs' verdict: nonzero when LAVA disagrees or a test failed.
lava: DEPS += $(LAVA_DEPS)
lava: deps all
	$(PYTHON) scripts/lava-qemu --out $(BUILD)/lava

# Only the delivery tests: ISO, PXE, UEFI, dnsmasq, serial capture and LAVA, under TCG.
delivery: deps all
	$(PYTHON) -m pytest -m delivery tests/delivery/test_delivery.py tests/delivery/test_netboot.py

# With LOG=path, judge a log captured elsewhere (real hardware) instead of booting: scripts/run
# prints its summary, then pytest gives one case per test whatever that summary said, and the
# status is pytest's. Both write JUnit XML for CI systems to $(BUILD)/junit.xml: a testcase per
# kernel test, named test_ktap[PLATFORM-suite.test], "__emulated" kept. PLATFORM names a log's
# cases (default "log"); the known defects that applied are the ones its kernel reported.
JUNIT := --junitxml=$(BUILD)/junit.xml
PLATFORM ?= log
# make check's tests (scripts/check): the kernel's verdicts (tests/verdicts/, whose platforms
# boot at collection in two lanes, tests/conftest.py) in one pytest process, and beside it every
# other test, none of which needs those boots, in a second one with CHECK_WORKERS pytest-xdist
# workers; the two JUnit files are merged into $(BUILD)/junit.xml. Two: the host's cores. A
# file's tests stay on one worker (loadfile): its module and session fixtures then run once.
CHECK_WORKERS ?= 2

# Folders whose files must form no cycle, by links or by includes (scripts/check_layout --inside).
ACYCLIC_FOLDERS := debugstate dr ds lbr pmu

ifeq ($(LOG),)
check: deps
	@$(MAKE) --no-print-directory -j$(CHECK_WORKERS) all host-test layout-check
	$(PYTHON) scripts/check --workers $(CHECK_WORKERS) $(JUNIT)
else
check: deps
	$(PYTHON) scripts/run --check-log "$(LOG)" || echo "  CHECK   scripts/run exited $$?; pytest judges each test"
	SWITCHYARD_LOG="$(abspath $(LOG))" SWITCHYARD_LOG_PLATFORM="$(PLATFORM)" \
		$(PYTHON) -m pytest $(JUNIT) tests/verdicts/test_kernel.py
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

# The known-defects table, from its one source, as C rows that runner/known_defects.c includes
# (kernel and host tests alike). KNOWN_DEFECTS names another file, for tests of the matcher.
KNOWN_DEFECTS ?= tests/known-defects.toml
KNOWN_DEFECTS_TABLE := $(BUILD)/generated/known_defects_table.h

$(KNOWN_DEFECTS_TABLE): $(KNOWN_DEFECTS) scripts/switchyard/defects.py
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	@$(PYTHON) scripts/switchyard/defects.py --c-table $(KNOWN_DEFECTS) > $@.tmp
	@mv $@.tmp $@

$(BUILD)/runner/known_defects.o $(BUILD)/host/obj/runner/known_defects.o: $(KNOWN_DEFECTS_TABLE)
$(BUILD)/runner/known_defects.o: CFLAGS += -I$(BUILD)/generated
$(BUILD)/host/obj/runner/known_defects.o: HOST_CFLAGS += -I$(BUILD)/generated

# QEMU's -kernel takes multiboot1 only from a 32-bit ELF; the entry code is 32-bit already.
$(BUILD)/switchyard32.elf: $(BUILD)/switchyard.elf
	$(OBJCOPY) -O elf32-i386 $< $@

$(BUILD)/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CFLAGS) -c $< -o $@

# The dependencies come from a preprocessing pass (-M): nasm 2.16.01's -MD lists only the .asm,
# never the files it %includes (NASM bug 3392832, fixed in 2.16.02).
$(BUILD)/%.o: %.asm Makefile
	@mkdir -p $(dir $@)
	@echo "  NASM    $<"
	@$(NASM) $(NASMFLAGS) -M -MP -MT $@ -MF $(BUILD)/$*.d $<
	@$(NASM) $(NASMFLAGS) $< -o $@

# Host unit tests of the pure code in lib/ (and later dr/, ds/), with sanitizers.
HOST_LIB_SRCS := \
	dr/bpext.c \
	dr/breakpoint.c \
	dr/layout.c \
	dr/reserve.c \
	ds/arch_pebs_records.c \
	ds/buffer.c \
	ds/records.c \
	emulator/decode.c \
	emulator/pebs_record.c \
	emulator/profile.c \
	emulator/registers.c \
	emulator/amd.c \
	emulator/lbr.c \
	emulator/arch_pebs.c \
	emulator/arch_pebs_record.c \
	emulator/lbr_amd.c \
	lib/acpi.c \
	lib/acpi_spcr.c \
	lib/acpi_timer.c \
	lib/cmdline.c \
	lib/console.c \
	lib/crc32.c \
	lib/format.c \
	lib/glob.c \
	lib/ktap.c \
	lib/panic.c \
	lib/report.c \
	lib/sort.c \
	lib/uart.c \
	platform/pc/cpu_identity.c \
	pmu/event.c \
	pmu/rotate.c \
	pmu/scale.c \
	pmu/switch.c \
	runner/identity.c \
	runner/known_defects.c
HOST_TEST_SRCS := $(sort $(wildcard tests/host/*.c))
HOST_OBJS := $(addprefix $(BUILD)/host/obj/,$(patsubst %.c,%.o,$(HOST_TEST_SRCS) $(HOST_LIB_SRCS)))

# Host objects apart from the kernel's, each with the headers it includes (-MMD).
$(BUILD)/host/obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(HOST_CC) $(HOST_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/host/host-tests: $(HOST_OBJS) Makefile
	@echo "  HOSTLD  $@"
	@$(HOST_CC) $(HOST_CFLAGS) -o $@ $(HOST_OBJS)

# The second host binary: the real ds/ and pmu/ on the emulated CPU's register file
# (emulator/registers.c) as the MSR and CPUID model. tests/host/shim/include/ comes first on the
# include path, so its arch/x86/ headers replace the ones with instructions; each test runs in a
# process of its own (tests/host/shim/shim.h). Its objects are apart: same sources, other headers.
HOST_SHIM_SRCS := \
	$(sort $(wildcard tests/host/shim/*.c)) \
	tests/host/host_test.c \
	tests/host/console_capture.c \
	arch/x86/cpuid.c \
	arch/x86/debugctl.c \
	arch/x86/tsc.c \
	debugstate/debugstate.c \
	lbr/amd.c \
	lbr/detect.c \
	lbr/lbr.c \
	lbr/state.c \
	ds/activate.c \
	ds/arch_pebs.c \
	ds/arch_pebs_context.c \
	ds/arch_pebs_records.c \
	ds/buffer.c \
	kernel/spinlock.c \
	kernel/switch_hooks.c \
	ds/context.c \
	ds/detect.c \
	ds/drain.c \
	ds/ds.c \
	ds/records.c \
	ds/state.c \
	ds/switch.c \
	emulator/profile.c \
	emulator/registers.c \
	emulator/amd.c \
	emulator/lbr.c \
	emulator/arch_pebs.c \
	emulator/lbr_amd.c \
	lib/console.c \
	lib/crc32.c \
	lib/format.c \
	lib/ktap.c \
	lib/panic.c \
	pmu/detect.c \
	pmu/event.c \
	pmu/pmu.c \
	pmu/selfmon.c \
	pmu/rotate.c \
	pmu/scale.c \
	pmu/switch.c
HOST_SHIM_OBJS := $(addprefix $(BUILD)/host/shim-obj/,$(patsubst %.c,%.o,$(HOST_SHIM_SRCS)))

$(BUILD)/host/shim-obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $< (shim)"
	@$(HOST_CC) -Itests/host/shim/include $(HOST_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/host/ds-pmu-host-tests: $(HOST_SHIM_OBJS) Makefile
	@echo "  HOSTLD  $@"
	@$(HOST_CC) $(HOST_CFLAGS) -o $@ $(HOST_SHIM_OBJS)

-include $(HOST_SHIM_OBJS:.o=.d)

host-test: $(BUILD)/host/host-tests $(BUILD)/host/ds-pmu-host-tests
	$(BUILD)/host/host-tests
	$(BUILD)/host/ds-pmu-host-tests

# The outside witness (docs/witness.md): a QEMU TCG plugin, loaded by the harness with
# -plugin $(BUILD)/witness/libwitness.so,out=FILE. A host shared object, without sanitizers
# (QEMU, not an instrumented program, loads it).
$(BUILD)/witness/libwitness.so: witness/witness.c witness/qemu-plugin-api.h Makefile
	@mkdir -p $(dir $@)
	@echo "  PLUGIN  $@"
	@$(HOST_CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -I. -shared -fPIC -fvisibility=hidden \
		-o $@ witness/witness.c -pthread

# The filter that tests/kernel_behaviour/test_decoder.py feeds objdump's instructions through.
DECODE_CHECK_OBJS := $(addprefix $(BUILD)/host/obj/,tests/decode_check/decode_check.o emulator/decode.o)

$(BUILD)/host/decode-check: $(DECODE_CHECK_OBJS) Makefile
	@echo "  HOSTLD  $@"
	@$(HOST_CC) $(HOST_CFLAGS) -o $@ $(DECODE_CHECK_OBJS)

# The layout (README.md, Layout): lib/ below arch/x86 below platform/pc below kernel/, each lower
# one including only those below it, and no include or link cycle across folders. The link graph
# is read from the kernel's objects (nm), hence the build first. --stats: files, lines, cycles.
layout-check: $(BUILD)/switchyard.elf
	$(PYTHON) scripts/check_layout --objects $(BUILD) --inside $(ACYCLIC_FOLDERS)

FORMAT_SRCS := $(sort $(wildcard boot/*.[ch] arch/x86/*.[ch] debugstate/*.[ch] platform/pc/*.[ch] kernel/*.[ch] dr/*.[ch] ds/*.[ch] lbr/*.[ch] lib/*.[ch] pmu/*.[ch] runner/*.[ch] sched/*.[ch] \
	emulator/*.[ch] tests/kernel/*.c tests/kernel/lib/*.[ch] tests/host/*.[ch] tests/decode_check/*.c witness/*.[ch]))

format-check:
	clang-format --dry-run --Werror $(FORMAT_SRCS)

clean:
	rm -rf $(BUILD)

.PHONY: all run check bench fuzz compare soak deps host-test layout-check format-check clean iso pxe delivery lava

-include $(KERNEL_OBJS:.o=.d) $(sort $(HOST_OBJS:.o=.d) $(DECODE_CHECK_OBJS:.o=.d))

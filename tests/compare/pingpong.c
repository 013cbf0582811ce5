/* SPDX-License-Identifier: MIT */
/*
 * Linux's side of `make compare` (docs/compare.md): what per-task breakpoints cost a context
 * switch on Linux, for comparison with switchyard's dr.benchmark_switch_cost_by_configuration.
 *
 * Two processes pinned to one CPU ping-pong one byte over two pipes. A sample is one round trip
 * timed with the TSC, halved: one switch plus one pipe write and one pipe read. The
 * configurations are measured in turn, --passes times (forwards, then backwards), each time with
 * a fresh pair of processes and fresh events. The median of every pass is printed, and that of
 * all samples of a configuration at the end. The configurations:
 *
 *   none       no perf events
 *   identical  each task opens 2 write watchpoints and 1 execute breakpoint, the same addresses
 *   different  the same kinds, different addresses in each task
 *   inherited  the parent opens them with inherit=1 before fork; the child inherits them, and
 *              perf swaps the two contexts at a switch instead of reprogramming (context_equiv)
 *   software   two software counters in each task, no breakpoint: perf's own bookkeeping
 *
 * Every event is checked before timing: each breakpoint address is hit once and its count read
 * (1 in the task that opened it; 2 for an inherited one after the child hits it too), and each
 * software counter must have counted. A configuration that fails is not timed.
 * --never-install opens the breakpoints disabled and never enables them: a deliberately broken
 * run whose fire check must fail.
 *
 * Output, one record a line, for scripts/compare:
 *   compare: begin ...
 *   compare: fire config=C pass=P task=parent|child event=E count=N expected=N|at_least=N ok|FAILED
 *   compare: pass config=C pass=P median=CYCLES samples=N
 *   compare: metric config=C median=CYCLES p99=CYCLES samples=N
 *   compare: end status=pass|fail fired=N failed=N crc32=0x... lines=N
 * the last with the CRC-32 and number of the records before it, as switchyard's final line.
 * Exit status 0 when every check passed, 1 when one failed, 2 for bad arguments or a broken
 * system call.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EVENTS_MAX 3
#define WARMUP 200
#define SAMPLES_MIN 100
#define FORMAT_VERSION 1

enum config { NONE, IDENTICAL, DIFFERENT, INHERITED, SOFTWARE, CONFIGS };

static const char *const config_names[CONFIGS] = { "none", "identical", "different", "inherited",
						   "software" };

static struct {
	unsigned int samples; /* at most this many round trips per configuration */
	unsigned int budget_ms; /* or this long, whichever ends first */
	unsigned int passes; /* the configurations in turn, this many times, samples pooled */
	unsigned int cpu;
	bool never_install;
	bool wanted[CONFIGS];
} options = { 20000, 3000, 6, 0, false, { true, true, true, true, true } };

/*
 * The watched words and the execute targets, each on a page of their own: under TCG, QEMU takes
 * a slow path for every access to a page that holds a watchpoint, and translates code on a page
 * that holds a breakpoint one instruction at a time. Hardware does neither, so nothing that runs
 * while timing may share those pages. The words are written, the targets called, only by the
 * fire check.
 */
#define PAGE_SIZE 4096
static volatile long watched[PAGE_SIZE / sizeof(long)] __attribute__((aligned(PAGE_SIZE)));

void exec_target_a(void);
void exec_target_b(void);
__asm__(".pushsection .text.compare_targets, \"ax\", @progbits\n"
	".balign 4096\n"
	".type exec_target_a, @function\n"
	"exec_target_a: ret\n"
	".balign 64\n"
	".type exec_target_b, @function\n"
	"exec_target_b: ret\n"
	".balign 4096\n"
	".popsection\n");

struct event {
	const char *name;
	int fd;
	uint64_t expected; /* the count the fire check requires; 0: at least 1 */
};

struct events {
	struct event event[EVENTS_MAX];
	unsigned int count;
};

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
			    unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

static uint32_t log_crc = 0xffffffff;
static unsigned int log_lines;

/* One record: "compare: " and the text, on stdout, counted into the CRC-32 of the end line. */
__attribute__((format(printf, 1, 2))) static void say(const char *format, ...)
{
	char line[512] = "compare: ";
	size_t length;
	va_list args;

	va_start(args, format);
	vsnprintf(line + strlen(line), sizeof(line) - strlen(line) - 1, format, args);
	va_end(args);
	length = strlen(line);
	line[length++] = '\n';
	line[length] = 0;
	for (size_t i = 0; i < length; i++) {
		log_crc ^= (unsigned char)line[i];
		for (int bit = 0; bit < 8; bit++)
			log_crc = log_crc >> 1 ^ (0xedb88320 & -(log_crc & 1));
	}
	log_lines++;
	fputs(line, stdout);
	fflush(stdout);
}

/* A system call that should not fail did: the run is broken, not the thing measured. */
static void die(const char *what)
{
	say("error %s: %s", what, strerror(errno));
	exit(2);
}

static int open_event(struct perf_event_attr *attr, const char *name)
{
	int fd;

	attr->size = sizeof(*attr);
	if (attr->type == PERF_TYPE_BREAKPOINT) {
		attr->exclude_kernel = 1; /* user addresses only */
		attr->exclude_hv = 1;
		attr->disabled = options.never_install;
	}
	fd = perf_event_open(attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		die(name);
	return fd;
}

static void add_breakpoint(struct events *events, const char *name, uint64_t addr,
			   unsigned int type, bool inherit)
{
	struct perf_event_attr attr = { 0 };

	attr.type = PERF_TYPE_BREAKPOINT;
	attr.bp_type = type;
	attr.bp_addr = addr;
	attr.bp_len = type == HW_BREAKPOINT_X ? sizeof(long) : HW_BREAKPOINT_LEN_8;
	attr.inherit = inherit;
	events->event[events->count++] = (struct event){ name, open_event(&attr, name), 1 };
}

static void add_software(struct events *events, const char *name, uint64_t config)
{
	struct perf_event_attr attr = { 0 };

	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = config;
	events->event[events->count++] = (struct event){ name, open_event(&attr, name), 0 };
}

/* The breakpoints of `task` (0 parent, 1 child): the same in both unless `config` is DIFFERENT. */
static void add_breakpoints(struct events *events, enum config config, int task)
{
	int other = config == DIFFERENT ? task : 0;

	add_breakpoint(events, "write0", (uint64_t)&watched[2 * other], HW_BREAKPOINT_W,
		       config == INHERITED);
	add_breakpoint(events, "write1", (uint64_t)&watched[2 * other + 1], HW_BREAKPOINT_W,
		       config == INHERITED);
	add_breakpoint(events, "exec", (uint64_t)(other ? exec_target_b : exec_target_a),
		       HW_BREAKPOINT_X, config == INHERITED);
}

static void open_events(struct events *events, enum config config, int task)
{
	events->count = 0;
	if (config == IDENTICAL || config == DIFFERENT)
		add_breakpoints(events, config, task);
	if (config == SOFTWARE) {
		add_software(events, "context_switches", PERF_COUNT_SW_CONTEXT_SWITCHES);
		add_software(events, "page_faults", PERF_COUNT_SW_PAGE_FAULTS);
	}
}

/*
 * Hit every breakpoint address of `task` once, and fault a fresh page in (the context switch
 * that the software counter needs comes from the handshake around the check).
 */
static void trigger(enum config config, int task)
{
	int other = config == DIFFERENT ? task : 0;
	char *page;

	watched[2 * other] = 1;
	watched[2 * other + 1] = 1;
	if (other)
		exec_target_b();
	else
		exec_target_a();
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		die("mmap");
	page[0] = 1;
	munmap(page, 4096);
}

static uint64_t read_count(int fd)
{
	uint64_t count;

	if (read(fd, &count, sizeof(count)) != sizeof(count))
		die("read perf count");
	return count;
}

static void read_counts(const struct events *events, uint64_t *counts)
{
	for (unsigned int i = 0; i < events->count; i++)
		counts[i] = read_count(events->event[i].fd);
}

static bool count_ok(const struct event *event, uint64_t count)
{
	return event->expected ? count == event->expected : count >= 1;
}

static unsigned int fired, misfired;

static void report_fire(enum config config, unsigned int pass, const char *task,
			const struct events *events, const uint64_t *counts)
{
	for (unsigned int i = 0; i < events->count; i++) {
		bool ok = count_ok(&events->event[i], counts[i]);

		say("fire config=%s pass=%u task=%s event=%s count=%llu %s=%llu %s",
		    config_names[config], pass, task, events->event[i].name,
		    (unsigned long long)counts[i],
		    events->event[i].expected ? "expected" : "at_least",
		    (unsigned long long)(events->event[i].expected ?: 1), ok ? "ok" : "FAILED");
		if (ok)
			fired++;
		else
			misfired++;
	}
}

static inline uint64_t rdtsc_ordered(void)
{
	uint32_t lo, hi;

	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return ((uint64_t)hi << 32) | lo;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void pipe_read(int fd, void *buffer, size_t size)
{
	if (read(fd, buffer, size) != (ssize_t)size)
		die("pipe read");
}

static void pipe_write(int fd, const void *buffer, size_t size)
{
	if (write(fd, buffer, size) != (ssize_t)size)
		die("pipe write");
}

/*
 * The handshake around the fire check, after both tasks opened their events: the parent hits
 * its addresses and sends "go"; the child hits its own and answers "hit"; the parent sends
 * "report"; the child reads its counts and sends them. Each task blocks at least once on the
 * other, so each switches out at least once, and the parent's inherited counts include the
 * child's hits when it reads them.
 */
static void partner(enum config config, const struct events *inherited, int from, int to)
{
	struct events events = *inherited;
	uint64_t counts[EVENTS_MAX] = { 0 };
	char byte;

	if (config != INHERITED)
		open_events(&events, config, 1);
	pipe_read(from, &byte, 1); /* go */
	trigger(config, 1);
	pipe_write(to, &byte, 1); /* hit */
	pipe_read(from, &byte, 1); /* report */
	if (config != INHERITED)
		read_counts(&events, counts);
	pipe_write(to, counts, sizeof(counts));
	while (read(from, &byte, 1) == 1)
		if (write(to, &byte, 1) != 1)
			_exit(2);
	_exit(0);
}

/* Every configuration's samples, pooled over the passes. */
static struct series {
	uint64_t *samples;
	unsigned int count;
	bool failed;
} series[CONFIGS];

/*
 * Up to `wanted` samples, or until this pass's share of the budget is spent, but at least
 * SAMPLES_MIN (or `wanted`, if fewer) whatever the time: a loaded host never leaves a pass empty.
 */
static void time_round_trips(struct series *timed, unsigned int wanted, int to, int from)
{
	unsigned int first = timed->count;
	uint64_t deadline;
	char byte = 0;

	for (unsigned int i = 0; i < WARMUP; i++) {
		pipe_write(to, &byte, 1);
		pipe_read(from, &byte, 1);
	}
	deadline = now_ms() + options.budget_ms / options.passes;
	while (timed->count - first < wanted &&
	       (timed->count - first < SAMPLES_MIN || now_ms() < deadline)) {
		uint64_t start = rdtsc_ordered();

		pipe_write(to, &byte, 1);
		pipe_read(from, &byte, 1);
		timed->samples[timed->count++] = (rdtsc_ordered() - start) / 2;
	}
}

/*
 * One pass of one configuration: a fresh pair of processes with fresh events, the fire check,
 * then the timed round trips unless an event failed the check (in this pass or an earlier).
 */
static void measure(enum config config, unsigned int pass)
{
	struct events events = { .count = 0 };
	uint64_t counts[EVENTS_MAX], child_counts[EVENTS_MAX];
	unsigned int before = misfired, first = series[config].count;
	int to_child[2], to_parent[2], status;
	char byte = 0;
	pid_t pid;

	if (pipe(to_child) || pipe(to_parent))
		die("pipe");
	if (config == INHERITED) {
		add_breakpoints(&events, config, 0);
		for (unsigned int i = 0; i < events.count; i++)
			events.event[i].expected = 2; /* the parent's hit and the child's */
	}
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		partner(config, &events, to_child[0], to_parent[1]);
	}
	close(to_child[0]);
	close(to_parent[1]);
	if (config != INHERITED)
		open_events(&events, config, 0);
	trigger(config, 0);
	pipe_write(to_child[1], &byte, 1); /* go */
	pipe_read(to_parent[0], &byte, 1); /* hit */
	pipe_write(to_child[1], &byte, 1); /* report */
	pipe_read(to_parent[0], child_counts, sizeof(child_counts));
	read_counts(&events, counts);
	report_fire(config, pass, "parent", &events, counts);
	if (config != INHERITED && config != NONE)
		report_fire(config, pass, "child", &events, child_counts);
	series[config].failed |= misfired != before;
	if (!series[config].failed) {
		time_round_trips(&series[config], options.samples / options.passes, to_child[1],
				 to_parent[0]);
		qsort(series[config].samples + first, series[config].count - first,
		      sizeof(uint64_t), compare_u64);
		say("pass config=%s pass=%u median=%llu samples=%u", config_names[config], pass,
		    (unsigned long long)series[config].samples[(first + series[config].count) / 2],
		    series[config].count - first);
	}
	close(to_child[1]);
	close(to_parent[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die("child exit");
	for (unsigned int i = 0; i < events.count; i++)
		close(events.event[i].fd);
}

static void report_series(enum config config)
{
	struct series *timed = &series[config];

	if (timed->failed || !timed->count)
		return;
	qsort(timed->samples, timed->count, sizeof(uint64_t), compare_u64);
	say("metric config=%s median=%llu p99=%llu samples=%u", config_names[config],
	    (unsigned long long)timed->samples[timed->count / 2],
	    (unsigned long long)timed->samples[(uint64_t)timed->count * 99 / 100], timed->count);
}

static bool parse_unsigned(const char *text, unsigned int *value, unsigned long least)
{
	char *end;
	unsigned long number;

	errno = 0;
	number = strtoul(text, &end, 10);
	if (errno || end == text || *end || number < least || number > 100000000)
		return false;
	*value = number;
	return true;
}

static bool parse_configs(char *list)
{
	memset(options.wanted, 0, sizeof(options.wanted));
	for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
		unsigned int config = 0;

		while (config < CONFIGS && strcmp(name, config_names[config]))
			config++;
		if (config == CONFIGS)
			return false;
		options.wanted[config] = true;
	}
	return true;
}

/*
 * --samples=N --budget-ms=N --passes=N --cpu=N --configs=a,b,... --never-install (scripts/compare
 * passes them as compare.KEY=VALUE on the kernel command line; the init script turns those into
 * these).
 */
static bool parse_option(char *arg)
{
	char *value = strchr(arg, '=');

	if (value)
		*value++ = 0;
	if (!strcmp(arg, "--never-install") && (!value || !strcmp(value, "1")))
		return options.never_install = true;
	if (!value)
		return false;
	if (!strcmp(arg, "--samples"))
		return parse_unsigned(value, &options.samples, 1);
	if (!strcmp(arg, "--budget-ms"))
		return parse_unsigned(value, &options.budget_ms, 1);
	if (!strcmp(arg, "--passes"))
		return parse_unsigned(value, &options.passes, 1);
	if (!strcmp(arg, "--cpu"))
		return parse_unsigned(value, &options.cpu, 0);
	if (!strcmp(arg, "--configs"))
		return parse_configs(value);
	return false;
}

/* The mitigations the kernel applies: part of its bare switch's cost, and of every other. */
static void print_vulnerabilities(void)
{
	const char *directory = "/sys/devices/system/cpu/vulnerabilities";
	struct dirent **names;
	char path[512], line[256];
	int count = scandir(directory, &names, NULL, alphasort);

	for (int i = 0; i < count; i++) {
		FILE *file;

		snprintf(path, sizeof(path), "%s/%s", directory, names[i]->d_name);
		file = names[i]->d_name[0] != '.' ? fopen(path, "r") : NULL;
		if (file && fgets(line, sizeof(line), file)) {
			line[strcspn(line, "\n")] = 0;
			say("vulnerability %s: %s", names[i]->d_name, line);
		}
		if (file)
			fclose(file);
		free(names[i]);
	}
	if (count >= 0)
		free(names);
}

static void print_system(void)
{
	struct utsname uts;
	char line[256];
	FILE *file;

	if (uname(&uts))
		die("uname");
	say("begin format=%d release=%s machine=%s samples=%u budget_ms=%u passes=%u cpu=%u "
	    "never_install=%d",
	    FORMAT_VERSION, uts.release, uts.machine, options.samples, options.budget_ms,
	    options.passes, options.cpu, options.never_install);
	say("version %s", uts.version);
	file = fopen("/proc/cpuinfo", "r");
	while (file && fgets(line, sizeof(line), file))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			line[strcspn(line, "\n")] = 0;
			say("cpu %s", strchr(line, ':') + 2);
			break;
		}
	if (file)
		fclose(file);
	print_vulnerabilities();
}

int main(int argc, char **argv)
{
	cpu_set_t cpus;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++)
		if (!parse_option(argv[i])) {
			say("error bad argument: %s", argv[i]);
			return 2;
		}
	print_system();
	for (enum config config = NONE; config < CONFIGS; config++) {
		series[config].samples = calloc(options.samples, sizeof(uint64_t));
		if (!series[config].samples)
			die("calloc");
	}
	CPU_ZERO(&cpus);
	CPU_SET(options.cpu, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus)) /* the child inherits it */
		die("sched_setaffinity");
	/* Forwards, then backwards: a load that rises or falls during the run weighs on every
	 * configuration alike. */
	for (unsigned int pass = 0; pass < options.passes; pass++)
		for (unsigned int i = 0; i < CONFIGS; i++) {
			enum config config = pass % 2 ? CONFIGS - 1 - i : i;

			if (options.wanted[config])
				measure(config, pass);
		}
	for (enum config config = NONE; config < CONFIGS; config++)
		report_series(config);
	/* A log that lost or garbled a record (a kernel message in the middle of one) does not
	 * verify against this line. */
	printf("compare: end status=%s fired=%u failed=%u crc32=0x%08x lines=%u\n",
	       misfired ? "fail" : "pass", fired, misfired, ~log_crc, log_lines);
	return misfired ? 1 : 0;
}

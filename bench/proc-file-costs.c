// SPDX-License-Identifier: GPL-2.0
/*
 * What reading one /proc/PID file costs, per process, for the files
 * procps reads: stat, statm, status and cmdline. It is the measure
 * behind the design note on a command-line string area in the records
 * (docs/OBJECTIONS.md): how much of a ps or top refresh the command line
 * is, next to what a record costs.
 *
 * Forks PROCS idle processes (their command line is this program's), then
 * reads each file of every one of them, open() + read() + close() as
 * libproc2 does, and stat and cmdline again through fds kept open (a
 * pread() each), ROUNDS rounds, interleaved; each line gives the
 * median over the rounds per process, with the rounds' range. Every read
 * must return data; a process that is gone fails the run.
 *
 * On the instruction clock (`cargo xtask qemu-run --instructions`) a guest
 * nanosecond is one instruction:
 *
 *   gcc -O2 -static -o target/proc-file-costs bench/proc-file-costs.c
 *   cargo xtask qemu-run --instructions --add target/proc-file-costs -- \
 *       /add/proc-file-costs 1000 11
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROCS 20000
#define MAX_ROUNDS 64

static const char *const files[] = { "stat", "statm", "status", "cmdline" };
#define NR_FILES (sizeof(files) / sizeof(files[0]))
#define NR_KEPT 2	/* stat and cmdline again, through kept fds */
#define NR_LINES (NR_FILES + NR_KEPT)

static pid_t pids[MAX_PROCS];
static int kept[NR_KEPT][MAX_PROCS];

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Reads @file of every process once; exits on a read that gives nothing. */
static void read_all(const char *file, int procs)
{
	char path[64], buf[4096];
	int i, fd;
	ssize_t n;

	for (i = 0; i < procs; i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", pids[i], file);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			perror(path);
			exit(1);
		}
		n = read(fd, buf, sizeof(buf));
		close(fd);
		if (n <= 0) {
			fprintf(stderr, "%s: read gave %zd\n", path, n);
			exit(1);
		}
	}
}

/*
 * Reads kept[@k] of every process with pread() from offset 0: what the
 * file's content costs without the open() and close(), as a monitor that
 * keeps its files pays it, and the most a record could save of it.
 */
static void pread_all(int k, int procs)
{
	char buf[4096];
	int i;

	for (i = 0; i < procs; i++) {
		if (pread(kept[k][i], buf, sizeof(buf), 0) <= 0) {
			fprintf(stderr, "pread of a kept file of %d failed\n", pids[i]);
			exit(1);
		}
	}
}

static void open_kept(int procs)
{
	static const char *const names[NR_KEPT] = { "stat", "cmdline" };
	char path[64];
	int i, k;

	for (k = 0; k < NR_KEPT; k++) {
		for (i = 0; i < procs; i++) {
			snprintf(path, sizeof(path), "/proc/%d/%s", pids[i], names[k]);
			kept[k][i] = open(path, O_RDONLY | O_CLOEXEC);
			if (kept[k][i] < 0) {
				perror(path);
				exit(1);
			}
		}
	}
}

int main(int argc, char **argv)
{
	int procs = argc > 1 ? atoi(argv[1]) : 1000;
	int rounds = argc > 2 ? atoi(argv[2]) : 11;
	static double ns[NR_LINES][MAX_ROUNDS];
	static const char *const lines[NR_LINES] = {
		"stat", "statm", "status", "cmdline",
		"stat, kept fd (pread)", "cmdline, kept fd (pread)",
	};
	struct rlimit nofile;
	unsigned int f;
	int i, r;

	if (procs < 1 || procs > MAX_PROCS || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: %s [PROCS (1-%d) [ROUNDS (1-%d)]]\n", argv[0],
			MAX_PROCS, MAX_ROUNDS);
		return 2;
	}
	for (i = 0; i < procs; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			return 1;
		}
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				pause();
		}
	}
	/* The kept fds: raise the soft limit to the hard one. */
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	if (2 * procs + 64 > (int)sysconf(_SC_OPEN_MAX)) {
		fprintf(stderr, "%d processes need %d fds kept\n", procs, 2 * procs);
		return 1;
	}
	open_kept(procs);
	for (f = 0; f < NR_FILES; f++)
		read_all(files[f], procs);	/* untimed: warm the dentries */
	for (r = 0; r < rounds; r++) {
		for (f = 0; f < NR_LINES; f++) {
			unsigned int k = (f + r) % NR_LINES;
			double t0 = now_ns();

			if (k < NR_FILES)
				read_all(files[k], procs);
			else
				pread_all(k - NR_FILES, procs);
			ns[k][r] = now_ns() - t0;
		}
	}
	printf("%d processes, %d rounds, per process: median (min-max)\n", procs, rounds);
	for (f = 0; f < NR_LINES; f++) {
		qsort(ns[f], rounds, sizeof(double), cmp_double);
		printf("%-26s %10.0f (%.0f-%.0f)\n", lines[f], ns[f][rounds / 2] / procs,
		       ns[f][0] / procs, ns[f][rounds - 1] / procs);
	}
	for (i = 0; i < procs; i++)
		kill(pids[i], SIGKILL);
	return 0;
}

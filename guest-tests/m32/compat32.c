// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * compat32: pidmap(2) and fdmap(2) called by a 32-bit (i386) program on
 * the x86_64 kernel (CONFIG_IA32_EMULATION), issue 11 §4.
 *
 * Built with `i686-linux-gnu-gcc -static` (gcc-multilib is not
 * installable next to the arm64 cross compiler), by `cargo xtask` from
 * guest-tests/m32/.  Both calls have no compat entry: their arguments are
 * pointers and 32-bit integers, and the request structs hold only
 * fixed-size fields, so a 32-bit caller must get exactly what a 64-bit one
 * gets.  Checked here:
 *
 *  - huge counts (2^30, 2^31 - 1, 2^31, UINT_MAX) with a buffer that holds
 *    every id: the whole listing, never EFAULT (a count capped at INT_MAX
 *    breaks access_ok() in a 4 GiB address space), in every mode;
 *  - a buffer ending at a guard page: the slots before it are filled and
 *    counted, nothing beyond count is written (canaries), and no slot at
 *    all is EFAULT;
 *  - every row of the errno table of docs/ABI.md that a test can provoke:
 *    EINVAL, E2BIG, EFAULT, EBADF, ESRCH, EPERM (EINTR needs a fatal
 *    signal during an exec_update_lock wait; ENOSYS is the unpatched
 *    kernel's);
 *  - the listings equal /proc (PROC, TASKS, CHILDREN, fdmap) as root;
 *  - PIDMAP_INFO records: the same layout as a 64-bit caller's (the
 *    struct has no padding that differs on i386), huge counts, a guard
 *    page, and the record errnos.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../include/pidmap_test.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

_Static_assert(sizeof(void *) == 4, "compat32 must be built 32-bit");

#define PAGE 4096
#define SLOTS (16 * PAGE / 4)	/* room for every id of the guest */
#define CANARY 0x5aa5c33cu

static unsigned long checks, failures;

#define check(ok, ...) pt_check(&checks, &failures, (ok), __VA_ARGS__)

/* r == -1 with errno @want. */
#define EXPECT_ERR(want, call) do {					\
	long r_;							\
	errno = 0;							\
	r_ = (call);							\
	check(r_ == -1 && errno == (want), "%s = %ld (%s), want %s",	\
	      #call, r_, pt_errname(errno), pt_errname(want));		\
} while (0)

/* @slots slots right before a PROT_NONE page. */
static int *guarded(long slots)
{
	unsigned char *p = mmap(NULL, 17 * PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + 16 * PAGE, PAGE, PROT_NONE))
		pt_die("mmap");
	return (int *)(p + 16 * PAGE) - slots;
}

static long call(int is_fdmap, int target, int *buf, unsigned int count, unsigned int flags)
{
	return is_fdmap ? fdmap_at(target, 0, buf, count, flags)
			: pidmap_at(target, 0, buf, count, flags);
}

/* Huge counts return the whole listing, in every mode. */
static void huge_counts(void)
{
	static const unsigned int huge[] = { 1u << 30, 0x7fffffffu, 0x80000000u, UINT_MAX };
	static const struct { int is_fdmap; unsigned int flags; const char *name; } m[] = {
		{ 0, PIDMAP_PROC, "PROC" }, { 0, PIDMAP_ALL_TASKS, "ALL_TASKS" },
		{ 0, PIDMAP_TASKS, "TASKS" }, { 0, PIDMAP_CHILDREN, "CHILDREN" },
		{ 1, 0, "fdmap" },
	};
	int *buf = guarded(SLOTS), *ref = malloc(SLOTS * sizeof(int));
	size_t i, k;

	if (!ref)
		pt_die("malloc");
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		long full = -1, r = -1;
		int t;

		/* PROC/ALL_TASKS may change under us (kthreads): retry. */
		for (t = 0; t < 20; t++) {
			full = call(m[i].is_fdmap, 0, ref, SLOTS, m[i].flags);
			for (k = 0; k < 4; k++) {
				r = call(m[i].is_fdmap, 0, buf, huge[k], m[i].flags);
				if (r != full || memcmp(buf, ref, (size_t)full * sizeof(int)))
					break;
			}
			if (k == 4)
				break;
		}
		check(full > 0 && full < SLOTS, "%s: full listing %ld", m[i].name, full);
		check(t < 20, "%s with count %#x: %ld (%s), the full listing has %ld",
		      m[i].name, k < 4 ? huge[k] : 0, r, r < 0 ? pt_errname(errno) : "ok", full);
		printf("COMPAT32: case=huge_count mode=%s ids=%ld agree=%s\n", m[i].name, full,
		       t < 20 ? "yes" : "NO");
	}
	free(ref);
}

/* A buffer that ends at a guard page: filled up to it, never beyond count. */
static void guard_pages(void)
{
	int *ref = malloc(SLOTS * sizeof(int));
	long full, r, k;
	int is_fdmap;

	if (!ref)
		pt_die("malloc");
	/* More fds than the guard tests take. */
	if (dup2(0, 10) != 10 || dup2(0, 11) != 11 || dup2(0, 12) != 12)
		pt_die("dup2");
	for (is_fdmap = 0; is_fdmap < 2; is_fdmap++) {
		unsigned int flags = is_fdmap ? 0 : PIDMAP_ALL_TASKS;

		full = call(is_fdmap, 0, ref, SLOTS, flags);
		check(full > 3, "%s: full listing %ld", is_fdmap ? "fdmap" : "ALL_TASKS", full);
		for (k = 0; k <= 3; k++) {
			int *buf = guarded(k);

			r = call(is_fdmap, 0, buf, UINT_MAX, flags);
			if (k == 0)
				check(r == -1 && errno == EFAULT,
				      "no writable slot, huge count: %ld (%s), want EFAULT", r,
				      pt_errname(errno));
			else
				check(r == k && !memcmp(buf, ref, (size_t)k * sizeof(int)),
				      "%ld writable slots, huge count: %ld", k, r);
			munmap((unsigned char *)(buf + k) - 16 * PAGE, 17 * PAGE);
		}
		/* count 2 into a 4-slot buffer with canaries: slots 2, 3 untouched. */
		{
			int *buf = guarded(4);

			buf[2] = buf[3] = (int)CANARY;
			r = call(is_fdmap, 0, buf, 2, flags);
			check(r == 2 && buf[2] == (int)CANARY && buf[3] == (int)CANARY,
			      "count 2: %ld, canaries %#x %#x", r, buf[2], buf[3]);
			munmap((unsigned char *)(buf + 4) - 16 * PAGE, 17 * PAGE);
		}
	}
	printf("COMPAT32: case=guard_pages checks_so_far=%lu failures=%lu\n", checks, failures);
	free(ref);
}

/*
 * PIDMAP_INFO from a 32-bit caller: ALL_TASKS records equal the ids, the
 * caller's own record is full, huge counts and a guard page behave as for
 * ids, and a bigger record gets a zeroed tail.
 */
static void info_records(void)
{
	static const unsigned int huge[] = { 1u << 30, 0x80000000u, UINT_MAX };
	const unsigned int size = sizeof(struct pidmap_info);
	struct pidmap_info *recs = malloc(SLOTS * size);
	int *ids = malloc(SLOTS * sizeof(int));
	unsigned char *end;
	long n = -1, r, k;
	int t, own = 0;
	size_t i;

	_Static_assert(sizeof(struct pidmap_info) == 96, "pidmap_info is 96 bytes on i386");
	_Static_assert(sizeof(struct pidmap_req) == 32, "pidmap_req is 32 bytes on i386");
	if (!recs || !ids)
		pt_die("malloc");
	for (t = 0; t < 20; t++) {
		n = pidmap_at(0, 0, ids, SLOTS, PIDMAP_ALL_TASKS);
		r = pidmap_info_view(0, 0, 0, recs, SLOTS, PIDMAP_ALL_TASKS, size,
				     PIDMAP_INFO_ALL_V2);
		if (r == n) {
			for (i = 0; i < (size_t)n && recs[i].tid == ids[i]; i++)
				;
			if (i == (size_t)n)
				break;
		}
	}
	check(t < 20 && n > 3, "ALL_TASKS records equal the ids: %ld records, %ld ids", r, n);
	for (i = 0; t < 20 && i < (size_t)n; i++)
		if (recs[i].tid == getpid())
			own = recs[i].mask == PIDMAP_INFO_ALL_V2 && recs[i].tgid == getpid() &&
			      recs[i].ppid == getppid() && recs[i].num_threads == 1 &&
			      !strcmp(recs[i].comm, "compat32");
	check(own, "the caller's own record is full and right");
	for (k = 0; k < 3; k++) {
		r = pidmap_info_view(0, 0, 0, recs, huge[k], PIDMAP_TASKS, size,
				     PIDMAP_INFO_ALL_V2);
		check(r == 1 && recs[0].tid == getpid(), "TASKS records, count %#x: %ld",
		      huge[k], r);
	}
	/* Two records and half of one before the guard page, a huge count. */
	end = (unsigned char *)guarded(0);
	r = pidmap_info_view(0, 0, 0, end - 2 * size - size / 2, UINT_MAX, PIDMAP_ALL_TASKS,
			     size, PIDMAP_INFO_TGID);
	check(r == 2, "two records before the guard page: %ld", r);
	EXPECT_ERR(EFAULT, pidmap_info_view(0, 0, 0, end - size / 2, UINT_MAX,
					    PIDMAP_ALL_TASKS, size, PIDMAP_INFO_TGID));
	EXPECT_ERR(EFAULT, pidmap_info_view(0, 0, 0, (void *)(uintptr_t)0xfffff000u, 1,
					    PIDMAP_ALL_TASKS, size, PIDMAP_INFO_TGID));
	/* A 200-byte record: the kernel's 96 bytes, then zeros. */
	memset(end - 200, 0xff, 200);
	r = pidmap_info_view(0, 0, 0, end - 200, 1, PIDMAP_TASKS, 200, PIDMAP_INFO_TGID);
	for (i = 96; i < 200 && !end[-200 + (long)i]; i++)
		;
	check(r == 1 && i == 200 && ((struct pidmap_info *)(end - 200))->tgid == getpid(),
	      "a 200-byte record: %ld, tail zero up to byte %zu", r, i);
	EXPECT_ERR(EINVAL, pidmap_info_view(0, 0, 0, recs, 1, PIDMAP_TASKS, 100,
					    PIDMAP_INFO_TGID));
	EXPECT_ERR(E2BIG, pidmap_info_view(0, 0, 0, recs, 1, PIDMAP_TASKS, 4104,
					   PIDMAP_INFO_TGID));
	munmap(end - 16 * PAGE, 17 * PAGE);
	printf("COMPAT32: case=info_records records=%ld checks_so_far=%lu failures=%lu\n", n,
	       checks, failures);
	free(recs);
	free(ids);
}

/* Every errno row of docs/ABI.md that a test can provoke. */
static void errno_rows(pid_t root_child)
{
	unsigned char *pg = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct pidmap_req *pr = (struct pidmap_req *)(pg + PAGE - 16);
	struct fdmap_req *fr = (struct fdmap_req *)(pg + PAGE - 16);
	int ids[64], proc, root, closed, pidfd, gone_pidfd;
	pid_t gone;

	if (pg == MAP_FAILED || mprotect(pg + PAGE, PAGE, PROT_NONE))
		pt_die("mmap");
	proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* Open, and neither procfs nor a pidfd (O_PATH fds are EBADF to fdget). */
	root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* A number no fd uses, now or later in this function. */
	closed = 900;
	if (fcntl(closed, F_GETFD) != -1)
		pt_die("fd 900 is open");
	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	gone = fork();
	if (gone == 0)
		_exit(0);
	gone_pidfd = (int)syscall(SYS_pidfd_open, gone, 0);
	waitpid(gone, NULL, 0);
	if (proc < 0 || root < 0 || pidfd < 0 || gone_pidfd < 0 || gone < 0)
		pt_die("setup");

	/* EINVAL */
	EXPECT_ERR(EINVAL, pidmap_at(0, 0, ids, 64, 0));
	EXPECT_ERR(EINVAL, pidmap_at(0, 0, ids, 64, PIDMAP_PROC | PIDMAP_TASKS));
	EXPECT_ERR(EINVAL, pidmap_at(0, 0, ids, 64, PIDMAP_PROC | 0x80000000u));
	EXPECT_ERR(EINVAL, fdmap_at(0, 0, ids, 64, 0x80000000u));
	EXPECT_ERR(EINVAL, pidmap_at(0, -1, ids, 64, PIDMAP_PROC));
	EXPECT_ERR(EINVAL, fdmap_at(0, INT_MIN, ids, 64, 0));
	EXPECT_ERR(EINVAL, pidmap_at(-1, 0, ids, 64, PIDMAP_TASKS));
	EXPECT_ERR(EINVAL, pidmap_at(1, 0, ids, 64, PIDMAP_PROC));
	EXPECT_ERR(EINVAL, pidmap_at(pidfd, 0, ids, 64, PIDMAP_ALL_TASKS | PIDMAP_TARGET_PIDFD));
	EXPECT_ERR(EINVAL, pidmap_view(root, 0, 0, ids, 64, PIDMAP_PROC | PIDMAP_PROCFS));
	EXPECT_ERR(EINVAL, pidmap_at(root, 0, ids, 64, PIDMAP_TASKS | PIDMAP_TARGET_PIDFD));
	EXPECT_ERR(EINVAL, fdmap_at(root, 0, ids, 64, FDMAP_TARGET_PIDFD));
	memset(pr, 0, 16);
	pr->size = 16;
	pr->procfs_fd = proc;	/* without PIDMAP_PROCFS */
	EXPECT_ERR(EINVAL, sys_pidmap(pr, ids, 64, PIDMAP_PROC));
	memset(fr, 0, 16);
	fr->size = 16;
	fr->__reserved = 1;
	EXPECT_ERR(EINVAL, sys_fdmap(fr, ids, 64, 0));
	fr->__reserved = 0;
	fr->size = 12;
	EXPECT_ERR(EINVAL, sys_fdmap(fr, ids, 64, 0));
	pr->procfs_fd = 0;
	pr->size = 0;
	EXPECT_ERR(EINVAL, sys_pidmap(pr, ids, 0, PIDMAP_PROC));

	/* E2BIG: a longer struct with a non-zero tail, or more than a page. */
	{
		unsigned char *big = pg + PAGE - 64;

		memset(big, 0, 64);
		((struct pidmap_req *)big)->size = 64;
		check(pidmap_at(0, 0, ids, 64, PIDMAP_TASKS) == 1 &&
		      sys_pidmap(big, ids, 64, PIDMAP_TASKS) == 1,
		      "a 64-byte request with a zero tail is accepted");
		big[63] = 1;
		EXPECT_ERR(E2BIG, sys_pidmap(big, ids, 64, PIDMAP_TASKS));
		EXPECT_ERR(E2BIG, sys_fdmap(big, ids, 64, 0));
		((struct pidmap_req *)big)->size = PAGE + 4;
		EXPECT_ERR(E2BIG, sys_pidmap(big, ids, 64, PIDMAP_TASKS));
		((struct pidmap_req *)big)->size = UINT_MAX;
		EXPECT_ERR(E2BIG, sys_fdmap(big, ids, 64, 0));
	}

	/* EFAULT: the request, or a buffer with no writable slot. */
	EXPECT_ERR(EFAULT, sys_pidmap(NULL, ids, 64, PIDMAP_PROC));
	*(uint32_t *)(pg + PAGE - 8) = 16;	/* size read, the rest faults */
	EXPECT_ERR(EFAULT, sys_fdmap(pg + PAGE - 8, ids, 64, 0));
	EXPECT_ERR(EFAULT, sys_pidmap(pg + PAGE, ids, 64, PIDMAP_PROC));
	EXPECT_ERR(EFAULT, pidmap_at(0, 0, NULL, 64, PIDMAP_PROC));
	EXPECT_ERR(EFAULT, fdmap_at(0, 0, (int *)(pg + PAGE), 64, 0));
	EXPECT_ERR(EFAULT, pidmap_at(0, 0, (int *)(uintptr_t)0xfffff000u, 64, PIDMAP_ALL_TASKS));
	EXPECT_ERR(EFAULT, fdmap_at(0, 0, (int *)(uintptr_t)0xfffffffcu, UINT_MAX, 0));

	/* EBADF */
	EXPECT_ERR(EBADF, pidmap_view(closed, 0, 0, ids, 64, PIDMAP_PROC | PIDMAP_PROCFS));
	EXPECT_ERR(EBADF, pidmap_at(closed, 0, ids, 64, PIDMAP_TASKS | PIDMAP_TARGET_PIDFD));
	EXPECT_ERR(EBADF, fdmap_at(closed, 0, ids, 64, FDMAP_TARGET_PIDFD));

	/* ESRCH: a reaped pid, a pidfd whose process is gone. */
	EXPECT_ERR(ESRCH, pidmap_at(gone, 0, ids, 64, PIDMAP_TASKS));
	EXPECT_ERR(ESRCH, fdmap_at(gone, 0, ids, 64, 0));
	EXPECT_ERR(ESRCH, pidmap_at(gone_pidfd, 0, ids, 64, PIDMAP_CHILDREN | PIDMAP_TARGET_PIDFD));
	EXPECT_ERR(ESRCH, fdmap_at(gone_pidfd, 0, ids, 0, FDMAP_TARGET_PIDFD));

	/* EPERM: fdmap of a root process as uid 65534. */
	{
		pid_t u = fork();
		int status;

		if (u == 0) {
			if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
				_exit(2);
			errno = 0;
			if (fdmap_at(root_child, 0, ids, 64, 0) != -1 || errno != EPERM)
				_exit(1);
			if (fdmap_at(1, 0, ids, 0, 0) != -1 || errno != EPERM)
				_exit(1);
			_exit(0);
		}
		check(u > 0 && waitpid(u, &status, 0) == u && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0, "EPERM as uid 65534: status %#x", status);
	}
	printf("COMPAT32: case=errno_rows checks_so_far=%lu failures=%lu\n", checks, failures);
	munmap(pg, 2 * PAGE);
}

/* The listings equal /proc as root. */
static void against_proc(pid_t child)
{
	struct pt_ids got = { 0 }, ref = { 0 }, ref2 = { 0 };
	struct pt_enum_stats st = { 0 };
	char path[64];
	int t, ok = 0;

	for (t = 0; t < 20 && !ok; t++) {
		pt_proc_tgids(&ref);
		ok = !pt_enumerate(0, 0, PIDMAP_PROC, 7, &got, &st);
		pt_proc_tgids(&ref2);
		ok = ok && (pt_ids_equal(&got, &ref) || pt_ids_equal(&got, &ref2));
	}
	check(ok, "PROC differs from readdir(/proc)");
	check(!pt_enumerate(0, 0, PIDMAP_CHILDREN, 1, &got, &st) && got.n == 1 &&
	      got.v[0] == child, "CHILDREN(0) is not just %d", child);
	snprintf(path, sizeof(path), "/proc/%d/fd", child);
	pt_ids_clear(&ref);
	check(!pt_readdir_ids(path, &ref) && !pt_enumerate(1, child, 0, 3, &got, &st) &&
	      pt_ids_equal(&got, &ref), "fdmap(%d) differs from %s", child, path);
	check(!st.dups && !st.order && !st.overrun, "listing order: %lu dups %lu order %lu overrun",
	      st.dups, st.order, st.overrun);
	pt_ids_free(&got);
	pt_ids_free(&ref);
	pt_ids_free(&ref2);
}

int main(void)
{
	pid_t child;
	long splats0;

	pt_name = "compat32";
	pt_require_syscalls();
	if (getuid() != 0) {
		pt_err("must run as root");
		return KSFT_FAIL;
	}
	splats0 = pt_count_splats();
	alarm(200);
	child = fork();
	if (child < 0)
		pt_die("fork");
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	huge_counts();
	guard_pages();
	errno_rows(child);
	against_proc(child);
	info_records();
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	printf("RELIABILITY: name=compat32 inputs=%lu failures=%lu splats=%ld\n", checks, failures,
	       pt_new_splats(splats0));
	if (failures || checks < 50 || pt_new_splats(splats0) > 0) {
		printf("compat32: FAIL\n");
		return KSFT_FAIL;
	}
	printf("compat32: PASS\n");
	return KSFT_PASS;
}

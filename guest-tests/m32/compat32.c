// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * compat32: pidmap(2), pidmap_info(2) and fdmap(2) called by a 32-bit
 * (i386) program on the x86_64 kernel (CONFIG_IA32_EMULATION).
 *
 * Built with `i686-linux-gnu-gcc -static` (gcc-multilib is not
 * installable next to the arm64 cross compiler), by `cargo xtask` from
 * guest-tests/m32/.  The three calls have no compat entry: their arguments
 * are pointers, 32-bit integers and a size_t nr (zero-extended from 32
 * bits), and the request structs and the record hold only fixed-size
 * fields, so a 32-bit caller must get exactly what a 64-bit one gets.
 * The series' kselftests also run -m32 (the kselftest _m32 programs); this adds what they
 * do not ask of a 32-bit caller:
 *
 *  - nr: 1,000,000 (the most) with a buffer that holds that many returns
 *    the whole listing in every scope and for fdmap; 1,000,001, 2^31 - 1,
 *    2^31 and UINT32_MAX (SIZE_MAX here) are EOVERFLOW for all three
 *    calls, never a listing (a 32-bit nr read sign-extended would pass);
 *  - a buffer ending at a guard page: a listing that fits is returned
 *    whole, one that does not is EFAULT, as the ABI has it; nothing past
 *    nr is written (canaries); a buffer that runs past 4 GiB is EFAULT;
 *  - every row of the errno tables of the man pages that a test can
 *    provoke: EINVAL, E2BIG, EFAULT, EBADF, ESRCH, EACCES, EOVERFLOW;
 *  - the listings equal /proc as root: SCOPE_PROCS vs readdir(/proc),
 *    SCOPE_TASKS vs every /proc/PID/task, THREADS and CHILDREN of a pidfd
 *    vs /proc/PID/task and the child, fdmap vs /proc/PID/fd;
 *  - pidmap_info(2) records: 200 bytes with the same offsets as a 64-bit
 *    caller's, the tids equal pidmap(2)'s, the caller's own record equal
 *    to /proc/self/stat and status field by field (and its pidfs_id to the
 *    inode of a pidfd of it), a bigger record's tail zeroed, the record
 *    errnos.
 */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64	/* a 64-bit st_ino: pidfs ids need it */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../include/pidmap_test.h"

_Static_assert(sizeof(void *) == 4, "compat32 must be built 32-bit");
_Static_assert(sizeof(struct pidmap_info) == 200, "pidmap_info is 200 bytes on i386");
_Static_assert(sizeof(struct pidmap_req) == 56, "pidmap_req is 56 bytes on i386");
_Static_assert(sizeof(struct fdmap_req) == 32, "fdmap_req is 32 bytes on i386");
/* The 64-bit offsets: every __u64 is 8-aligned in the struct itself. */
_Static_assert(offsetof(struct pidmap_req, last_id) == 8, "last_id offset");
_Static_assert(offsetof(struct pidmap_req, info_mask) == 32, "info_mask offset");
_Static_assert(offsetof(struct pidmap_req, procfs_fd) == 40, "procfs_fd offset");
_Static_assert(offsetof(struct pidmap_req, pidns_id) == 48, "pidns_id offset");
_Static_assert(offsetof(struct fdmap_req, pidns_id) == 24, "fdmap pidns_id offset");
_Static_assert(offsetof(struct pidmap_info, utime_ns) == 64, "utime_ns offset");
_Static_assert(offsetof(struct pidmap_info, state) == 96, "state offset");
_Static_assert(offsetof(struct pidmap_info, min_flt) == 168, "min_flt offset");
_Static_assert(offsetof(struct pidmap_info, nivcsw) == 192, "nivcsw offset");

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

/* @bytes bytes right before a PROT_NONE page (16 pages at most). */
static void *guarded(size_t bytes)
{
	unsigned char *p = mmap(NULL, 17 * PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + 16 * PAGE, PAGE, PROT_NONE))
		pt_die("mmap");
	return p + 16 * PAGE - bytes;
}

static void unguard(void *buf, size_t bytes)
{
	munmap((unsigned char *)buf + bytes - 16 * PAGE, 17 * PAGE);
}

/* The listings of this test: one scope (or fdmap) with its target. */
struct listing {
	const char *name;
	int is_fdmap;
	__u32 scope;
	int self_target;	/* THREADS, CHILDREN, fdmap: PIDFD_SELF_THREAD_GROUP */
};

static const struct listing listings[] = {
	{ "PROCS", 0, PIDMAP_SCOPE_PROCS, 0 },
	{ "TASKS", 0, PIDMAP_SCOPE_TASKS, 0 },
	{ "THREADS(self)", 0, PIDMAP_SCOPE_THREADS, 1 },
	{ "CHILDREN(self)", 0, PIDMAP_SCOPE_CHILDREN, 1 },
	{ "fdmap(self)", 1, 0, 1 },
};
#define NLISTINGS (int)(sizeof(listings) / sizeof(listings[0]))

static long call(const struct listing *l, void *buf, size_t nr)
{
	int pidfd = l->self_target ? PIDFD_SELF_THREAD_GROUP : 0;

	if (l->is_fdmap)
		return fdmap_list(pidfd, 0, 0, buf, nr);
	return pidmap_list(l->scope, pidfd, 0, 0, 0, buf, nr);
}

/* nr up to 1,000,000 lists everything; above it, EOVERFLOW, however large. */
static void counts(void)
{
	static const size_t over[] = { PIDMAP_MAX_NR + 1, 0x7fffffffu, 0x80000000u, SIZE_MAX };
	int *buf = malloc(PIDMAP_MAX_NR * sizeof(int)), *ref = malloc(SLOTS * sizeof(int));
	struct pidmap_info rec;
	int i, t;
	size_t k;

	if (!buf || !ref)
		pt_die("malloc");
	for (i = 0; i < NLISTINGS; i++) {
		const struct listing *l = &listings[i];
		long full = -1, r = -1;

		/* PROCS/TASKS may change under us (kernel workers): retry. */
		for (t = 0; t < 20; t++) {
			full = call(l, ref, SLOTS);
			r = call(l, buf, PIDMAP_MAX_NR);
			if (full >= 0 && r == full && !memcmp(buf, ref, (size_t)full * sizeof(int)))
				break;
		}
		check(full > 0 && full < SLOTS, "%s: full listing %ld", l->name, full);
		check(t < 20, "%s with nr 1000000: %ld (%s), the full listing has %ld", l->name, r,
		      r < 0 ? pt_errname(errno) : "ok", full);
		for (k = 0; k < sizeof(over) / sizeof(over[0]); k++) {
			errno = 0;
			r = call(l, buf, over[k]);
			check(r == -1 && errno == EOVERFLOW, "%s with nr %#zx: %ld (%s), want EOVERFLOW",
			      l->name, over[k], r, pt_errname(errno));
		}
		printf("COMPAT32: case=counts listing=%s ids=%ld agree=%s\n", l->name, full,
		       t < 20 ? "yes" : "NO");
	}
	for (k = 0; k < sizeof(over) / sizeof(over[0]); k++)
		EXPECT_ERR(EOVERFLOW, pidmap_info_list(PIDMAP_SCOPE_TASKS, 0, 0, 0, 0, &rec,
						       over[k], sizeof(rec), PIDMAP_INFO_ALL_FIELDS));
	free(buf);
	free(ref);
}

/*
 * A buffer that ends at a guard page: the listing when it fits, EFAULT when
 * it does not; nothing written past nr.  fdmap of ourselves is the listing
 * that holds still; THREADS of ourselves is one id.
 */
static void guard_pages(void)
{
	int ref[64], *buf;
	long full, r, k;

	/* More fds than the guard tests take. */
	if (dup2(0, 10) != 10 || dup2(0, 11) != 11 || dup2(0, 12) != 12)
		pt_die("dup2");
	full = fdmap_list(PIDFD_SELF_THREAD_GROUP, 0, 0, ref, 64);
	check(full > 3 && full < 64, "fdmap: full listing %ld", full);
	for (k = 0; k <= full; k++) {
		buf = guarded((size_t)k * sizeof(int));
		errno = 0;
		r = fdmap_list(PIDFD_SELF_THREAD_GROUP, 0, 0, buf, 1000);
		if (k < full)
			check(r == -1 && errno == EFAULT,
			      "fdmap: %ld of %ld fds fit before the guard page, nr 1000: %ld (%s), "
			      "want EFAULT", k, full, r, pt_errname(errno));
		else
			check(r == full && !memcmp(buf, ref, (size_t)full * sizeof(int)),
			      "fdmap: every fd fits before the guard page: %ld of %ld", r, full);
		unguard(buf, (size_t)k * sizeof(int));
	}
	/* The same for pidmap: THREADS of ourselves is exactly one id. */
	buf = guarded(sizeof(int));
	r = pidmap_list(PIDMAP_SCOPE_THREADS, PIDFD_SELF_THREAD_GROUP, 0, 0, 0, (__u32 *)buf, 1000);
	check(r == 1 && buf[0] == getpid(), "THREADS(self) into one slot before a guard page: %ld",
	      r);
	unguard(buf, sizeof(int));
	buf = guarded(0);
	EXPECT_ERR(EFAULT, pidmap_list(PIDMAP_SCOPE_THREADS, PIDFD_SELF_THREAD_GROUP, 0, 0, 0,
				       (__u32 *)buf, 1000));
	unguard(buf, 0);
	/* nr 2 into a 4-slot buffer with canaries: slots 2, 3 untouched. */
	buf = guarded(4 * sizeof(int));
	buf[2] = buf[3] = (int)CANARY;
	r = fdmap_list(PIDFD_SELF_THREAD_GROUP, 0, 0, buf, 2);
	check(r == 2 && buf[2] == (int)CANARY && buf[3] == (int)CANARY &&
	      !memcmp(buf, ref, 2 * sizeof(int)), "fdmap nr 2: %ld, canaries %#x %#x", r, buf[2],
	      buf[3]);
	buf[2] = buf[3] = (int)CANARY;
	r = pidmap_list(PIDMAP_SCOPE_TASKS, 0, 0, 0, 0, (__u32 *)buf, 2);
	check(r == 2 && buf[2] == (int)CANARY && buf[3] == (int)CANARY,
	      "pidmap TASKS nr 2: %ld, canaries %#x %#x", r, buf[2], buf[3]);
	unguard(buf, 4 * sizeof(int));
	/* A buffer that would run past 4 GiB: EFAULT, not a wrap to address 0. */
	EXPECT_ERR(EFAULT, fdmap_list(PIDFD_SELF_THREAD_GROUP, 0, 0,
				      (int *)(uintptr_t)0xfffffffcu, 2));
	EXPECT_ERR(EFAULT, pidmap_list(PIDMAP_SCOPE_TASKS, 0, 0, 0, 0,
				       (__u32 *)(uintptr_t)0xfffffffcu, 2));
	EXPECT_ERR(EFAULT, pidmap_list(PIDMAP_SCOPE_TASKS, 0, 0, 0, 0,
				       (__u32 *)(uintptr_t)0xfffff000u, 64));
	printf("COMPAT32: case=guard_pages checks_so_far=%lu failures=%lu\n", checks, failures);
}

/* The numeric fields of /proc/self/stat: f[k] is field k (4 to 52), state field 3. */
static int self_stat(char *state, long long f[53])
{
	char buf[2048], *p;
	int k;

	if (proc_read_file("/proc/self/stat", buf, sizeof(buf)) < 0)
		return -1;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%c", state) != 1)
		return -1;
	p += 3;	/* the space before field 4 */
	for (k = 4; k < 53 && p; k++) {
		f[k] = strtoll(p + 1, NULL, 10);
		p = strchr(p + 1, ' ');
	}
	return k == 53 ? 0 : -1;
}

/*
 * pidmap_info(2) from a 32-bit caller: TASKS records equal the ids, the
 * caller's own record equals /proc/self, a guard page and a bigger record
 * behave, and the record errnos.
 */
static void info_records(void)
{
	const unsigned int size = sizeof(struct pidmap_info);
	struct pidmap_info *recs = malloc(SLOTS * size), self;
	__u32 *ids = malloc(SLOTS * sizeof(__u32));
	long long f[53] = { 0 };
	long rss_before, rss_after;
	unsigned char *end;
	struct stat st;
	long n = -1, r = -1;
	int t, pidfd;
	size_t i;
	char state;

	if (!recs || !ids)
		pt_die("malloc");
	for (t = 0; t < 20; t++) {
		n = pidmap_list(PIDMAP_SCOPE_TASKS, 0, 0, 0, 0, ids, SLOTS);
		r = pidmap_info_list(PIDMAP_SCOPE_TASKS, 0, 0, 0, 0, recs, SLOTS, size,
				     PIDMAP_INFO_ALL_FIELDS);
		if (r == n) {
			for (i = 0; i < (size_t)n && (__u32)recs[i].tid == ids[i] &&
				    recs[i].mask == PIDMAP_INFO_ALL_FIELDS; i++)
				;
			if (i == (size_t)n)
				break;
		}
	}
	check(t < 20 && n > 3, "TASKS records equal the ids, every field: %ld records, %ld ids",
	      r, n);

	/* Our own record, field by field against /proc/self (we are idle here). */
	pidfd = pt_pidfd(getpid(), 0);
	rss_before = proc_field("/proc/self/status", "VmRSS");
	r = pidmap_info_list(PIDMAP_SCOPE_THREADS, PIDFD_SELF_THREAD_GROUP, 0, 0, 0, &self, 1, size,
			     PIDMAP_INFO_ALL_FIELDS | PIDMAP_INFO_SUPPORTED_MASK);
	check(r == 1, "THREADS(self) record: %ld (%s)", r, pt_errname(errno));
	rss_after = proc_field("/proc/self/status", "VmRSS");
	if (r == 1 && !self_stat(&state, f) && !fstat(pidfd, &st)) {
		/* ppid 4, priority 18, nice 19, threads 20, start_time 22, policy 41 */
		check(self.mask == (PIDMAP_INFO_ALL_FIELDS | PIDMAP_INFO_SUPPORTED_MASK) &&
		      self.supported_mask == (PIDMAP_INFO_ALL_FIELDS | PIDMAP_INFO_SUPPORTED_MASK),
		      "own record: mask %#llx supported %#llx", (unsigned long long)self.mask,
		      (unsigned long long)self.supported_mask);
		check((pid_t)self.tid == getpid() && (pid_t)self.tgid == getpid() &&
		      self.ppid == f[4] && (pid_t)self.ppid == getppid(),
		      "own record: tid %u tgid %u ppid %u (stat %lld)",
		      self.tid, self.tgid, self.ppid, f[4]);
		check(self.pidfs_id == (__u64)st.st_ino, "own record: pidfs_id %llu, pidfd inode %llu",
		      (unsigned long long)self.pidfs_id, (unsigned long long)st.st_ino);
		check(self.priority == f[18] && self.nice == f[19] && self.num_threads == f[20] &&
		      pidmap_ticks(self.start_time_ns) == (__u64)f[22] && self.policy == f[41],
		      "own record: priority %d nice %d threads %u start %llu policy %u; stat %lld "
		      "%lld %lld %lld %lld", self.priority, self.nice, self.num_threads,
		      pidmap_ticks(self.start_time_ns), self.policy, f[18], f[19], f[20], f[22],
		      f[41]);
		/* min_flt 10, maj_flt 12: stat is read after the record */
		check(self.min_flt > 0 && self.min_flt <= (__u64)f[10] &&
		      self.maj_flt <= (__u64)f[12] && self.nvcsw + self.nivcsw > 0,
		      "own record: faults %llu/%llu (stat %lld/%lld), switches %llu/%llu",
		      (unsigned long long)self.min_flt, (unsigned long long)self.maj_flt, f[10], f[12],
		      (unsigned long long)self.nvcsw, (unsigned long long)self.nivcsw);
		check(self.ruid == getuid() && self.euid == geteuid() && self.state == 'R' &&
		      !strcmp(self.comm, "compat32") && self.task_flags == 0,
		      "own record: uids %u %u state %c comm '%.64s' task_flags %#x", self.ruid,
		      self.euid, self.state ? self.state : '?', self.comm, self.task_flags);
		/* VmRSS in kB; read just before and just after. */
		check(self.rss_bytes > 0 && (self.rss_bytes >> 10 == (__u64)rss_before ||
					     self.rss_bytes >> 10 == (__u64)rss_after),
		      "own record: rss %llu bytes, status VmRSS %ld then %ld kB",
		      (unsigned long long)self.rss_bytes, rss_before, rss_after);
	}
	close(pidfd);

	/* Two records and half of one before the guard page. */
	end = guarded(0);
	r = pidmap_info_list(PIDMAP_SCOPE_THREADS, PIDFD_SELF_THREAD_GROUP, 0, 0, 0,
			     end - 2 * size - size / 2, 1000, size, PIDMAP_INFO_PPID);
	check(r == 1, "one record, room for two and a half before the guard page: %ld", r);
	EXPECT_ERR(EFAULT, pidmap_info_list(PIDMAP_SCOPE_TASKS, 0, 0, 0, 0,
					    end - 2 * size - size / 2, 1000, size,
					    PIDMAP_INFO_PPID));
	EXPECT_ERR(EFAULT, pidmap_info_list(PIDMAP_SCOPE_THREADS, PIDFD_SELF_THREAD_GROUP, 0, 0, 0,
					    end - size / 2, 1000, size, PIDMAP_INFO_PPID));
	EXPECT_ERR(EFAULT, pidmap_info_list(PIDMAP_SCOPE_TASKS, 0, 0, 0, 0,
					    (void *)(uintptr_t)0xfffff000u, 1, size,
					    PIDMAP_INFO_PPID));
	/* A 256-byte record: the kernel's 200 bytes, then zeros. */
	memset(end - 256, 0xff, 256);
	r = pidmap_info_list(PIDMAP_SCOPE_THREADS, PIDFD_SELF_THREAD_GROUP, 0, 0, 0, end - 256, 1,
			     256, PIDMAP_INFO_PPID);
	for (i = 200; i < 256 && !end[-256 + (long)i]; i++)
		;
	check(r == 1 && i == 256 && (pid_t)((struct pidmap_info *)(end - 256))->tgid == getpid() &&
	      (pid_t)((struct pidmap_info *)(end - 256))->ppid == getppid(),
	      "a 256-byte record: %ld, tail zero up to byte %zu", r, i);
	unguard(end, 0);
	EXPECT_ERR(EINVAL, pidmap_info_list(PIDMAP_SCOPE_TASKS, 0, 0, 0, 0, recs, 1, 160,
					    PIDMAP_INFO_PPID));
	EXPECT_ERR(EINVAL, pidmap_info_list(PIDMAP_SCOPE_TASKS, 0, 0, 0, 0, recs, 1, 172,
					    PIDMAP_INFO_PPID));
	EXPECT_ERR(E2BIG, pidmap_info_list(PIDMAP_SCOPE_TASKS, 0, 0, 0, 0, recs, 1, PAGE + 8,
					   PIDMAP_INFO_PPID));
	printf("COMPAT32: case=info_records records=%ld checks_so_far=%lu failures=%lu\n", n,
	       checks, failures);
	free(recs);
	free(ids);
}

/* Every errno row of the man pages that a test can provoke. */
static void errno_rows(pid_t root_child)
{
	unsigned char *pg = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct pidmap_req *pr = (struct pidmap_req *)(pg + PAGE - sizeof(*pr));
	struct fdmap_req *fr = (struct fdmap_req *)(pg + PAGE - sizeof(*fr));
	int fds[64], proc, proc_path, proc_self, root, closed, pidfd, gone_pidfd, child_fd;
	__u32 ids[64];
	pid_t gone;

	if (pg == MAP_FAILED || mprotect(pg + PAGE, PAGE, PROT_NONE))
		pt_die("mmap");
	proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	proc_path = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	proc_self = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* Open for reading, and neither procfs nor a pidfd. */
	root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* A number no fd uses, now or later in this function. */
	closed = 900;
	if (fcntl(closed, F_GETFD) != -1)
		pt_die("fd 900 is open");
	pidfd = pt_pidfd(getpid(), 0);
	child_fd = pt_pidfd(root_child, 0);
	gone = fork();
	if (gone == 0)
		_exit(0);
	gone_pidfd = pt_pidfd(gone, 0);
	waitpid(gone, NULL, 0);
	if (proc < 0 || proc_path < 0 || proc_self < 0 || root < 0 || gone < 0)
		pt_die("setup");

	/* EINVAL */
	pidmap_req_init(pr, PIDMAP_SCOPE_PROCS, 0, 0, 0, 0);
	EXPECT_ERR(EINVAL, sys_pidmap(pr, ids, 64, 1));
	EXPECT_ERR(EINVAL, sys_pidmap(pr, ids, 64, 0x80000000u));
	pr->scope = PIDMAP_SCOPE_CHILDREN + 1;
	EXPECT_ERR(EINVAL, sys_pidmap(pr, ids, 64, 0));
	pr->scope = PIDMAP_SCOPE_PROCS;
	pr->filter = 1u << 5;
	EXPECT_ERR(EINVAL, sys_pidmap(pr, ids, 64, 0));
	pr->filter = 0;
	pr->__reserved = 1;
	EXPECT_ERR(EINVAL, sys_pidmap(pr, ids, 64, 0));
	pr->__reserved = 0;
	pr->procfs_fd = proc;	/* two views */
	pr->pidns_id = 1;
	EXPECT_ERR(EINVAL, sys_pidmap(pr, ids, 64, 0));
	pr->procfs_fd = 0;
	pr->pidns_fd = proc;	/* one namespace named twice */
	EXPECT_ERR(EINVAL, sys_pidmap(pr, ids, 64, 0));
	pr->pidns_fd = 0;
	pr->pidns_id = ~0ULL;	/* no such namespace */
	EXPECT_ERR(ENOENT, sys_pidmap(pr, ids, 64, 0));
	pr->pidns_id = 0;
	pr->pidfd = pidfd;	/* a target for PROCS */
	EXPECT_ERR(EINVAL, sys_pidmap(pr, ids, 64, 0));
	pr->scope = PIDMAP_SCOPE_TASKS;
	EXPECT_ERR(EINVAL, sys_pidmap(pr, ids, 64, 0));
	pr->pidfd = 0;
	pr->info_size = sizeof(struct pidmap_info);	/* pidmap(2) takes none */
	EXPECT_ERR(EINVAL, sys_pidmap(pr, ids, 64, 0));
	pr->info_size = 0;
	pr->info_mask = PIDMAP_INFO_PPID;
	EXPECT_ERR(EINVAL, sys_pidmap(pr, ids, 64, 0));
	pr->info_mask = 0;
	pr->size = PIDMAP_REQ_SIZE_VER0 - 8;
	EXPECT_ERR(EINVAL, sys_pidmap(pr, ids, 64, 0));
	pr->size = 0;
	EXPECT_ERR(EINVAL, sys_pidmap(pr, ids, 0, 0));
	EXPECT_ERR(EINVAL, pidmap_list(PIDMAP_SCOPE_PROCS, 0, root, 0, 0, ids, 64));
	EXPECT_ERR(EINVAL, pidmap_list(PIDMAP_SCOPE_PROCS, 0, proc_self, 0, 0, ids, 64));
	memset(fr, 0, sizeof(*fr));
	fr->size = sizeof(*fr);
	fr->pidfd = PIDFD_SELF_THREAD_GROUP;
	EXPECT_ERR(EINVAL, sys_fdmap(fr, fds, 64, 0x80000000u));
	fr->__reserved = 1;
	EXPECT_ERR(EINVAL, sys_fdmap(fr, fds, 64, 0));
	fr->__reserved = 0;
	fr->procfs_fd = proc;	/* two views */
	fr->pidns_fd = 1;
	EXPECT_ERR(EINVAL, sys_fdmap(fr, fds, 64, 0));
	fr->procfs_fd = 0;
	fr->pidns_id = 1;	/* one namespace named twice */
	EXPECT_ERR(EINVAL, sys_fdmap(fr, fds, 64, 0));
	fr->pidns_fd = 0;
	fr->pidns_id = ~0ULL;	/* no such namespace */
	EXPECT_ERR(ENOENT, sys_fdmap(fr, fds, 64, 0));
	fr->pidns_id = 0;
	fr->size = FDMAP_REQ_SIZE_VER0 - 4;
	EXPECT_ERR(EINVAL, sys_fdmap(fr, fds, 64, 0));
	EXPECT_ERR(EINVAL, fdmap_list(PIDFD_SELF_THREAD_GROUP, root, 0, fds, 64));

	/* E2BIG: a longer struct with a non-zero tail, or more than a page. */
	{
		unsigned char *big = pg + PAGE - 64;

		memset(big, 0, 64);
		pidmap_req_init((struct pidmap_req *)big, PIDMAP_SCOPE_THREADS,
				PIDFD_SELF_THREAD_GROUP, 0, 0, 0);
		((struct pidmap_req *)big)->size = 64;
		check(sys_pidmap(big, ids, 64, 0) == 1 && ids[0] == (__u32)getpid(),
		      "a 64-byte request with a zero tail is accepted");
		big[63] = 1;
		EXPECT_ERR(E2BIG, sys_pidmap(big, ids, 64, 0));
		((struct pidmap_req *)big)->size = PAGE + 8;
		EXPECT_ERR(E2BIG, sys_pidmap(big, ids, 64, 0));
		memset(big, 0, 64);
		((struct fdmap_req *)big)->size = 64;
		((struct fdmap_req *)big)->pidfd = PIDFD_SELF_THREAD_GROUP;
		check(sys_fdmap(big, fds, 64, 0) > 0, "a 64-byte fdmap request with a zero tail is "
		      "accepted");
		big[40] = 1;
		EXPECT_ERR(E2BIG, sys_fdmap(big, fds, 64, 0));
		((struct fdmap_req *)big)->size = UINT_MAX;
		EXPECT_ERR(E2BIG, sys_fdmap(big, fds, 64, 0));
	}

	/* EFAULT: the request, or the buffer. */
	EXPECT_ERR(EFAULT, sys_pidmap(NULL, ids, 64, 0));
	EXPECT_ERR(EFAULT, sys_pidmap_info(NULL, ids, 1, 0));
	EXPECT_ERR(EFAULT, sys_fdmap(NULL, fds, 64, 0));
	*(uint32_t *)(pg + PAGE - 8) = PIDMAP_REQ_SIZE_VER0;	/* size read, the rest faults */
	EXPECT_ERR(EFAULT, sys_pidmap(pg + PAGE - 8, ids, 64, 0));
	*(uint32_t *)(pg + PAGE - 8) = FDMAP_REQ_SIZE_VER0;
	EXPECT_ERR(EFAULT, sys_fdmap(pg + PAGE - 8, fds, 64, 0));
	EXPECT_ERR(EFAULT, sys_pidmap(pg + PAGE, ids, 64, 0));
	EXPECT_ERR(EFAULT, pidmap_list(PIDMAP_SCOPE_PROCS, 0, 0, 0, 0, NULL, 64));
	EXPECT_ERR(EFAULT, fdmap_list(PIDFD_SELF_THREAD_GROUP, 0, 0, (int *)(pg + PAGE), 64));

	/* EBADF: the view, or the target. */
	EXPECT_ERR(EBADF, pidmap_list(PIDMAP_SCOPE_PROCS, 0, closed, 0, 0, ids, 64));
	EXPECT_ERR(EBADF, pidmap_list(PIDMAP_SCOPE_PROCS, 0, proc_path, 0, 0, ids, 64));
	EXPECT_ERR(EBADF, fdmap_list(PIDFD_SELF_THREAD_GROUP, proc_path, 0, fds, 64));
	EXPECT_ERR(EBADF, pidmap_list(PIDMAP_SCOPE_THREADS, closed, 0, 0, 0, ids, 64));
	EXPECT_ERR(EBADF, pidmap_list(PIDMAP_SCOPE_CHILDREN, root, 0, 0, 0, ids, 64));
	EXPECT_ERR(EBADF, pidmap_list(PIDMAP_SCOPE_THREADS, -1, 0, 0, 0, ids, 64));
	EXPECT_ERR(EBADF, fdmap_list(closed, 0, 0, fds, 64));
	EXPECT_ERR(EBADF, fdmap_list(proc, 0, 0, fds, 64));

	/* ESRCH: a pidfd whose process is gone. */
	EXPECT_ERR(ESRCH, pidmap_list(PIDMAP_SCOPE_THREADS, gone_pidfd, 0, 0, 0, ids, 64));
	EXPECT_ERR(ESRCH, pidmap_list(PIDMAP_SCOPE_CHILDREN, gone_pidfd, 0, 0, 0, ids, 64));
	EXPECT_ERR(ESRCH, fdmap_list(gone_pidfd, 0, 0, fds, 0));

	/*
	 * As uid 65534, the root child: hidden by the default view (ESRCH),
	 * its fd table denied through a hidepid=off /proc (EACCES), its
	 * threads listed there.
	 */
	{
		pid_t u = fork();
		int status = -1;

		if (u == 0) {
			if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
				_exit(2);
			errno = 0;
			if (fdmap_list(child_fd, 0, 0, fds, 64) != -1 || errno != ESRCH)
				_exit(10);
			if (fdmap_list(child_fd, proc, 0, fds, 64) != -1 || errno != EACCES)
				_exit(11);
			if (pidmap_list(PIDMAP_SCOPE_THREADS, child_fd, 0, 0, 0, ids, 64) != -1 ||
			    errno != ESRCH)
				_exit(12);
			if (pidmap_list(PIDMAP_SCOPE_THREADS, child_fd, proc, 0, 0, ids, 64) != 1 ||
			    ids[0] != (__u32)root_child)
				_exit(13);
			_exit(0);
		}
		check(u > 0 && waitpid(u, &status, 0) == u && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0,
		      "the root child as uid 65534: status %#x (exit 10: fdmap default view not "
		      "ESRCH, 11: fdmap through /proc not EACCES, 12: THREADS default view not "
		      "ESRCH, 13: THREADS through /proc not the child)", status);
	}
	printf("COMPAT32: case=errno_rows checks_so_far=%lu failures=%lu\n", checks, failures);
	close(pidfd);
	close(child_fd);
	close(gone_pidfd);
	munmap(pg, 2 * PAGE);
}

/* The listings equal /proc as root. */
static void against_proc(pid_t child)
{
	struct pt_ids got = { 0 }, ref = { 0 }, ref2 = { 0 };
	struct pt_enum_stats st = { 0 };
	int t, ok = 0, child_fd = pt_pidfd(child, 0);
	char path[64];

	for (t = 0; t < 20 && !ok; t++) {
		pt_proc_tgids(&ref);
		ok = !pt_enumerate(PT_PIDMAP, PIDMAP_SCOPE_PROCS, 0, 0, 7, &got, &st);
		pt_proc_tgids(&ref2);
		ok = ok && (pt_ids_equal(&got, &ref) || pt_ids_equal(&got, &ref2));
	}
	check(ok, "SCOPE_PROCS differs from readdir(/proc)");
	for (ok = 0, t = 0; t < 20 && !ok; t++) {
		pt_proc_all_tasks(&ref);
		ok = !pt_enumerate(PT_PIDMAP, PIDMAP_SCOPE_TASKS, 0, 0, 7, &got, &st);
		pt_proc_all_tasks(&ref2);
		ok = ok && (pt_ids_equal(&got, &ref) || pt_ids_equal(&got, &ref2));
	}
	check(ok, "SCOPE_TASKS differs from readdir(/proc/*/task)");
	check(!pt_enumerate(PT_PIDMAP, PIDMAP_SCOPE_CHILDREN, PIDFD_SELF_THREAD_GROUP, 0, 1, &got,
			    &st) && got.n == 1 && got.v[0] == child,
	      "CHILDREN(self) is not just %d", child);
	snprintf(path, sizeof(path), "/proc/%d/task", child);
	pt_ids_clear(&ref);
	check(!pt_readdir_ids(path, &ref) &&
	      !pt_enumerate(PT_PIDMAP, PIDMAP_SCOPE_THREADS, child_fd, 0, 1, &got, &st) &&
	      pt_ids_equal(&got, &ref), "THREADS(pidfd of %d) differs from %s", child, path);
	snprintf(path, sizeof(path), "/proc/%d/fd", child);
	pt_ids_clear(&ref);
	check(!pt_readdir_ids(path, &ref) &&
	      !pt_enumerate(PT_FDMAP, 0, child_fd, 0, 3, &got, &st) && pt_ids_equal(&got, &ref),
	      "fdmap(pidfd of %d) differs from %s", child, path);
	check(!st.dups && !st.order && !st.overrun, "listing order: %lu dups %lu order %lu overrun",
	      st.dups, st.order, st.overrun);
	close(child_fd);
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
	prctl(PR_SET_NAME, "compat32");
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
	counts();
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

// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * adversary_fuzz: randomized hostile arguments for pidmap(2) (473),
 * pidmap_info(2) (474) and fdmap(2) (475), each call checked against an
 * oracle of the exact errno.  `cargo xtask qemu-test` runs it as
 * c/adversary_fuzz: it mounts the two hidepid= views itself, in a mount
 * namespace of its own.
 *
 * Two phases, each in its own child: as root, then as uid/gid 65534
 * (setresgid/setresuid after fork, then PR_SET_DUMPABLE so that its own
 * children are its to look at).  Per phase ADVERSARY_FUZZ_CALLS listing calls,
 * pidmap(2) and fdmap(2) half and half (default 100000, never fewer than
 * 50000), and ADVERSARY_FUZZ_INFO_CALLS pidmap_info(2) calls (default 20000, never
 * fewer than 10000).  ADVERSARY_FUZZ_SEED reproduces a run.
 *
 * Each call draws: flags (0 mostly, else any 32 bits), the count (0, 1,
 * small, medium, huge up to 1,000,000, 1,000,001, any size_t), the buffer
 * (exactly sized with a canary after it, a 16 MiB area, NULL, k entries
 * and part of one before a PROT_NONE page, read-only, kernel, non-canonical),
 * the request (its size: VER0, larger with a zero tail, larger with a
 * nonzero tail byte, < VER0, > PAGE_SIZE, a tail running into a PROT_NONE
 * page; the pointer: NULL, unmapped; every request ends right before a
 * PROT_NONE page), its fields (scope, filter bits, view fields, cursor, reserved,
 * info_size, info_mask), the target (pidfds of self, of a thread of ours
 * (PIDFD_THREAD), of a live child, of a zombie child, of a reaped child, of
 * init; PIDFD_SELF_THREAD, PIDFD_SELF_THREAD_GROUP; fd 0 (/dev/null), a
 * closed fd, a pipe, a procfs fd, a negative number) and the procfs fd
 * (/proc O_RDONLY, /proc2 mounted hidepid=invisible, /proc3 hidepid=noaccess
 * (both at VIEW_DIR, mounted by main() in a private mount namespace),
 * /proc O_PATH, /proc/self (procfs, not its root), /proc/version, /, closed,
 * negative, 0).
 *
 * Oracle, every call: the kernel's checks are replayed in the order
 * kernel/pidmap.c and fs/proc/fdmap.c make them, giving the exact errno of
 * the first bad argument; targets are resolved as pidfd_get_pid(),
 * proc_pid_view_get() and the view's hidepid rule answer them, so the
 * target's errno (EBADF, ESRCH, EPERM, EACCES) is exact as well, except
 * the zombie's (success or ESRCH).  A success returns r <= nr entries,
 * strictly ascending above the cursor (fdmap: >= first_fd), no more than
 * fit before a PROT_NONE page; where the answer is known (our threads, our
 * children, a child's threads/children, our fd table, the child's fd
 * table, a zombie's empty table) it must equal the reference, and whether
 * a NULL/read-only/guarded buffer gives EFAULT is then exact too.  A
 * listing that ended (r < nr) must hold our own pid (PROCS) or tids
 * (TASKS) above the cursor, as root kthreadd too, and never kthreadd with
 * PIDMAP_FILTER_NO_KTHREADS.  Records: mask = asked & known | ID (and
 * SUPPORTED_MASK with its supported_mask), every field outside the mask 0,
 * __spare 0, every byte from 200 to info_size 0, a state letter of
 * "RSDTtXZPI", a NUL in comm, pidfs_id != 0, our own tasks' tgid, ppid,
 * uids, num_threads and comm exact.  Bytes: nothing past the returned
 * count is written (the rest of the buffer and a 64-byte canary after an
 * exact buffer, or 64 KiB past r in the big area), and a call failing with
 * any errno but EFAULT writes nothing at all.
 *
 * Output: per phase counts, then "FUZZ-RESULT ok calls=N" or
 * "FUZZ-RESULT FAIL ..." (exit 1).  ENOSYS is a failure like any errno
 * not expected.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * <linux/pidmap.h>, <linux/fdmap.h> (or their copies), PIDFD_THREAD and
 * PIDFD_SELF_*: <linux/pidfd.h> itself clashes with glibc's <fcntl.h>.
 */
#include "pidmap_syscalls.h"

#define NR_PIDMAP	__NR_pidmap
#define NR_PIDMAP_INFO	__NR_pidmap_info
#define NR_FDMAP	__NR_fdmap
#define NR_PIDFD_OPEN	__NR_pidfd_open

#define PAGE		4096
#define VIEW_DIR	"/tmp/adversary_fuzz"		/* where the views are mounted */
#define PROC2		VIEW_DIR "/proc2"	/* hidepid=invisible */
#define PROC3		VIEW_DIR "/proc3"	/* hidepid=noaccess */
#define MAX_NR		1000000UL
#define PID_MAX_LIMIT	(4 * 1024 * 1024)	/* x86_64 */
#define FILL		0xa5
#define CANARY		64
#define EXACT_BYTES	(4 * 1024 * 1024)	/* exact buffers live here */
#define BIG_BYTES	(16 * 1024 * 1024)	/* the "huge" area */
#define BIG_WINDOW	(64 * 1024)		/* checked past r in it */
#define HELPERS		2
#define INFO_KNOWN	(PIDMAP_INFO_ID | PIDMAP_INFO_PPID | PIDMAP_INFO_CREDS | \
			 PIDMAP_INFO_SCHED | PIDMAP_INFO_NUM_THREADS |		\
			 PIDMAP_INFO_CPUTIME | PIDMAP_INFO_START_TIME |		\
			 PIDMAP_INFO_RSS | PIDMAP_INFO_STATE | PIDMAP_INFO_COMM | \
			 PIDMAP_INFO_TASK_FLAGS | PIDMAP_INFO_FAULTS |		\
			 PIDMAP_INFO_CTXSW | PIDMAP_INFO_SUPPORTED_MASK)
#define MAXREF		256

enum call_kind { K_PIDMAP, K_INFO, K_FDMAP, K_NR };
static const char *const kind_names[K_NR] = { "pidmap", "pidmap_info", "fdmap" };

enum buf_class { B_EXACT, B_BIG, B_NULL, B_GUARD, B_RO, B_KERNEL, B_NONCANON, B_NR };
static const char *const buf_names[B_NR] = {
	"exact", "big", "null", "guard", "readonly", "kernel", "noncanonical",
};
enum req_class { R_VALID, R_LONG_ZERO, R_LONG_NONZERO, R_SHORT, R_HUGE,
		 R_TAIL_FAULT, R_NULL, R_UNMAPPED, R_NR };
static const char *const req_names[R_NR] = {
	"valid", "long_zero_tail", "long_nonzero_tail", "short", "over_a_page",
	"tail_into_guard", "null", "unmapped",
};
enum tgt { T_SELF, T_THREAD, T_SELF_THREAD, T_SELF_GROUP, T_CHILD, T_ZOMBIE,
	   T_REAPED, T_INIT, T_ZERO, T_CLOSED, T_PIPE, T_PROCFD, T_NEG, T_NR };
static const char *const tgt_names[T_NR] = {
	"self", "thread_pidfd", "PIDFD_SELF_THREAD", "PIDFD_SELF_THREAD_GROUP",
	"child", "zombie", "reaped", "init", "fd0", "closed", "pipe", "procfs_fd",
	"negative",
};
enum view { V_NONE, V_PROC, V_PROC_INVIS, V_PROC_NOACC, V_OPATH, V_NONROOT,
	    V_REGULAR, V_SLASH, V_CLOSED, V_NEG, V_ZERO, V_NR };
static const char *const view_names[V_NR] = {
	"none", "/proc", "/proc2(hidepid=invisible)", "/proc3(hidepid=noaccess)",
	"/proc O_PATH", "/proc/self", "/proc/version", "/", "closed", "negative",
	"fd0",
};

struct stats {
	unsigned long calls[K_NR], ok[K_NR], entries[K_NR], exact[K_NR];
	unsigned long by_errno[K_NR][8];	/* EINVAL E2BIG EFAULT EBADF ESRCH EPERM EACCES EOVERFLOW */
	unsigned long by_buf[B_NR], by_req[R_NR], by_tgt[T_NR], by_view[V_NR];
	unsigned long failures;
};
static struct stats *st;
static const int errnos[8] = { EINVAL, E2BIG, EFAULT, EBADF, ESRCH, EPERM, EACCES, EOVERFLOW };

static uint64_t rng;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}
static unsigned int below(unsigned int n) { return rnd() % n; }
static int chance(unsigned int pct) { return below(100) < pct; }

/* The phase's world */
static int as_nobody;
static pid_t self_pid, init_pid = 1;
static int fd_self, fd_thread, fd_child, fd_zombie, fd_reaped, fd_init;
/*
 * Fds for the requests' pidns_fd: our own pid namespace, a network
 * namespace, an O_PATH one, a closed fd, a procfs root; and nsfs ids for
 * pidns_id: our pid namespace's, the network namespace's, one no
 * namespace has.
 */
#define PIDNS_FDS 5
static int pidns_fds[PIDNS_FDS];
#define PIDNS_IDS 3
static __u64 pidns_ids[PIDNS_IDS];
static int fd_closed, fd_pipe, fd_procfs_file;
static int vfd[V_NR];
static int have_proc2, have_proc3;
static pid_t child_pid, zombie_pid;
static int ref_tids[MAXREF], nref_tids;		/* our threads */
static int ref_children[MAXREF], nref_children;	/* our children */
static int ref_fds[MAXREF], nref_fds;		/* our fd table */
static int *child_fds, *nchild_fds;		/* the child's, shared */
static pid_t helper_tids[HELPERS];
static unsigned char *exact_area, *big_area, *guard_area, *ro_area, *req_map;
static unsigned char *req_guard;		/* req_map + 2 pages: PROT_NONE */

static int release_pipe[2];

static void *helper(void *arg)
{
	char c;

	helper_tids[(long)arg] = gettid();
	prctl(PR_SET_NAME, "adv_fuzz-h");
	while (read(release_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void die(const char *what)
{
	printf("FUZZ-RESULT FAIL setup: %s: %s\n", what, strerror(errno));
	exit(2);
}

static unsigned char *map(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

/* An area of @len bytes followed by a PROT_NONE page. */
static unsigned char *map_guarded(size_t len)
{
	unsigned char *p = map(len + PAGE, PROT_READ | PROT_WRITE);

	if (mprotect(p + len, PAGE, PROT_NONE))
		die("mprotect");
	return p;
}

static int pidfd_open(pid_t pid, unsigned int flags)
{
	return syscall(NR_PIDFD_OPEN, pid, flags);
}

static int cmp_int(const void *a, const void *b)
{
	int l = *(const int *)a, r = *(const int *)b;

	return (l > r) - (l < r);
}

/* The open fds of the caller, 0..1023, without opening one. */
static int fd_table(int *out)
{
	int n = 0;

	for (int fd = 0; fd < 1024 && n < MAXREF; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			out[n++] = fd;
	return n;
}

static void setup(void)
{
	pthread_t th[HELPERS];
	int p[2], fd;

	self_pid = getpid();
	prctl(PR_SET_NAME, "adv_fuzz");
	/* fd 0 is /dev/null for reading: neither a pidfd nor procfs */
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || dup2(fd, 0) < 0)
		die("/dev/null");
	close(fd);

	exact_area = map_guarded(EXACT_BYTES + PAGE);
	big_area = map_guarded(BIG_BYTES);
	memset(big_area, FILL, BIG_BYTES);
	guard_area = map_guarded(2 * 1024 * 1024);
	ro_area = map(4 * PAGE, PROT_READ);
	req_map = map_guarded(2 * PAGE);
	req_guard = req_map + 2 * PAGE;
	child_fds = (int *)mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (child_fds == MAP_FAILED)
		die("mmap shared");
	nchild_fds = child_fds + MAXREF;

	if (pipe(release_pipe))
		die("pipe");
	for (long i = 0; i < HELPERS; i++)
		if (pthread_create(&th[i], NULL, helper, (void *)i))
			die("pthread_create");
	for (int i = 0; i < HELPERS; i++)
		while (!__atomic_load_n(&helper_tids[i], __ATOMIC_SEQ_CST))
			usleep(1000);

	/* the live child: blocks on the release pipe, its fd table fixed */
	child_pid = fork();
	if (child_pid < 0)
		die("fork");
	if (!child_pid) {
		char c;

		*nchild_fds = fd_table(child_fds);
		__atomic_store_n(nchild_fds + 1, 1, __ATOMIC_SEQ_CST);
		while (read(release_pipe[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	while (!__atomic_load_n(nchild_fds + 1, __ATOMIC_SEQ_CST))
		usleep(1000);
	fd_child = pidfd_open(child_pid, 0);
	if (fd_child < 0)
		die("pidfd_open child");

	/* a zombie: exited, not reaped */
	zombie_pid = fork();
	if (zombie_pid < 0)
		die("fork");
	if (!zombie_pid)
		_exit(0);
	fd_zombie = pidfd_open(zombie_pid, 0);
	if (fd_zombie < 0)
		die("pidfd_open zombie");
	{
		siginfo_t si;

		if (waitid(P_PID, zombie_pid, &si, WEXITED | WNOWAIT))
			die("waitid zombie");
	}
	/* a reaped child: its pidfd outlives it */
	{
		pid_t r = fork();

		if (r < 0)
			die("fork");
		if (!r)
			_exit(0);
		fd_reaped = pidfd_open(r, 0);
		if (fd_reaped < 0)
			die("pidfd_open reaped");
		if (waitpid(r, NULL, 0) != r)
			die("waitpid");
	}

	fd_self = pidfd_open(self_pid, 0);
	fd_thread = pidfd_open(helper_tids[0], PIDFD_THREAD);
	fd_init = pidfd_open(init_pid, 0);
	if (fd_self < 0 || fd_thread < 0 || fd_init < 0)
		die("pidfd_open");
	/* a closed fd: a number no open fd has, nor will (setup opens < 64) */
	fd_closed = 777;
	if (fcntl(fd_closed, F_GETFD) >= 0)
		die("fd 777 is open");
	if (pipe(p))
		die("pipe");
	fd_pipe = p[0];
	fd_procfs_file = open("/proc/version", O_RDONLY);

	for (int v = 0; v < V_NR; v++)
		vfd[v] = -1;
	vfd[V_NONE] = 0;
	vfd[V_PROC] = open("/proc", O_RDONLY | O_DIRECTORY);
	vfd[V_PROC_INVIS] = open(PROC2, O_RDONLY | O_DIRECTORY);
	vfd[V_PROC_NOACC] = open(PROC3, O_RDONLY | O_DIRECTORY);
	vfd[V_OPATH] = open("/proc", O_PATH);
	vfd[V_NONROOT] = open("/proc/self", O_RDONLY | O_DIRECTORY);
	vfd[V_REGULAR] = fd_procfs_file;
	vfd[V_SLASH] = open("/", O_RDONLY | O_DIRECTORY);
	vfd[V_CLOSED] = fd_closed;
	vfd[V_NEG] = -1;
	vfd[V_ZERO] = 0;
	pidns_fds[0] = open("/proc/self/ns/pid", O_RDONLY);
	pidns_fds[1] = open("/proc/self/ns/net", O_RDONLY);
	pidns_fds[2] = open("/proc/self/ns/pid", O_PATH);
	pidns_fds[3] = fd_closed;
	pidns_fds[4] = vfd[V_PROC];
	if (ioctl(pidns_fds[0], NS_GET_ID, &pidns_ids[0]) ||
	    ioctl(pidns_fds[1], NS_GET_ID, &pidns_ids[1]))
		die("NS_GET_ID");
	pidns_ids[2] = ~0ULL;
	if (pidns_fds[0] < 0 || pidns_fds[1] < 0 || pidns_fds[2] < 0)
		die("open /proc/self/ns fds");
	if (vfd[V_PROC] < 0 || vfd[V_OPATH] < 0 || vfd[V_NONROOT] < 0 ||
	    fd_procfs_file < 0 || vfd[V_SLASH] < 0)
		die("open /proc fds");
	have_proc2 = vfd[V_PROC_INVIS] >= 0;
	have_proc3 = vfd[V_PROC_NOACC] >= 0;
	if (!have_proc2 || !have_proc3)
		die(PROC2 " or " PROC3 " (main() mounts them hidepid=invisible/noaccess)");

	/* the references, fixed from here on */
	ref_tids[nref_tids++] = self_pid;
	for (int i = 0; i < HELPERS; i++)
		ref_tids[nref_tids++] = helper_tids[i];
	qsort(ref_tids, nref_tids, sizeof(int), cmp_int);
	ref_children[nref_children++] = child_pid;
	ref_children[nref_children++] = zombie_pid;
	qsort(ref_children, nref_children, sizeof(int), cmp_int);
	nref_fds = fd_table(ref_fds);
#ifdef ADVERSARY_FUZZ_MUTANT
	nref_fds--;	/* negative control: the fd table reference loses its last fd */
	nref_tids--;	/* and the threads' their last tid */
#endif
}

/* ---- one call ---- */

struct call {
	enum call_kind kind;
	unsigned int flags;
	size_t nr;
	enum buf_class buf;
	unsigned char *bufp;
	size_t room;		/* whole entries writable at bufp (B_GUARD) */
	size_t elem;		/* bytes per entry */
	enum req_class req;
	uint32_t size;
	void *reqp;
	enum tgt tgt;
	enum view view;
	struct pidmap_req pr;
	struct fdmap_req fr;
	int target_fd;
	/* the oracle */
	int want_err;		/* exact errno, 0 when a success is due */
	int alt_ok;		/* the zombie: ESRCH allowed too */
	const int *ref;		/* the exact answer before the cursor and nr */
	int nref;
	int have_ref;
};

static void violation(const struct call *c, long r, int e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void violation(const struct call *c, long r, int e, const char *fmt, ...)
{
	va_list ap;

	st->failures++;
	if (st->failures > 30)
		return;
	printf("VIOLATION %s [%s]: ", kind_names[c->kind], as_nobody ? "65534" : "root");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n  got r=%ld errno=%d (%s), want errno=%d%s\n", r, r < 0 ? e : 0,
	       r < 0 ? strerror(e) : "-", c->want_err, c->alt_ok ? " or ESRCH" : "");
	printf("  flags=%#x nr=%zu buf=%s room=%zu req=%s size=%u tgt=%s view=%s\n",
	       c->flags, c->nr, buf_names[c->buf], c->room, req_names[c->req], c->size,
	       tgt_names[c->tgt], view_names[c->view]);
	if (c->kind == K_FDMAP)
		printf("  fdmap_req{pidfd=%d first_fd=%u reserved=%u procfs_fd=%d pidns_fd=%d pidns_id=%#llx}\n",
		       c->fr.pidfd, c->fr.first_fd, c->fr.__reserved, (int)c->fr.procfs_fd,
		       (int)c->fr.pidns_fd, (unsigned long long)c->fr.pidns_id);
	else
		printf("  pidmap_req{scope=%u last_id=%llu pidfd=%d filter=%#x info_size=%u reserved=%u info_mask=%#llx procfs_fd=%d pidns_fd=%d pidns_id=%#llx}\n",
		       c->pr.scope, (unsigned long long)c->pr.last_id, c->pr.pidfd,
		       c->pr.filter, c->pr.info_size, c->pr.__reserved,
		       (unsigned long long)c->pr.info_mask, (int)c->pr.procfs_fd,
		       (int)c->pr.pidns_fd, (unsigned long long)c->pr.pidns_id);
	fflush(stdout);
}

static int pick_target_fd(struct call *c)
{
	switch (c->tgt) {
	case T_SELF: return fd_self;
	case T_THREAD: return fd_thread;
	case T_SELF_THREAD: return PIDFD_SELF_THREAD;
	case T_SELF_GROUP: return PIDFD_SELF_THREAD_GROUP;
	case T_CHILD: return fd_child;
	case T_ZOMBIE: return fd_zombie;
	case T_REAPED: return fd_reaped;
	case T_INIT: return fd_init;
	case T_ZERO: return 0;
	case T_CLOSED: return fd_closed;
	case T_PIPE: return fd_pipe;
	case T_PROCFD: return vfd[V_PROC];
	case T_NEG: {
		int v;

		do
			v = -(int)(1 + below(INT32_MAX));
		while (v == PIDFD_SELF_THREAD || v == PIDFD_SELF_THREAD_GROUP);
		return chance(50) ? -1 : v;
	}
	default: return 0;
	}
}

static enum view pick_view(void)
{
	if (chance(45))
		return V_NONE;
	if (chance(60))
		return V_PROC + below(3);
	return V_OPATH + below(V_NR - V_OPATH);
}

/* The errno of the view stage, 0 if the view is good. */
/*
 * What proc_pid_view_pidns() says of @fd: EBADF if it is not open (or
 * O_PATH), EINVAL unless it is a pid namespace the caller may name: here
 * only our own is (a child namespace has no fd in this program).
 */
static int pidns_errno(int fd)
{
	struct stat st, own;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fl & O_PATH)
		return EBADF;
	if (fstat(fd, &st) || fstat(pidns_fds[0], &own))
		return EINVAL;
	return st.st_dev == own.st_dev && st.st_ino == own.st_ino ? 0 : EINVAL;
}

static int pick_pidns_fd(void)
{
	return chance(50) ? pidns_fds[0] : pidns_fds[below(PIDNS_FDS)];
}

static int view_errno(enum view v);

/* What proc_pid_view_pidns() says of nsfs id @id: only ours is named. */
static int pidns_id_errno(__u64 id)
{
	return id == pidns_ids[0] ? 0 : ENOENT;
}

static __u64 pick_pidns_id(void)
{
	return chance(50) ? pidns_ids[0] : chance(80) ? pidns_ids[below(PIDNS_IDS)] : rnd();
}

/*
 * The view fields, common to both requests: at most one of them named
 * (often none), and now and then two, which is EINVAL. c->view is the
 * procfs view, V_NONE when procfs_fd is 0 (fd 0 names no view).
 */
static void pick_view_fields(struct call *c, __u32 *procfs_fd, __u32 *pidns_fd,
			     __u64 *pidns_id)
{
	unsigned int r = below(10);

	c->view = V_NONE;
	if (r < 5 || chance(5)) {
		c->view = pick_view();
		*procfs_fd = (uint32_t)vfd[c->view];
		if (!*procfs_fd)
			c->view = V_NONE;
	}
	if ((r >= 5 && r < 7) || chance(5))
		*pidns_fd = (uint32_t)pick_pidns_fd();
	if (r == 7 || chance(5))
		*pidns_id = pick_pidns_id();
}

/*
 * The view stage of both oracles, after the request's own checks: two
 * views or one namespace named twice is EINVAL, then the named view's
 * errno.
 */
static int view_fields_errno(const struct call *c, __u32 procfs_fd, __u32 pidns_fd,
			     __u64 pidns_id)
{
	if (pidns_fd && pidns_id)
		return EINVAL;
	if (procfs_fd && (pidns_fd || pidns_id))
		return EINVAL;
	if (procfs_fd)
		return view_errno(c->view);
	if (pidns_fd)
		return pidns_errno((int)pidns_fd);
	if (pidns_id)
		return pidns_id_errno(pidns_id);
	return 0;
}

static int view_errno(enum view v)
{
	switch (v) {
	case V_NONE: case V_PROC: case V_PROC_INVIS: case V_PROC_NOACC:
		return 0;
	case V_OPATH: case V_CLOSED: case V_NEG:
		return EBADF;
	default:		/* open for reading, not a procfs root */
		return EINVAL;
	}
}

/*
 * The errno of the target stage for a good view, 0 if the target is
 * listed. @fd: fdmap (EACCES when the view shows the task but the fd
 * directory is not ours).
 */
static int target_errno(const struct call *c, int fd, int *alt)
{
	*alt = 0;
	switch (c->tgt) {
	case T_ZERO: case T_CLOSED: case T_PIPE: case T_PROCFD: case T_NEG:
		return EBADF;
	case T_REAPED:
		return ESRCH;
	case T_ZOMBIE:
		*alt = 1;
		return 0;
	case T_INIT:
		if (!as_nobody)
			return 0;
		switch (c->view) {
		case V_NONE: return ESRCH;	/* hidepid=invisible, no gid */
		case V_PROC: return fd ? EACCES : 0;
		case V_PROC_INVIS: return ESRCH;
		case V_PROC_NOACC: return EPERM;
		default: return -1;
		}
	default:
		return 0;
	}
}

static void pick_buffer(struct call *c)
{
	size_t bytes;

	c->room = 0;
	switch (c->buf) {
	case B_EXACT:
		bytes = c->nr * c->elem;
		if (c->nr > MAX_NR || bytes + CANARY + 4 > EXACT_BYTES) {
			c->buf = B_BIG;
			c->bufp = big_area;
			return;
		}
		/* end the buffer + canary at a random spot, misaligned at times */
		c->bufp = exact_area + EXACT_BYTES - bytes - CANARY -
			  (chance(20) ? below(4) : 0);
		memset(c->bufp, FILL, bytes + CANARY);
		return;
	case B_BIG:
		c->bufp = big_area;
		return;
	case B_NULL:
		c->bufp = NULL;
		return;
	case B_GUARD: {
		size_t part = c->elem > 1 ? below(c->elem) : 0;

		c->room = below(c->kind == K_INFO ? 40 : 300);
		bytes = c->room * c->elem + part;
		c->bufp = guard_area + 2 * 1024 * 1024 - bytes;
		memset(c->bufp, FILL, bytes);
		return;
	}
	case B_RO:
		c->bufp = ro_area + (chance(50) ? 0 : 4 * below(PAGE / 4));
		return;
	case B_KERNEL:
		c->bufp = (unsigned char *)0xffffffff81000000UL;
		return;
	default:
		c->bufp = (unsigned char *)0x8000000000000000UL;
		return;
	}
}

static size_t pick_nr(void)
{
	switch (below(16)) {
	case 0: case 1: return 0;
	case 2: case 3: return 1;
	case 4: case 5: case 6: case 7: return 2 + below(63);
	case 8: case 9: return 65 + below(1000);
	case 10: return 100000 + below(MAX_NR - 100000 + 1);
	case 11: return MAX_NR;
	case 12: return MAX_NR + 1;
	case 13: return (size_t)rnd() | (1UL << 40);
	case 14: return 2 + below(8);
	default: return 3 + below(20);
	}
}

static uint64_t pick_cursor(const int *ref, int nref)
{
	switch (below(10)) {
	case 0: case 1: case 2: case 3: return 0;
	case 4: case 5:
		if (nref) {
			uint64_t v = ref[below(nref)];

			return chance(50) ? v : v - 1;
		}
		return below(200);
	case 6: return below(1000);
	case 7: return PID_MAX_LIMIT - below(3);
	case 8: return chance(50) ? UINT64_MAX : rnd();
	default: return self_pid - below(3);
	}
}

/*
 * The request: the struct of @len bytes at @k is written at the end of
 * the request page, before the guard, in @c->size bytes (size class).
 */
static void place_request(struct call *c, const void *k, size_t ver0)
{
	uint32_t size;
	unsigned char *p;

	switch (c->req) {
	case R_VALID: size = ver0; break;
	case R_LONG_ZERO: case R_LONG_NONZERO:
		size = ver0 + 1 + below(PAGE - ver0);
		break;
	case R_SHORT: size = below(ver0); break;
	case R_HUGE: size = chance(50) ? PAGE + 1 + below(PAGE) : (uint32_t)rnd() | 0x10000; break;
	case R_TAIL_FAULT: size = ver0 + 1 + below(PAGE - ver0); break;
	default: size = ver0; break;
	}
	c->size = size;
	if (c->req == R_LONG_ZERO || c->req == R_LONG_NONZERO)
		p = req_guard - size;
	else
		p = req_guard - ver0;
	if (c->req == R_LONG_ZERO || c->req == R_LONG_NONZERO)
		memset(p, 0, size);
	memcpy(p, k, ver0);
	memcpy(p, &size, 4);
	if (c->req == R_LONG_NONZERO)
		p[ver0 + below(size - ver0)] = 1 + below(255);
	c->reqp = p;
	if (c->req == R_NULL)
		c->reqp = NULL;
	else if (c->req == R_UNMAPPED)
		c->reqp = req_guard + (chance(50) ? 0 : below(PAGE - 8));
}

static enum req_class pick_req_class(void)
{
	unsigned int r = below(100);

	if (r < 62) return R_VALID;
	if (r < 72) return R_LONG_ZERO;
	return R_LONG_NONZERO + below(R_NR - R_LONG_NONZERO);
}

/* The request stage's errno: the size and pointer checks. */
static int req_errno(const struct call *c, size_t ver0)
{
	switch (c->req) {
	case R_NULL: case R_UNMAPPED: case R_TAIL_FAULT: return EFAULT;
	case R_HUGE: case R_LONG_NONZERO: return E2BIG;
	case R_SHORT: return EINVAL;
	default: (void)ver0; return 0;
	}
}

static int kernel_buf(const struct call *c)
{
	return c->buf == B_KERNEL || c->buf == B_NONCANON;
}

/*
 * The checks all three calls open with, in the kernel's order: flags (0),
 * nr (at most 1,000,000), the buffer's address for pidmap(2) and fdmap(2)
 * (access_ok() of nr entries; pidmap_info(2) checks it only once it knows
 * info_size), then the request's pointer and size (req_errno()).  The
 * errno of the first that fails, or 0.
 */
static int oracle_opening(const struct call *c, size_t ver0)
{
	if (c->flags)
		return EINVAL;
	if (c->nr > MAX_NR)
		return EOVERFLOW;
	if (c->kind != K_INFO && kernel_buf(c))
		return EFAULT;
	return req_errno(c, ver0);
}

/* Set want_err, ref for a pidmap/pidmap_info call. */
static void oracle_pidmap(struct call *c)
{
	const struct pidmap_req *q = &c->pr;
	int e, alt = 0;

	c->have_ref = 0;
	c->want_err = oracle_opening(c, PIDMAP_REQ_SIZE_VER0);
	if (c->want_err)
		return;
	if (q->scope > PIDMAP_SCOPE_CHILDREN || (q->filter & ~PIDMAP_FILTER_NO_KTHREADS))
		goto einval;
	if (q->__reserved)
		goto einval;
	if ((q->pidns_fd && q->pidns_id) || (q->procfs_fd && (q->pidns_fd || q->pidns_id)))
		goto einval;
	if (q->pidfd && q->scope <= PIDMAP_SCOPE_TASKS)
		goto einval;
	if (c->kind == K_PIDMAP) {
		if (q->info_size || q->info_mask)
			goto einval;
	} else {
		if (q->info_size > PAGE) {
			c->want_err = E2BIG;
			return;
		}
#ifdef ADVERSARY_FUZZ_MUTANT	/* negative control: a wrong oracle must fail */
		if (q->info_size < PIDMAP_INFO_SIZE_VER0 || q->info_size % 16)
#else
		if (q->info_size < PIDMAP_INFO_SIZE_VER0 || q->info_size % 8)
#endif
			goto einval;
		if (kernel_buf(c))
			goto efault;
	}
	e = view_fields_errno(c, q->procfs_fd, q->pidns_fd, q->pidns_id);
	if (e) {
		c->want_err = e;
		return;
	}
	if (q->scope >= PIDMAP_SCOPE_THREADS) {
		e = target_errno(c, 0, &alt);
		if (e) {
			c->want_err = e;
			return;
		}
		c->alt_ok = alt;
		switch (c->tgt) {
		case T_SELF: case T_THREAD: case T_SELF_THREAD: case T_SELF_GROUP:
			c->have_ref = 1;
			if (q->scope == PIDMAP_SCOPE_THREADS) {
				c->ref = ref_tids;
				c->nref = nref_tids;
			} else {
				c->ref = ref_children;
				c->nref = nref_children;
			}
			break;
		case T_CHILD:
			c->have_ref = 1;
			if (q->scope == PIDMAP_SCOPE_THREADS) {
				c->ref = &child_pid;
				c->nref = 1;
			} else {
				c->ref = NULL;
				c->nref = 0;
			}
			break;
		default:
			break;
		}
	}
	return;
einval:
	c->want_err = EINVAL;
	return;
efault:
	c->want_err = EFAULT;
}

static void oracle_fdmap(struct call *c)
{
	const struct fdmap_req *q = &c->fr;
	int e, alt = 0;

	c->have_ref = 0;
	c->want_err = oracle_opening(c, FDMAP_REQ_SIZE_VER0);
	if (c->want_err)
		return;
	if (q->__reserved)
		goto einval;
	e = view_fields_errno(c, q->procfs_fd, q->pidns_fd, q->pidns_id);
	if (e) {
		c->want_err = e;
		return;
	}
	e = target_errno(c, 1, &alt);
	if (e) {
		c->want_err = e;
		return;
	}
	c->alt_ok = alt;
	switch (c->tgt) {
	case T_SELF: case T_THREAD: case T_SELF_THREAD: case T_SELF_GROUP:
		c->have_ref = 1;
		c->ref = ref_fds;
		c->nref = nref_fds;
		break;
	case T_CHILD:
		c->have_ref = 1;
		c->ref = child_fds;
		c->nref = *nchild_fds;
		break;
	case T_ZOMBIE:
		c->have_ref = 1;
		c->ref = NULL;
		c->nref = 0;
		break;
	default:
		break;
	}
	return;
einval:
	c->want_err = EINVAL;
}

static void build_pidmap(struct call *c)
{
	struct pidmap_req *q = &c->pr;
	unsigned int r;

	memset(q, 0, sizeof(*q));
	r = below(100);
	if (r < 90)
		q->scope = below(4);
	else
		q->scope = chance(50) ? 4 + below(10) : (uint32_t)rnd();
	q->filter = below(2);
	if (chance(4))
		q->filter |= (uint32_t)rnd() & ~1U;
	if (chance(20))
		q->__reserved = 1 + below(1000);
	pick_view_fields(c, &q->procfs_fd, &q->pidns_fd, &q->pidns_id);
	c->tgt = T_SELF;
	if (q->scope == PIDMAP_SCOPE_THREADS || q->scope == PIDMAP_SCOPE_CHILDREN) {
		c->tgt = below(T_NR);
		q->pidfd = pick_target_fd(c);
	} else if (chance(4)) {
		c->tgt = below(T_NR);
		q->pidfd = pick_target_fd(c);
		if (!q->pidfd)
			q->pidfd = fd_self;
	} else {
		c->tgt = T_SELF;	/* none: the view's namespace */
	}
	if (c->kind == K_PIDMAP) {
		if (chance(3))
			q->info_size = chance(50) ? PIDMAP_INFO_SIZE_VER0 : (uint32_t)rnd();
		if (chance(3))
			q->info_mask = rnd() | 1;
		c->elem = 4;
	} else {
		r = below(100);
		if (r < 80)
			q->info_size = PIDMAP_INFO_SIZE_VER0 + 8 * below((PAGE - PIDMAP_INFO_SIZE_VER0) / 8 + 1);
		else if (r < 85)
			q->info_size = below(PIDMAP_INFO_SIZE_VER0);
		else if (r < 90)
			q->info_size = PIDMAP_INFO_SIZE_VER0 + 1 + below(PAGE - PIDMAP_INFO_SIZE_VER0);
		else if (r < 95)
			q->info_size = PAGE + 1 + below(PAGE);
		else
			q->info_size = (uint32_t)rnd();
		if (chance(30))
			q->info_size = PIDMAP_INFO_SIZE_VER0;
		q->info_mask = chance(30) ? rnd() : chance(50) ? INFO_KNOWN : rnd() & INFO_KNOWN;
		c->elem = q->info_size >= PIDMAP_INFO_SIZE_VER0 && q->info_size <= PAGE ?
			  q->info_size : PIDMAP_INFO_SIZE_VER0;
	}
	q->last_id = pick_cursor(q->scope == PIDMAP_SCOPE_THREADS ? ref_tids :
				 q->scope == PIDMAP_SCOPE_CHILDREN ? ref_children : NULL,
				 q->scope == PIDMAP_SCOPE_THREADS ? nref_tids :
				 q->scope == PIDMAP_SCOPE_CHILDREN ? nref_children : 0);
}

static void build_fdmap(struct call *c)
{
	struct fdmap_req *q = &c->fr;

	memset(q, 0, sizeof(*q));
	c->tgt = chance(60) ? below(4) : below(T_NR);
	q->pidfd = pick_target_fd(c);
	switch (below(8)) {
	case 0: case 1: case 2: q->first_fd = 0; break;
	case 3: q->first_fd = below(16); break;
	case 4: q->first_fd = nref_fds ? ref_fds[below(nref_fds)] + below(2) : 0; break;
	case 5: q->first_fd = (uint32_t)rnd(); break;
	case 6: q->first_fd = chance(50) ? INT32_MAX : UINT32_MAX; break;
	default: q->first_fd = below(1100); break;
	}
	if (chance(10))
		q->__reserved = 1 + below(1000);
	pick_view_fields(c, &q->procfs_fd, &q->pidns_fd, &q->pidns_id);
	c->elem = 4;
}

static unsigned char fill_block[PAGE];

static int all_fill(const unsigned char *p, size_t n)
{
	while (n) {
		size_t k = n < PAGE ? n : PAGE;

		if (memcmp(p, fill_block, k))
			return 0;
		p += k;
		n -= k;
	}
	return 1;
}

static int all_zero(const void *v, size_t n)
{
	const unsigned char *p = v;

	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static int is_ours(int tid)
{
	for (int i = 0; i < nref_tids; i++)
		if (ref_tids[i] == tid)
			return 1;
	return 0;
}

/* One record's oracle. */
static void check_record(const struct call *c, long r, int i, const unsigned char *rec)
{
	struct pidmap_info in;
	uint64_t asked = c->pr.info_mask, want = (asked & INFO_KNOWN & ~PIDMAP_INFO_SUPPORTED_MASK) | PIDMAP_INFO_ID;
	uint64_t m;

	memcpy(&in, rec, sizeof(in));
	if (asked & PIDMAP_INFO_SUPPORTED_MASK)
		want |= PIDMAP_INFO_SUPPORTED_MASK;
	if (in.mask != want)
		violation(c, r, 0, "record %d tid %d: mask %#llx, want %#llx", i, in.tid,
			  (unsigned long long)in.mask, (unsigned long long)want);
	m = in.mask;
	if (in.supported_mask != ((m & PIDMAP_INFO_SUPPORTED_MASK) ? INFO_KNOWN : 0))
		violation(c, r, 0, "record %d: supported_mask %#llx", i,
			  (unsigned long long)in.supported_mask);
	if (!in.pidfs_id || in.tid <= 0 || in.tgid <= 0)
		violation(c, r, 0, "record %d: pidfs_id %llu tid %d tgid %d", i,
			  (unsigned long long)in.pidfs_id, in.tid, in.tgid);
	if (!(m & PIDMAP_INFO_PPID) && in.ppid)
		violation(c, r, 0, "record %d: ppid %d outside the mask", i, in.ppid);
	if (!(m & PIDMAP_INFO_CREDS) && (in.ruid || in.euid))
		violation(c, r, 0, "record %d: uids outside the mask", i);
	if (!(m & PIDMAP_INFO_SCHED) && (in.nice || in.priority || in.policy))
		violation(c, r, 0, "record %d: sched outside the mask", i);
	if (!(m & PIDMAP_INFO_NUM_THREADS) && in.num_threads)
		violation(c, r, 0, "record %d: num_threads outside the mask", i);
	if (!(m & PIDMAP_INFO_CPUTIME) && (in.utime_ns || in.stime_ns))
		violation(c, r, 0, "record %d: cputime outside the mask", i);
	if (!(m & PIDMAP_INFO_START_TIME) && in.start_time_ns)
		violation(c, r, 0, "record %d: start_time_ns outside the mask", i);
	if (!(m & PIDMAP_INFO_RSS) && in.rss_bytes)
		violation(c, r, 0, "record %d: rss outside the mask", i);
	if ((m & PIDMAP_INFO_RSS) && in.rss_bytes % (uint64_t)sysconf(_SC_PAGESIZE))
		violation(c, r, 0, "record %d: rss_bytes %llu not whole pages", i,
			  (unsigned long long)in.rss_bytes);
	if (!(m & PIDMAP_INFO_FAULTS) && (in.min_flt || in.maj_flt))
		violation(c, r, 0, "record %d: faults outside the mask", i);
	if (!(m & PIDMAP_INFO_CTXSW) && (in.nvcsw || in.nivcsw))
		violation(c, r, 0, "record %d: context switches outside the mask", i);
	if (!(m & PIDMAP_INFO_TASK_FLAGS) && in.task_flags)
		violation(c, r, 0, "record %d: task_flags outside the mask", i);
	if (!(m & PIDMAP_INFO_STATE) && in.state)
		violation(c, r, 0, "record %d: state outside the mask", i);
	if ((m & PIDMAP_INFO_STATE) && (!in.state || !strchr("RSDTtXZPI", in.state)))
		violation(c, r, 0, "record %d: state %#x", i, in.state);
	if (!(m & PIDMAP_INFO_COMM) && !all_zero(in.comm, sizeof(in.comm)))
		violation(c, r, 0, "record %d: comm outside the mask", i);
	if ((m & PIDMAP_INFO_COMM) && !memchr(in.comm, 0, sizeof(in.comm)))
		violation(c, r, 0, "record %d: comm without a NUL", i);
	if (!all_zero(in.__spare, sizeof(in.__spare)))
		violation(c, r, 0, "record %d: __spare", i);
	if (!all_zero(rec + sizeof(in), c->pr.info_size - sizeof(in)))
		violation(c, r, 0, "record %d: bytes %zu..%u not 0", i, sizeof(in),
			  c->pr.info_size);
	if ((m & PIDMAP_INFO_TASK_FLAGS) && (c->pr.filter & PIDMAP_FILTER_NO_KTHREADS) &&
	    (in.task_flags & PIDMAP_TASK_KTHREAD))
		violation(c, r, 0, "record %d: a kthread with NO_KTHREADS", i);
	if (is_ours(in.tid) && c->pr.scope != PIDMAP_SCOPE_CHILDREN) {
		const char *comm = (pid_t)in.tid == self_pid ||
				   c->pr.scope == PIDMAP_SCOPE_PROCS ? "adv_fuzz" : "adv_fuzz-h";

		if ((pid_t)in.tgid != self_pid)
			violation(c, r, 0, "record %d: our tid %d, tgid %d", i, in.tid, in.tgid);
		if ((m & PIDMAP_INFO_PPID) && (pid_t)in.ppid != getppid())
			violation(c, r, 0, "record %d: our ppid %d", i, in.ppid);
		if ((m & PIDMAP_INFO_CREDS) && (in.ruid != getuid() || in.euid != geteuid()))
			violation(c, r, 0, "record %d: our uids %u %u", i, in.ruid, in.euid);
		if ((m & PIDMAP_INFO_NUM_THREADS) && in.num_threads != 1 + HELPERS)
			violation(c, r, 0, "record %d: our num_threads %u", i, in.num_threads);
		if ((m & PIDMAP_INFO_COMM) && strcmp(in.comm, comm))
			violation(c, r, 0, "record %d: our comm '%.64s', want '%s'", i, in.comm, comm);
		if ((m & PIDMAP_INFO_TASK_FLAGS) && (in.task_flags & PIDMAP_TASK_KTHREAD))
			violation(c, r, 0, "record %d: we are a kthread?", i);
		/* The main thread has touched memory, every thread has slept */
		if ((m & PIDMAP_INFO_FAULTS) && !in.min_flt &&
		    ((pid_t)in.tid == self_pid || c->pr.scope == PIDMAP_SCOPE_PROCS))
			violation(c, r, 0, "record %d: our min_flt 0", i);
		if ((m & PIDMAP_INFO_CTXSW) && !(in.nvcsw + in.nivcsw))
			violation(c, r, 0, "record %d: our context switches 0", i);
		if ((m & PIDMAP_INFO_START_TIME) && !in.start_time_ns)
			violation(c, r, 0, "record %d: our start_time_ns 0", i);
	}
}

static int id_at(const struct call *c, long i)
{
	if (c->kind == K_INFO) {
		int32_t tid;

		memcpy(&tid, c->bufp + i * c->elem + offsetof(struct pidmap_info, tid), 4);
		return tid;
	}
	{
		int32_t v;

		memcpy(&v, c->bufp + i * 4, 4);
		return v;
	}
}

static void count_errno(const struct call *c, int e)
{
	for (int i = 0; i < 8; i++)
		if (errnos[i] == e)
			st->by_errno[c->kind][i]++;
}

static void check(struct call *c, long r, int e)
{
	uint64_t cursor = c->kind == K_FDMAP ? c->fr.first_fd : c->pr.last_id;
	int fdm = c->kind == K_FDMAP;
	long explen = -1;	/* the exact count, when known */
	int exp_fault = 0;

	if (r < 0)
		count_errno(c, e);
	if (c->want_err) {
		if (r >= 0 || e != c->want_err)
			violation(c, r, e, "want errno %d (%s)", c->want_err, strerror(c->want_err));
		goto bytes;
	}
	/* a success is due, except EFAULT from the buffer */
	if (c->have_ref) {
		long n = 0;

		for (int i = 0; i < c->nref; i++)
			if (fdm ? (uint64_t)c->ref[i] >= cursor : (uint64_t)c->ref[i] > cursor)
				n++;
		explen = (size_t)n < c->nr ? n : (long)c->nr;
		if (c->buf == B_NULL || c->buf == B_RO)
			exp_fault = explen > 0;
		else if (c->buf == B_GUARD)
			exp_fault = (size_t)explen > c->room;
	}
	if (r < 0) {
		if (e == EFAULT && (c->buf == B_NULL || c->buf == B_RO || c->buf == B_GUARD) &&
		    (explen < 0 || exp_fault))
			goto bytes;
		if (e == ESRCH && c->alt_ok)
			goto bytes;
		violation(c, r, e, "want a success%s", explen >= 0 && exp_fault ? " (or EFAULT)" : "");
		goto bytes;
	}
	st->ok[c->kind]++;
	st->entries[c->kind] += r;
	if ((size_t)r > c->nr) {
		violation(c, r, e, "r > nr");
		goto bytes;
	}
	if (exp_fault) {
		violation(c, r, e, "want EFAULT: %ld entries due", explen);
		goto bytes;
	}
	if (c->buf == B_NULL || c->buf == B_RO) {
		if (r)
			violation(c, r, e, "entries written to a %s buffer", buf_names[c->buf]);
		goto bytes;
	}
	if (c->buf == B_GUARD && (size_t)r > c->room) {
		violation(c, r, e, "r > the %zu entries before the guard", c->room);
		goto bytes;
	}
	if (c->alt_ok && r) {
		if (fdm) {
			violation(c, r, e, "a zombie has fds");
			goto bytes;
		}
	}
	for (long i = 0; i < r; i++) {
		int v = id_at(c, i);

		if (fdm ? (v < 0 || (uint64_t)v < cursor) : (v <= 0 || (uint64_t)v <= cursor)) {
			violation(c, r, e, "entry %ld = %d not above the cursor %llu", i, v,
				  (unsigned long long)cursor);
			goto bytes;
		}
		if (i && v <= id_at(c, i - 1)) {
			violation(c, r, e, "entry %ld = %d after %d: not ascending", i, v,
				  id_at(c, i - 1));
			goto bytes;
		}
		if (c->kind == K_INFO)
			check_record(c, r, i, c->bufp + i * c->elem);
		if (!fdm && (c->pr.filter & PIDMAP_FILTER_NO_KTHREADS) && v == 2 &&
		    c->pr.scope <= PIDMAP_SCOPE_TASKS)
			violation(c, r, e, "kthreadd listed with NO_KTHREADS");
	}
	if (explen >= 0) {
		int k = 0;

		if (r != explen)
			violation(c, r, e, "want exactly %ld entries", explen);
		for (int i = 0; i < c->nref && k < r; i++) {
			if (fdm ? (uint64_t)c->ref[i] < cursor : (uint64_t)c->ref[i] <= cursor)
				continue;
			if (id_at(c, k) != c->ref[i]) {
				violation(c, r, e, "entry %d = %d, want %d", k, id_at(c, k), c->ref[i]);
				break;
			}
			k++;
		}
		st->exact[c->kind]++;
	} else if (!fdm && (size_t)r < c->nr && c->pr.scope <= PIDMAP_SCOPE_TASKS) {
		/* an ended listing: ours must be there */
		for (int i = 0; i < nref_tids; i++) {
			int want = ref_tids[i], found = 0;

			if (c->pr.scope == PIDMAP_SCOPE_PROCS && want != self_pid)
				continue;
			if ((uint64_t)want <= cursor)
				continue;
			for (long j = 0; j < r && !found; j++)
				found = id_at(c, j) == want;
			if (!found)
				violation(c, r, e, "ended without our id %d", want);
		}
		if (!as_nobody && cursor < 2 && !(c->pr.filter & PIDMAP_FILTER_NO_KTHREADS)) {
			int found = 0;

			for (long j = 0; j < r && !found; j++)
				found = id_at(c, j) == 2;
			if (!found)
				violation(c, r, e, "root's ended listing without kthreadd (2)");
		}
	}
bytes:
	/* nothing past r entries; nothing at all on an errno but EFAULT */
	{
		size_t from = r > 0 ? (size_t)r * c->elem : 0;
		int err_nowrite = r < 0 && (e != EFAULT || c->want_err == EFAULT);

		if (c->buf == B_EXACT) {
			size_t bytes = c->nr * c->elem;

			if (r < 0 && !err_nowrite)
				from = bytes;	/* EFAULT: cannot happen here, but */
			if (!all_fill(c->bufp + from, bytes - from + CANARY))
				violation(c, r, e, "bytes written past %zu of %zu (+canary)", from, bytes);
		} else if (c->buf == B_BIG) {
			size_t end = from + BIG_WINDOW;

			if (r < 0 && !err_nowrite)
				from = 0, end = 0;
			if (end > BIG_BYTES)
				end = BIG_BYTES;
			if (end > from && !all_fill(big_area + from, end - from))
				violation(c, r, e, "bytes written past %zu in the big area", from);
			/* restore what was written */
			memset(big_area, FILL, r > 0 ? (size_t)r * c->elem :
			       (r < 0 && !err_nowrite) ? BIG_WINDOW : 0);
		} else if (c->buf == B_GUARD) {
			size_t bytes = guard_area + 2 * 1024 * 1024 - c->bufp;

			if (r >= 0 || err_nowrite)
				if (from < bytes && !all_fill(c->bufp + from, bytes - from))
					violation(c, r, e, "bytes written past %zu before the guard", from);
		}
	}
}

static void one_call(enum call_kind kind)
{
	struct call c;
	long r;
	int e;

	memset(&c, 0, sizeof(c));
	c.kind = kind;
	c.flags = chance(96) ? 0 : (uint32_t)rnd() | 1U << below(32);
	c.nr = pick_nr();
	c.buf = below(100) < 50 ? B_EXACT : below(B_NR);
	c.req = pick_req_class();
	if (kind == K_FDMAP)
		build_fdmap(&c);
	else
		build_pidmap(&c);
	pick_buffer(&c);
	if (kind == K_FDMAP) {
		place_request(&c, &c.fr, FDMAP_REQ_SIZE_VER0);
		oracle_fdmap(&c);
	} else {
		place_request(&c, &c.pr, PIDMAP_REQ_SIZE_VER0);
		oracle_pidmap(&c);
	}
	st->calls[kind]++;
	st->by_buf[c.buf]++;
	st->by_req[c.req]++;
	if (kind == K_FDMAP || c.pr.pidfd)
		st->by_tgt[c.tgt]++;
	st->by_view[c.view]++;
	errno = 0;
	r = syscall(kind == K_PIDMAP ? NR_PIDMAP : kind == K_INFO ? NR_PIDMAP_INFO : NR_FDMAP,
		    c.reqp, c.bufp, c.nr, c.flags);
	e = errno;
	if (r < 0 && e == ENOSYS) {
		violation(&c, r, e, "ENOSYS: the syscall is missing");
		return;
	}
	check(&c, r, e);
}

static unsigned long env_count(const char *name, unsigned long dflt, unsigned long floor)
{
	const char *s = getenv(name);
	unsigned long n = s ? strtoul(s, NULL, 0) : dflt;

	if (n < floor) {
		printf("adversary_fuzz: %s=%lu below the floor, using %lu\n", name, n, floor);
		n = floor;
	}
	return n;
}

static void phase(const char *name, int nobody, unsigned long nlist, unsigned long ninfo)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		die("fork");
	if (!pid) {
		as_nobody = nobody;
		if (nobody) {
			if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
			    setresuid(65534, 65534, 65534))
				die("drop to 65534");
			prctl(PR_SET_DUMPABLE, 1);
		}
		setup();
		for (unsigned long nl = 0, ni = 0; nl < nlist || ni < ninfo;) {
			if ((nl + ni) % 10000 == 0 && getenv("ADVERSARY_FUZZ_PROGRESS"))
				fprintf(stderr, "%s: %lu\n", name, nl + ni);
			if (ni < ninfo && (nl >= nlist || below(nlist + ninfo) < ninfo)) {
				one_call(K_INFO);
				ni++;
			} else {
				one_call(below(2) ? K_PIDMAP : K_FDMAP);
				nl++;
			}
		}
		/* the references must still hold: nothing moved under us */
		if (fd_table(ref_fds + 0) != nref_fds)
			violation(&(struct call){ 0 }, 0, 0, "our fd table changed during the phase");
		kill(child_pid, SIGKILL);
		exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("VIOLATION phase %s: the child ended with status %#x\n", name, status);
		st->failures++;
	}
}

/*
 * PROC2 (hidepid=invisible) and PROC3 (hidepid=noaccess), in a mount
 * namespace of our own so that nothing outlives the test.
 */
static void mount_views(void)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		die("private mount namespace");
	mkdir(VIEW_DIR, 0755);
	mkdir(PROC2, 0755);
	mkdir(PROC3, 0755);
	if (mount("proc", PROC2, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") ||
	    mount("proc", PROC3, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=noaccess"))
		die("mount the hidepid= views");
}

int main(void)
{
	const char *seed_env = getenv("ADVERSARY_FUZZ_SEED");
	unsigned long nlist = env_count("ADVERSARY_FUZZ_CALLS", 100000, 50000);
	unsigned long ninfo = env_count("ADVERSARY_FUZZ_INFO_CALLS", 20000, 10000);
	unsigned long total = 0;
	uint64_t seed;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(fill_block, FILL, sizeof(fill_block));
	if (getuid() != 0) {
		printf("FUZZ-RESULT FAIL setup: run me as root (phase 2 drops to 65534)\n");
		return 2;
	}
	seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (!seed)
		seed = 1;
	rng = seed;
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		die("mmap stats");
	mount_views();
	printf("adversary_fuzz: seed=%#llx listing calls/phase=%lu record calls/phase=%lu\n",
	       (unsigned long long)seed, nlist, ninfo);

	for (int ph = 0; ph < 2; ph++) {
		struct stats before = *st;

		rng = seed + ph * 0x9e3779b97f4a7c15ULL;
		phase(ph ? "65534" : "root", ph, nlist, ninfo);
		for (int k = 0; k < K_NR; k++) {
			printf("adversary_fuzz %s %s: calls=%lu ok=%lu entries=%lu exact=%lu"
			       " EINVAL=%lu E2BIG=%lu EFAULT=%lu EBADF=%lu ESRCH=%lu EPERM=%lu EACCES=%lu EOVERFLOW=%lu\n",
			       ph ? "65534" : "root", kind_names[k],
			       st->calls[k] - before.calls[k], st->ok[k] - before.ok[k],
			       st->entries[k] - before.entries[k], st->exact[k] - before.exact[k],
			       st->by_errno[k][0] - before.by_errno[k][0],
			       st->by_errno[k][1] - before.by_errno[k][1],
			       st->by_errno[k][2] - before.by_errno[k][2],
			       st->by_errno[k][3] - before.by_errno[k][3],
			       st->by_errno[k][4] - before.by_errno[k][4],
			       st->by_errno[k][5] - before.by_errno[k][5],
			       st->by_errno[k][6] - before.by_errno[k][6],
			       st->by_errno[k][7] - before.by_errno[k][7]);
		}
	}
	for (int k = 0; k < K_NR; k++)
		total += st->calls[k];
	printf("adversary_fuzz: buffers");
	for (int i = 0; i < B_NR; i++)
		printf(" %s=%lu", buf_names[i], st->by_buf[i]);
	printf("\nadversary_fuzz: requests");
	for (int i = 0; i < R_NR; i++)
		printf(" %s=%lu", req_names[i], st->by_req[i]);
	printf("\nadversary_fuzz: targets");
	for (int i = 0; i < T_NR; i++)
		printf(" %s=%lu", tgt_names[i], st->by_tgt[i]);
	printf("\nadversary_fuzz: views");
	for (int i = 0; i < V_NR; i++)
		printf(" %s=%lu", view_names[i], st->by_view[i]);
	printf("\n");
	if (st->failures || st->calls[K_INFO] < 2 * ninfo ||
	    st->calls[K_PIDMAP] + st->calls[K_FDMAP] < 2 * nlist) {
		printf("FUZZ-RESULT FAIL failures=%lu calls=%lu seed=%#llx\n", st->failures, total,
		       (unsigned long long)seed);
		return 1;
	}
	printf("FUZZ-RESULT ok calls=%lu (pidmap=%lu pidmap_info=%lu fdmap=%lu) seed=%#llx\n",
	       total, st->calls[K_PIDMAP], st->calls[K_INFO], st->calls[K_FDMAP],
	       (unsigned long long)seed);
	return 0;
}

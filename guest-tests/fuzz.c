// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * fuzz: randomized hostile arguments for pidmap(2) and fdmap(2).
 *
 * PIDMAP_FUZZ_CALLS calls (default 200000, never fewer than 100000) with
 * random requests (struct size, tail bytes, start, target as a pid or a
 * pidfd, procfs fd, __reserved, the request pointer itself), flags, counts
 * and buffers, in two phases: as root and as uid 65534 (so the EPERM and
 * hidden-target paths are hit too).  Most calls are cheap: error paths and
 * small counts, so the debug kernel under TCG gets through them in a few
 * seconds.
 *
 * Oracle, per call: the result is an errno whose documented condition
 * (docs/ABI.md, "Errors") holds (EINVAL, E2BIG, EFAULT, EBADF, ESRCH,
 * EPERM), or a count r <= count whose
 * entries are strictly ascending and >= start.  For calls whose answer is
 * known exactly (our own fd table, our own threads, our own children) the
 * entries must equal the reference.  Nothing may be written beyond `count`
 * entries: a canary region follows them, and straddling buffers end at a
 * PROT_NONE guard page, where r must not exceed the writable slots.
 *
 * PIDMAP_FUZZ_SEED reproduces a run; a failing call is printed in full.
 */
#include "pidmap_test.h"	/* first: it defines _GNU_SOURCE */

#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define PAGE 4096
#define CANARY 0xa5c3e1f7u
#define CANARY_SLOTS 64
#define VALID_SLOTS (4 * PAGE / 4)

enum buf_class {
	B_VALID, B_MISALIGNED, B_NULL, B_UNMAPPED, B_RO, B_KERNEL, B_NONCANON,
	B_STRADDLE, B_HUGE, B_NR
};
static const char *const buf_names[B_NR] = {
	"valid", "misaligned", "null", "unmapped", "readonly", "kernel",
	"noncanonical", "straddle", "huge_count",
};

enum pid_class {
	P_ZERO, P_SELF, P_THREAD, P_CHILD, P_ZOMBIE, P_REAPED, P_INIT, P_KTHREADD,
	P_ROOTPROC, P_RANDOM, P_NEGATIVE, P_TOOBIG, P_NR
};
static const char *const pid_names[P_NR] = {
	"zero", "self", "thread", "child", "zombie", "reaped", "init", "kthreadd",
	"root_proc", "random", "negative", "too_big",
};

enum { C_ZERO, C_ONE, C_SMALL, C_MEDIUM, C_HUGE, C_NR };
static const char *const count_names[C_NR] = { "zero", "one", "small", "medium", "huge" };
enum { S_ZERO, S_SMALL, S_RANDOM, S_INTMAX, S_NEGATIVE, S_NR };
static const char *const start_names[S_NR] = { "zero", "small", "random", "int_max", "negative" };
enum req_class {
	R_VALID, R_SHORT, R_LONG_ZERO, R_LONG_NONZERO, R_HUGE, R_NULL, R_UNMAPPED,
	R_FIELD, R_NR
};
static const char *const req_names[R_NR] = {
	"valid", "short", "long_zero_tail", "long_nonzero_tail", "over_a_page", "null",
	"unmapped", "bad_field",
};
/* How req->target / req->procfs_fd name a file, when they are fds. */
enum fd_class { D_GOOD, D_WRONG_KIND, D_CLOSED, D_NEGATIVE, D_NR };
enum { F_VALID, F_INVALID, F_NR };
static const char *const flag_names[F_NR] = { "valid", "invalid" };

/* Totals of both phases: the phases run in child processes. */
struct stats {
	unsigned long calls, faults;
	unsigned long by_buf[B_NR], by_pid[P_NR], by_count[C_NR], by_start[S_NR];
	unsigned long by_flags[2][F_NR];	/* [is_fdmap][valid?] */
	unsigned long by_req[R_NR], pidfd_targets, procfs_views;
	unsigned long ok, by_errno[6];		/* EINVAL EFAULT ESRCH E2BIG EPERM EBADF */
	unsigned long violations, canary, overclaim, order, mismatch;
	unsigned long partial_efault;		/* EFAULT although k slots were writable */
	unsigned long tail_writes;		/* slots in [r, count) changed */
};
static struct stats *st;

static uint64_t rng;

static uint64_t rnd(void)
{
	/* xorshift64*: fast, and reproducible from the printed seed. */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

static unsigned int below(unsigned int n)
{
	return (unsigned int)(rnd() % n);
}

/* The environment a phase fuzzes against. */
static struct {
	unsigned char *valid;		/* VALID_SLOTS slots + guard */
	unsigned char *ro;		/* one read-only page */
	unsigned char *hole;		/* an unmapped page */
	unsigned char *edge;		/* end of a RW region; a guard page follows */
	pid_t self, thread, child, zombie, reaped, rootproc, kthreadd;
	pid_t pid_max;
	int pidfd[P_NR];		/* pidfds of the targets that have one, else -1 */
	int proc_fd;			/* O_PATH fd of /proc (hidepid=off) */
	int null_fd;			/* /dev/null: an open fd that is neither */
	int closed_fd;			/* a number that is no open fd */
	unsigned char *reqbuf;		/* 2 pages for the request struct */
	struct pt_ids fds, tids, kids_live, kids_all;
	int as_nobody;
} env;

static int release_pipe[2];

static void *blocked_thread(void *arg)
{
	char c;

	/* Parked until the phase ends; its tid is a non-leader target. */
	__atomic_store_n((pid_t *)arg, pt_gettid(), __ATOMIC_RELEASE);
	while (read(release_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static unsigned char *map(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		pt_die("mmap");
	return p;
}

static pid_t kthreadd_pid;

static void setup_env(int as_nobody)
{
	unsigned char *p;
	pthread_t t;
	int status, fd;
	pid_t tid = 0;
	char buf[32];
	int reaped_pidfd;

	env.as_nobody = as_nobody;
	env.self = getpid();
	env.rootproc = getppid();	/* the root-owned parent */
	/* Found while still root: the default view hides it from uid 65534. */
	env.kthreadd = kthreadd_pid;

	/* RW pages followed by a PROT_NONE guard: writes past the end fault. */
	p = map(5 * PAGE, PROT_READ | PROT_WRITE);
	if (mprotect(p + 4 * PAGE, PAGE, PROT_NONE))
		pt_die("mprotect");
	env.valid = p;
	p = map(3 * PAGE, PROT_READ | PROT_WRITE);
	if (mprotect(p + 2 * PAGE, PAGE, PROT_NONE))
		pt_die("mprotect");
	env.edge = p + 2 * PAGE;
	env.ro = map(PAGE, PROT_READ | PROT_WRITE);
	memset(env.ro, 0x5a, PAGE);
	if (mprotect(env.ro, PAGE, PROT_READ))
		pt_die("mprotect ro");
	/*
	 * An unmapped page must stay unmapped: a hole punched with munmap()
	 * is refilled by the next mmap (a thread stack), so use the gap
	 * below a static binary's text at 0x400000, and check it is free.
	 */
	env.hole = (unsigned char *)(uintptr_t)0x200000;
	{
		unsigned char vec;

		if (mincore(env.hole, PAGE, &vec) == 0 || errno != ENOMEM)
			pt_die("0x200000 is mapped: no unmapped page to use");
	}

	fd = open("/proc/sys/kernel/pid_max", O_RDONLY);
	env.pid_max = 32768;
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		if (n > 0) {
			buf[n] = 0;
			env.pid_max = atoi(buf);
		}
		close(fd);
	}

	if (pipe(release_pipe))
		pt_die("pipe");
	if (pthread_create(&t, NULL, blocked_thread, &tid))
		pt_die("pthread_create");
	while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	env.thread = tid;

	env.child = fork();
	if (env.child < 0)
		pt_die("fork");
	if (env.child == 0) {
		char c;

		close(release_pipe[1]);
		while (read(release_pipe[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	env.reaped = fork();
	if (env.reaped < 0)
		pt_die("fork");
	if (env.reaped == 0)
		_exit(0);
	/* Its pidfd outlives it: a pidfd target that has exited. */
	reaped_pidfd = (int)syscall(SYS_pidfd_open, env.reaped, 0);
	if (reaped_pidfd < 0)
		pt_die("pidfd_open reaped");
	if (waitpid(env.reaped, &status, 0) != env.reaped)
		pt_die("waitpid");
	env.zombie = fork();
	if (env.zombie < 0)
		pt_die("fork");
	if (env.zombie == 0)
		_exit(0);
	/* Wait until it is a zombie, but leave it unreaped. */
	{
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)env.zombie, &si, WEXITED | WNOWAIT))
			pt_die("waitid");
	}

	/* pidfds, opened before the reaped one goes (it is held open). */
	{
		int i;

		for (i = 0; i < P_NR; i++)
			env.pidfd[i] = -1;
		env.pidfd[P_REAPED] = reaped_pidfd;
		env.pidfd[P_SELF] = (int)syscall(SYS_pidfd_open, env.self, 0);
		env.pidfd[P_CHILD] = (int)syscall(SYS_pidfd_open, env.child, 0);
		env.pidfd[P_ZOMBIE] = (int)syscall(SYS_pidfd_open, env.zombie, 0);
		env.pidfd[P_INIT] = (int)syscall(SYS_pidfd_open, 1, 0);
		env.pidfd[P_ROOTPROC] = (int)syscall(SYS_pidfd_open, env.rootproc, 0);
		/* PIDFD_THREAD (O_EXCL): a pidfd of a non-leader thread. */
		env.pidfd[P_THREAD] = (int)syscall(SYS_pidfd_open, env.thread, O_EXCL);
		for (i = 0; i < P_NR; i++)
			if ((i == P_SELF || i == P_CHILD || i == P_ZOMBIE || i == P_INIT ||
			     i == P_ROOTPROC || i == P_THREAD) && env.pidfd[i] < 0)
				pt_die("pidfd_open for %s", pid_names[i]);
	}
	env.proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	env.null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (env.proc_fd < 0 || env.null_fd < 0)
		pt_die("open /proc or /dev/null");
	env.closed_fd = 999;
	if (fcntl(env.closed_fd, F_GETFD) != -1)
		pt_die("fd 999 is open");
	env.reqbuf = map(3 * PAGE, PROT_READ | PROT_WRITE);
	if (mprotect(env.reqbuf + 2 * PAGE, PAGE, PROT_NONE))
		pt_die("mprotect");

	/*
	 * Exact references for the targets nobody else changes.  opendir()
	 * itself shows up in /proc/self/fd: keep only fds still open after.
	 */
	{
		struct pt_ids fds = { 0 };
		size_t i;

		if (pt_readdir_ids("/proc/self/fd", &fds))
			pt_die("readdir /proc/self/fd");
		pt_ids_clear(&env.fds);
		for (i = 0; i < fds.n; i++) {
			char path[64], tgt[64];
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/self/fd/%d", fds.v[i]);
			n = readlink(path, tgt, sizeof(tgt) - 1);
			if (n >= 0)
				pt_ids_push(&env.fds, fds.v[i]);
		}
		pt_ids_free(&fds);
	}
	pt_ids_clear(&env.tids);
	pt_ids_clear(&env.kids_live);
	pt_ids_clear(&env.kids_all);
	if (pt_readdir_ids("/proc/self/task", &env.tids))
		pt_die("readdir /proc/self/task");
	pt_ids_push(&env.kids_live, env.child);
	pt_ids_push(&env.kids_all, env.child);
	pt_ids_push(&env.kids_all, env.zombie);
	pt_ids_sort(&env.kids_live);
	pt_ids_sort(&env.kids_all);
}

/* One random call and its inputs. */
struct call {
	int is_fdmap;
	pid_t pid;		/* the pid the target names (req->target unless a pidfd) */
	int target;		/* req->target as sent */
	int procfs_fd;		/* req->procfs_fd as sent */
	int pidfd_target;	/* the TARGET_PIDFD flag is set */
	enum fd_class tfd, vfd;	/* target fd / procfs fd class, when they are fds */
	enum req_class rc;
	unsigned int size;	/* req->size as sent */
	unsigned int reserved;	/* fdmap: req->__reserved as sent */
	unsigned int flags, count;
	int start;
	void *req;
	enum buf_class bc;
	enum pid_class pc;
	int cc, sc, fc;
	unsigned char *buf;	/* what the kernel gets */
	long slots;		/* writable slots at buf (-1: none at all) */
	long canary;		/* canary slots right after `count` (VALID classes) */
};

static void pick_pid(struct call *c)
{
	c->pc = (enum pid_class)below(P_NR);
	switch (c->pc) {
	case P_ZERO: c->pid = 0; break;
	case P_SELF: c->pid = env.self; break;
	case P_THREAD: c->pid = env.thread; break;
	case P_CHILD: c->pid = env.child; break;
	case P_ZOMBIE: c->pid = env.zombie; break;
	case P_REAPED: c->pid = env.reaped; break;
	case P_INIT: c->pid = 1; break;
	case P_KTHREADD: c->pid = env.kthreadd; break;
	case P_ROOTPROC: c->pid = env.rootproc; break;
	case P_RANDOM: c->pid = (pid_t)below((unsigned int)env.pid_max); break;
	case P_NEGATIVE:
		c->pid = below(3) == 0 ? INT_MIN : below(2) ? -1 : -(pid_t)(1 + below(1u << 30));
		break;
	default:
		c->pid = below(2) ? INT_MAX : env.pid_max + (pid_t)below(1000);
		break;
	}
}

#define PIDMAP_KNOWN_FLAGS \
	(PIDMAP_MODE_MASK | PIDMAP_IGNORE_KTHREADS | PIDMAP_TARGET_PIDFD | PIDMAP_PROCFS)

static void pick_flags(struct call *c)
{
	static const unsigned int modes[] = {
		PIDMAP_PROC, PIDMAP_ALL_TASKS, PIDMAP_TASKS, PIDMAP_CHILDREN,
	};
	unsigned int f;

	if (c->is_fdmap) {
		/* fdmap knows one flag: any other bit is EINVAL. */
		if (below(5))
			c->flags = below(3) ? 0 : FDMAP_TARGET_PIDFD;
		else
			c->flags = below(2) ? 1u << below(32) : (unsigned int)rnd();
		c->fc = c->flags & ~FDMAP_TARGET_PIDFD ? F_INVALID : F_VALID;
		c->pidfd_target = !!(c->flags & FDMAP_TARGET_PIDFD);
		return;
	}
	if (below(3)) {
		f = modes[below(4)];
		if (below(2))
			f |= PIDMAP_IGNORE_KTHREADS;
		if (!below(3))
			f |= PIDMAP_PROCFS;
		/* A pidfd target mostly where it is allowed. */
		if ((f & (PIDMAP_TASKS | PIDMAP_CHILDREN)) ? below(3) == 0 : below(20) == 0)
			f |= PIDMAP_TARGET_PIDFD;
		/* PROC/ALL_TASKS want target 0: mostly give them that. */
		if ((f & (PIDMAP_PROC | PIDMAP_ALL_TASKS)) && below(4))
			c->pid = 0, c->pc = P_ZERO;
	} else {
		switch (below(5)) {
		case 0: f = below(2) ? 0 : PIDMAP_IGNORE_KTHREADS | PIDMAP_PROCFS; break;
		case 1: f = modes[below(4)] | modes[below(4)] | modes[below(4)]; break;
		case 2: f = modes[below(4)] | (1u << (4 + below(28))); break;
		case 3: f = 0xffffffffu; break;
		default: f = (unsigned int)rnd(); break;
		}
	}
	c->flags = f;
	c->fc = (f & ~PIDMAP_KNOWN_FLAGS) || __builtin_popcount(f & PIDMAP_MODE_MASK) != 1
		? F_INVALID : F_VALID;
	c->pidfd_target = !!(f & PIDMAP_TARGET_PIDFD);
}

/* An fd for a field: the good one mostly, else the wrong kind, closed or -1. */
static enum fd_class pick_fd_class(void)
{
	return below(4) ? D_GOOD : (enum fd_class)(1 + below(D_NR - 1));
}

static int fd_of_class(enum fd_class k, int good)
{
	switch (k) {
	case D_GOOD: return good;
	case D_WRONG_KIND: return env.null_fd;
	case D_CLOSED: return env.closed_fd;
	default: return -1;
	}
}

/* req->target and req->procfs_fd from the pid class and the flags. */
static void pick_target(struct call *c)
{
	c->target = c->pid;
	if (c->pidfd_target) {
		c->tfd = pick_fd_class();
		if (c->tfd == D_GOOD) {
			/* A target that has a pidfd; pc/pid say what it names. */
			while (env.pidfd[c->pc] < 0)
				c->pc = (enum pid_class)below(P_NR);
			c->pid = c->pc == P_REAPED ? env.reaped : c->pc == P_ZOMBIE ? env.zombie :
				 c->pc == P_CHILD ? env.child : c->pc == P_INIT ? 1 :
				 c->pc == P_ROOTPROC ? env.rootproc : c->pc == P_THREAD ? env.thread :
				 env.self;
		}
		c->target = fd_of_class(c->tfd, env.pidfd[c->pc]);
		st->pidfd_targets++;
	}
	c->procfs_fd = 0;
	if (!c->is_fdmap && (c->flags & PIDMAP_PROCFS)) {
		c->vfd = pick_fd_class();
		c->procfs_fd = fd_of_class(c->vfd, env.proc_fd);
		st->procfs_views += c->vfd == D_GOOD;
	}
}

/* The request struct: its size, its tail, the fields that must be 0, its address. */
static void pick_request(struct call *c)
{
	/* The struct this kernel knows: a non-zero byte beyond it is E2BIG. */
	unsigned int known = c->is_fdmap ? FDMAP_REQ_SIZE_VER0 : PIDMAP_REQ_SIZE_VER1;
	unsigned char *r;
	unsigned int room;

	c->rc = below(4) ? R_VALID : (enum req_class)(1 + below(R_NR - 1));
	c->size = 16;
	c->reserved = 0;
	switch (c->rc) {
	case R_SHORT: c->size = below(16); break;
	case R_LONG_ZERO:
	case R_LONG_NONZERO: c->size = known + 1 + below(PAGE - known); break;
	case R_HUGE: c->size = below(2) ? UINT_MAX : PAGE + 1 + below(1u << 20); break;
	case R_FIELD:
		if (c->is_fdmap) {
			c->reserved = 1u << below(32);
		} else if (!(c->flags & PIDMAP_PROCFS)) {
			/* procfs_fd without PIDMAP_PROCFS: EINVAL, never ignored. */
			c->procfs_fd = below(2) ? env.proc_fd : 1 + (int)below(1000);
		} else {
			c->rc = R_VALID;
		}
		break;
	default: break;
	}
	if (c->rc == R_NULL) {
		c->req = NULL;
		return;
	}
	if (c->rc == R_UNMAPPED) {
		/* The hole, or 8 bytes before a guard page: size 16 is read, the rest faults. */
		if (below(2)) {
			c->req = env.hole;
		} else {
			uint32_t sz = 16;

			c->req = env.reqbuf + 2 * PAGE - 8;
			memcpy(c->req, &sz, sizeof(sz));
		}
		return;
	}
	/* Placed so the bytes the kernel may read end at or before the guard. */
	room = c->size > PAGE ? 16 : c->size < 16 ? 16 : c->size;
	r = env.reqbuf + 2 * PAGE - room - 4 * below((2 * PAGE - room) / 4 + 1);
	memset(r, 0, room);
	if (c->is_fdmap) {
		struct fdmap_req q = {
			.size = c->size, .start = c->start, .target = c->target,
			.__reserved = c->reserved,
		};

		memcpy(r, &q, 16);
	} else {
		struct pidmap_req q = {
			.size = c->size, .start = c->start, .target = c->target,
			.procfs_fd = c->procfs_fd,
		};

		memcpy(r, &q, 16);
	}
	if (c->rc == R_LONG_NONZERO)
		r[known + below(c->size - known)] = (unsigned char)(1 + below(255));
	c->req = r;
}

static void pick_start_count(struct call *c)
{
	c->sc = (int)below(S_NR + 3);	/* zero and small most often */
	if (c->sc >= S_NR)
		c->sc = c->sc == S_NR ? S_ZERO : S_SMALL;
	switch (c->sc) {
	case S_ZERO: c->start = 0; break;
	case S_SMALL: c->start = (int)below(200); break;
	case S_RANDOM: c->start = (int)below(INT_MAX); break;
	case S_INTMAX: c->start = INT_MAX; break;
	default:
		c->start = below(2) ? -1 : below(2) ? INT_MIN : -(int)below(1u << 30) - 1;
		break;
	}

	c->cc = (int)below(C_NR + 2);	/* small most often */
	if (c->cc >= C_NR)
		c->cc = C_SMALL;
	switch (c->cc) {
	case C_ZERO: c->count = 0; break;
	case C_ONE: c->count = 1; break;
	case C_SMALL: c->count = 2 + below(15); break;
	case C_MEDIUM: c->count = 17 + below(VALID_SLOTS - CANARY_SLOTS - 17); break;
	default: {
		static const unsigned int huge[] = {
			UINT_MAX, 0x80000000u, 0x7fffffffu, 0x40000000u, 1u << 20,
		};
		c->count = below(2) ? huge[below(5)] : (1u << 20) + (unsigned int)rnd();
		break;
	}
	}
}

static void pick_buffer(struct call *c)
{
	long k;

	/* Bad buffers a third of the time: faults injected. */
	c->bc = below(3) ? (below(4) ? B_VALID : B_MISALIGNED) : (enum buf_class)(2 + below(B_NR - 2));
	if (c->cc == C_HUGE && (c->bc == B_VALID || c->bc == B_MISALIGNED))
		c->bc = B_HUGE;
	c->slots = -1;
	c->canary = 0;
	switch (c->bc) {
	case B_VALID:
	case B_MISALIGNED: {
		/* Room for count + canary slots, placed at a random offset. */
		long room = VALID_SLOTS - (long)c->count - CANARY_SLOTS;
		long off;

		/* A misaligned buffer needs one more slot of room. */
		if (c->bc == B_MISALIGNED)
			room--;
		if (room < 0)
			pt_die("internal: count %u too big for the valid buffer", c->count);
		off = (long)below((unsigned int)room + 1);
		c->buf = env.valid + off * 4;
		if (c->bc == B_MISALIGNED)
			c->buf += 1 + below(3);
		c->slots = c->count;
		c->canary = CANARY_SLOTS;
		break;
	}
	case B_NULL: c->buf = NULL; break;
	case B_UNMAPPED: c->buf = env.hole + 4 * below(PAGE / 4); break;
	case B_RO: c->buf = env.ro + 4 * below(PAGE / 4); break;
	case B_KERNEL: c->buf = (unsigned char *)(uintptr_t)0xffffffff81000000ull; break;
	case B_NONCANON: c->buf = (unsigned char *)(uintptr_t)0x8000000000000000ull; break;
	case B_STRADDLE:
	case B_HUGE:
		/* The last k slots before the guard page are writable. */
		k = c->bc == B_STRADDLE ? (long)below(20) : (long)below(2 * PAGE / 4);
		c->buf = env.edge - k * 4;
		c->slots = k;
		break;
	default:
		break;
	}
}

static void violation(const struct call *c, long r, int e, const char *why)
{
	st->violations++;
	if (st->violations <= 20)
		pt_err("%s(req=%p [%s] {size=%u start=%d target=%d [%s%s %d] %s=%d}, buf=%p [%s], "
		       "count=%u, flags=%#x) = %ld (%s): %s",
		       c->is_fdmap ? "fdmap" : "pidmap", c->req, req_names[c->rc], c->size,
		       c->start, c->target, c->pidfd_target ? "pidfd of " : "", pid_names[c->pc],
		       c->pid, c->is_fdmap ? "__reserved" : "procfs_fd",
		       c->is_fdmap ? (int)c->reserved : c->procfs_fd, (void *)c->buf,
		       buf_names[c->bc], c->count, c->flags, r, r < 0 ? pt_errname(e) : "ok", why);
}

/* Does the view hide this target from us (the default view, as uid 65534)? */
static int hidden_target(const struct call *c)
{
	if (c->is_fdmap || !env.as_nobody || (c->flags & PIDMAP_PROCFS))
		return 0;
	return c->pc == P_INIT || c->pc == P_KTHREADD || c->pc == P_ROOTPROC;
}

/* May this (existing or not) target legitimately give ESRCH? */
static int may_esrch(const struct call *c)
{
	if (hidden_target(c))
		return 1;
	switch (c->pc) {
	case P_ZERO:
	case P_SELF:
	case P_CHILD:
	case P_INIT:
	case P_ROOTPROC:
	case P_THREAD:	/* any thread names its group; fdmap its table */
		return 0;
	case P_KTHREADD:
		/* Kernel threads share init_files; "no fd table" is defensible. */
		return c->is_fdmap;
	case P_ZOMBIE:
		/* TASKS lists a zombie's leader, CHILDREN is empty; no fd table. */
		return c->is_fdmap;
	default:
		return 1;
	}
}

static unsigned int mode_of(const struct call *c)
{
	return c->is_fdmap ? 0 : (c->flags & PIDMAP_MODE_MASK);
}

/*
 * Exact reference for targets whose answer is fixed during the phase, or
 * NULL.  kids_alt: the alternative reference (zombie children listed or not).
 */
static const struct pt_ids *reference(const struct call *c, const struct pt_ids **alt)
{
	int me = c->pc == P_ZERO || c->pc == P_SELF || c->pc == P_THREAD;

	*alt = NULL;
	if (c->pidfd_target && c->tfd != D_GOOD)
		return NULL;
	if (!me)
		return NULL;
	if (c->is_fdmap)
		return &env.fds;
	if (mode_of(c) == PIDMAP_TASKS)
		return &env.tids;
	if (mode_of(c) == PIDMAP_CHILDREN) {
		*alt = &env.kids_all;
		return &env.kids_live;
	}
	return NULL;
}

/*
 * Are v[0..r) the first ids >= start of the reference?  A short answer
 * (r < limit) must be the end of the listing; limit is count, or fewer when
 * the buffer ends at a guard page (then the copy stopped at the fault).
 */
static int matches(const struct pt_ids *ref, const int *v, long r, int start,
		   unsigned long limit)
{
	size_t i = 0;
	long j;

	while (i < ref->n && ref->v[i] < start)
		i++;
	for (j = 0; j < r; j++, i++)
		if (i >= ref->n || ref->v[i] != v[j])
			return 0;
	/* A short answer must be the end of the listing. */
	return (unsigned long)r == limit || i == ref->n;
}

static void check(struct call *c, long r, int e)
{
	unsigned int mode = mode_of(c);
	int einval, ebadf, e2big, efault_req, bad_buf, eperm_ok, procfs = 0;

	if (!c->is_fdmap)
		procfs = !!(c->flags & PIDMAP_PROCFS);
	einval = c->start < 0 || c->target < 0 || c->fc == F_INVALID || c->rc == R_SHORT;
	if (c->is_fdmap) {
		einval |= c->reserved != 0;
	} else {
		einval |= (mode == PIDMAP_PROC || mode == PIDMAP_ALL_TASKS) &&
			  (c->target != 0 || c->pidfd_target);
		einval |= !procfs && c->procfs_fd != 0;
		einval |= procfs && c->vfd == D_WRONG_KIND;
	}
	einval |= c->pidfd_target && c->tfd == D_WRONG_KIND;
	ebadf = (procfs && (c->vfd == D_CLOSED || c->vfd == D_NEGATIVE)) ||
		(c->pidfd_target && (c->tfd == D_CLOSED || c->tfd == D_NEGATIVE));
	e2big = c->rc == R_LONG_NONZERO || c->rc == R_HUGE;
	efault_req = c->rc == R_NULL || c->rc == R_UNMAPPED;
	bad_buf = c->slots < (long)c->count;
	/* Only fdmap checks ptrace rights, and root may read everything. */
	eperm_ok = c->is_fdmap && env.as_nobody &&
		   (c->pc == P_INIT || c->pc == P_KTHREADD || c->pc == P_ROOTPROC ||
		    c->pc == P_RANDOM || c->pc == P_TOOBIG);

	if (r < 0) {
		switch (e) {
		case EINVAL: st->by_errno[0]++; if (!einval) violation(c, r, e, "EINVAL without cause"); break;
		case E2BIG: st->by_errno[3]++; if (!e2big) violation(c, r, e, "E2BIG without cause"); break;
		case EBADF: st->by_errno[5]++; if (!ebadf) violation(c, r, e, "EBADF without cause"); break;
		case EFAULT:
			st->by_errno[1]++;
			if (efault_req)
				break;
			/*
			 * count 0 must not fault, except that an address that
			 * is no user address at all fails access_ok().
			 */
			if (!bad_buf || (c->count == 0 && c->bc != B_KERNEL && c->bc != B_NONCANON))
				violation(c, r, e, "EFAULT with a writable buffer or count 0");
			else if (c->slots > 0)
				st->partial_efault++;
			break;
		case ESRCH:
			st->by_errno[2]++;
			if (einval || ebadf || e2big || efault_req)
				violation(c, r, e, "ESRCH for a request that is invalid");
			else if (!may_esrch(c))
				violation(c, r, e, "ESRCH for a live target");
			break;
		case EPERM:
			st->by_errno[4]++;
			if (!eperm_ok)
				violation(c, r, e, "EPERM without cause");
			break;
		default:
			violation(c, r, e, "undocumented errno");
		}
		return;
	}

	if (ebadf || e2big || efault_req) {
		st->ok++;
		violation(c, r, 0, "success despite a bad request, fd or size");
		return;
	}
	if (hidden_target(c) && (mode == PIDMAP_TASKS || mode == PIDMAP_CHILDREN)) {
		st->ok++;
		violation(c, r, 0, "a target the default view hides was listed");
		return;
	}
	if (c->pidfd_target && c->pc == P_REAPED) {
		st->ok++;
		violation(c, r, 0, "success for a pidfd whose process is gone");
		return;
	}
	st->ok++;
	if (einval) {
		violation(c, r, 0, "success despite invalid arguments");
		return;
	}
	/* count 0 may answer before the pid is looked up. */
	if (c->count && ((c->pc == P_REAPED && !c->pidfd_target) ||
			 (c->pc == P_ZOMBIE && c->is_fdmap))) {
		char path[32];

		/* A reused pid is the only excuse. */
		snprintf(path, sizeof(path), "/proc/%d", c->pid);
		if (c->pc == P_ZOMBIE || access(path, F_OK))
			violation(c, r, 0, "success for a reaped pid or a zombie's fd table");
	}
	if (eperm_ok && (c->pc == P_INIT || c->pc == P_ROOTPROC))
		violation(c, r, 0, "fdmap of a root process as uid 65534 succeeded");
	if ((unsigned long)r > c->count) {
		violation(c, r, 0, "more entries than count");
		return;
	}
	if (r > 0 && c->slots < r) {
		/* It cannot have written there: a fault, not a result. */
		st->overclaim++;
		violation(c, r, 0, "claims more entries than the buffer could take");
		return;
	}
	if (r > 0) {
		int v[VALID_SLOTS];
		const struct pt_ids *ref, *alt;
		unsigned long limit = c->count;
		long j;

		memcpy(v, c->buf, (size_t)r * sizeof(int));
		for (j = 0; j < r; j++)
			if (v[j] < c->start || (j && v[j] <= v[j - 1]) ||
			    v[j] < (c->is_fdmap ? 0 : 1)) {
				st->order++;
				violation(c, r, 0, "entries not strictly ascending and >= start");
				return;
			}
		if (c->slots >= 0 && (unsigned long)c->slots < limit)
			limit = (unsigned long)c->slots;
		ref = reference(c, &alt);
		if (ref && !matches(ref, v, r, c->start, limit) &&
		    !(alt && matches(alt, v, r, c->start, limit))) {
			st->mismatch++;
			violation(c, r, 0, "entries differ from the /proc reference");
		}
	} else if (c->slots >= 0 && c->count > 0) {
		/* 0 = end of listing: for our own targets, check it really is. */
		const struct pt_ids *ref, *alt;

		ref = reference(c, &alt);
		if (ref && !matches(ref, NULL, 0, c->start, c->count) &&
		    !(alt && matches(alt, NULL, 0, c->start, c->count))) {
			st->mismatch++;
			violation(c, r, 0, "0 returned but the reference has entries >= start");
		}
	}
}

static void fill_canary(struct call *c)
{
	uint32_t pat = CANARY;
	long i, n = (long)c->count + c->canary;

	for (i = 0; i < n; i++)
		memcpy(c->buf + 4 * i, &pat, 4);
}

static void check_canary(struct call *c, long r)
{
	uint32_t x;
	long i;

	for (i = (long)c->count; i < (long)c->count + c->canary; i++) {
		memcpy(&x, c->buf + 4 * i, 4);
		if (x != CANARY) {
			st->canary++;
			violation(c, r, 0, "write beyond count (canary overwritten)");
			return;
		}
	}
	/* Inside count but after the result: allowed, but worth knowing. */
	for (i = r > 0 ? r : 0; i < (long)c->count; i++) {
		memcpy(&x, c->buf + 4 * i, 4);
		if (x != CANARY) {
			st->tail_writes++;
			return;
		}
	}
}

static void fuzz(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		struct call c;
		long r;
		int e;

		memset(&c, 0, sizeof(c));
		c.is_fdmap = below(3) == 0;
		pick_pid(&c);
		pick_flags(&c);
		pick_start_count(&c);
		pick_target(&c);
		pick_request(&c);
		pick_buffer(&c);
		if (c.canary)
			fill_canary(&c);

		errno = 0;
		r = c.is_fdmap ? sys_fdmap(c.req, (int *)c.buf, c.count, c.flags)
			       : sys_pidmap(c.req, (int *)c.buf, c.count, c.flags);
		e = errno;

		st->calls++;
		st->by_buf[c.bc]++;
		st->by_pid[c.pc]++;
		st->by_count[c.cc]++;
		st->by_start[c.sc]++;
		st->by_flags[c.is_fdmap][c.fc]++;
		st->by_req[c.rc]++;
		if (c.slots < (long)c.count)
			st->faults++;
		check(&c, r, e);
		if (c.canary)
			check_canary(&c, r);
		if (c.bc == B_RO && (env.ro[0] != 0x5a || env.ro[PAGE - 1] != 0x5a)) {
			violation(&c, r, e, "read-only page modified");
			pt_die("read-only page modified");
		}
	}
}

static void run_phase(const char *name, unsigned long n, int as_nobody)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		pt_die("fork");
	if (pid == 0) {
		if (as_nobody) {
			/* Groups first: after setuid we could not drop them. */
			if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
				pt_die("drop privileges");
			/*
			 * setuid() cleared dumpable (suid_dumpable 0), and our
			 * children would inherit that: fdmap of our own child
			 * must be allowed, so make the phase dumpable again.
			 */
			if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
				pt_die("PR_SET_DUMPABLE");
		}
		setup_env(as_nobody);
		pt_info("phase %s: %lu calls (self %d, thread %d, child %d, zombie %d, reaped %d)",
			name, n, env.self, env.thread, env.child, env.zombie, env.reaped);
		fuzz(n);
		/* Release the parked thread and child, reap them. */
		close(release_pipe[1]);
		if (waitpid(env.child, NULL, 0) != env.child || waitpid(env.zombie, NULL, 0) != env.zombie)
			pt_die("waitpid");
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		pt_die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		pt_err("phase %s ended with status %#x", name, status);
		st->violations++;
	}
}

int main(void)
{
	unsigned long calls = (unsigned long)pt_env_int("PIDMAP_FUZZ_CALLS", 200000);
	const char *seed_env = getenv("PIDMAP_FUZZ_SEED");
	unsigned long inputs_checked;
	long splats0, splats;
	int i;

	pt_name = "fuzz";
	pt_require_syscalls();
	if (calls < 100000)
		calls = 100000;	/* the floor, on every kernel */
	rng = seed_env ? strtoull(seed_env, NULL, 0) : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
	if (!rng)
		rng = 1;
	printf("fuzz: seed %#llx (PIDMAP_FUZZ_SEED reproduces), %lu calls\n",
	       (unsigned long long)rng, calls);
	fflush(stdout);
	splats0 = pt_count_splats();
	kthreadd_pid = pt_kthreadd();
	if (kthreadd_pid <= 0)
		pt_die("no kthreadd (a kernel thread with parent 0) in /proc");
	alarm(280);

	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		pt_die("mmap");
	/* Both phases share the seed stream start, but draw differently. */
	run_phase("root", calls * 7 / 10, 0);
	rnd();
	run_phase("uid65534", calls - calls * 7 / 10, 1);

	for (i = 0; i < B_NR; i++)
		printf("FUZZ: class=buffer:%s inputs=%lu\n", buf_names[i], st->by_buf[i]);
	for (i = 0; i < P_NR; i++)
		printf("FUZZ: class=pid:%s inputs=%lu\n", pid_names[i], st->by_pid[i]);
	for (i = 0; i < C_NR; i++)
		printf("FUZZ: class=count:%s inputs=%lu\n", count_names[i], st->by_count[i]);
	for (i = 0; i < S_NR; i++)
		printf("FUZZ: class=start:%s inputs=%lu\n", start_names[i], st->by_start[i]);
	for (i = 0; i < R_NR; i++)
		printf("FUZZ: class=request:%s inputs=%lu\n", req_names[i], st->by_req[i]);
	printf("FUZZ: class=target:pidfd inputs=%lu\nFUZZ: class=view:procfs_fd inputs=%lu\n",
	       st->pidfd_targets, st->procfs_views);
	for (i = 0; i < F_NR; i++)
		printf("FUZZ: class=flags:pidmap_%s inputs=%lu\nFUZZ: class=flags:fdmap_%s inputs=%lu\n",
		       flag_names[i], st->by_flags[0][i], flag_names[i], st->by_flags[1][i]);
	printf("FUZZ: results ok=%lu EINVAL=%lu EFAULT=%lu ESRCH=%lu E2BIG=%lu EPERM=%lu EBADF=%lu "
	       "partial_efault=%lu tail_writes=%lu\n",
	       st->ok, st->by_errno[0], st->by_errno[1], st->by_errno[2], st->by_errno[3],
	       st->by_errno[4], st->by_errno[5], st->partial_efault, st->tail_writes);
	inputs_checked = st->calls;
	splats = pt_new_splats(splats0);
	printf("RELIABILITY: name=fuzz ops=%lu faults=%lu inputs=%lu dups=%lu misses=%lu "
	       "violations=%lu canary=%lu overclaim=%lu splats=%ld\n",
	       st->calls, st->faults, inputs_checked, st->order, st->mismatch,
	       st->violations, st->canary, st->overclaim, splats);
	if (st->violations || splats > 0 || st->calls < calls) {
		printf("fuzz: FAIL\n");
		return KSFT_FAIL;
	}
	printf("fuzz: PASS\n");
	return KSFT_PASS;
}

// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * infofuzz: randomized hostile arguments for pidmap(2) with PIDMAP_INFO.
 *
 * PIDMAP_INFOFUZZ_CALLS calls per phase (default 20000, never fewer than
 * 5000), as root and as uid 65534, with random modes and modifiers,
 * targets (0, the caller, its child, init, a pidfd, a negative one),
 * starts, counts (0 to UINT_MAX), record sizes (valid: 96 to 4096 in
 * steps of 8; invalid: below 96, not a multiple of 8, above 4096),
 * masks (any 64 bits), __reserved, PIDMAP_INFO left out while its fields
 * are set, and buffers (room for every record and a canary after them,
 * room for k records and part of one more before a PROT_NONE page, NULL,
 * unmapped, kernel).  Each call has at most one bad argument, so the
 * expected errno is exact.
 *
 * Oracle, per call: the documented errno, or a count r <= count and <= the
 * records that fit before the guard page, whose tids ascend from start;
 * each record's mask is within info_mask and the known bits, every field
 * outside the mask and every byte from 96 to info_size is 0; the caller's
 * own threads get every asked-for field with tgid == its pid; TASKS of the
 * caller equals its threads from start; nothing is written past count
 * records, nor past r records unless the call stopped at the guard page.
 *
 * PIDMAP_INFOFUZZ_SEED reproduces a run; a failing call is printed.
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
#define AREA (64 * PAGE)	/* the writable area; a PROT_NONE page follows */
#define FILL 0xa5
#define KNOWN PIDMAP_INFO_ALL_V2
#define THREADS 3

enum bad { BAD_NONE, BAD_SIZE_SMALL, BAD_SIZE_ODD, BAD_SIZE_BIG, BAD_RESERVED,
	   BAD_NO_FLAG, BAD_START, BAD_TARGET, BAD_FLAGS, BAD_NR };
static const char *const bad_names[BAD_NR] = {
	"none", "size_small", "size_odd", "size_big", "reserved", "fields_without_flag",
	"negative_start", "negative_target", "two_modes",
};
enum buf { BUF_ROOM, BUF_GUARD, BUF_NULL, BUF_UNMAPPED, BUF_KERNEL, BUF_NR };
static const char *const buf_names[BUF_NR] = {
	"room", "guard", "null", "unmapped", "kernel",
};
enum tgt { TGT_ZERO, TGT_SELF, TGT_CHILD, TGT_INIT, TGT_PIDFD, TGT_NR };

static struct {
	unsigned long calls, ok, records, own_records, by_errno[4], violations;
} *st;

static uint64_t rng;
static unsigned char *area, *hole;
static int proc_fd, self_pidfd, threads_tids[THREADS + 1];
static pid_t child;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned int below(unsigned int n)
{
	return n ? (unsigned int)(rnd() % n) : 0;
}

struct call {
	unsigned int flags, count, size;
	int start, target, procfs_fd;
	uint32_t reserved;
	__u64 mask;
	enum bad bad;
	enum buf buf;
	enum tgt tgt;
	unsigned char *ptr;
	size_t room;		/* writable bytes at ptr (BUF_ROOM, BUF_GUARD) */
};

static void violation(const struct call *c, long r, int e, const char *why)
{
	st->violations++;
	if (st->violations > 20)
		return;
	pt_err("%s: flags=%#x count=%u size=%u start=%d target=%d(%d) mask=%#llx "
	       "reserved=%#x bad=%s buf=%s room=%zu -> r=%ld errno=%s", why, c->flags,
	       c->count, c->size, c->start, c->target, c->tgt, (unsigned long long)c->mask,
	       c->reserved, bad_names[c->bad], buf_names[c->buf], c->room, r, pt_errname(e));
}

static int started;

static void *parked(void *arg)
{
	threads_tids[(long)arg] = pt_gettid();
	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

static void pick(struct call *c)
{
	static const unsigned int modes[] = {
		PIDMAP_PROC, PIDMAP_ALL_TASKS, PIDMAP_TASKS, PIDMAP_CHILDREN,
	};
	unsigned int mode = modes[below(4)];
	int targeted = mode == PIDMAP_TASKS || mode == PIDMAP_CHILDREN;

	memset(c, 0, sizeof(*c));
	c->bad = below(3) ? BAD_NONE : (enum bad)(1 + below(BAD_NR - 1));
	c->flags = mode | PIDMAP_INFO;
	if (below(4) == 0)
		c->flags |= PIDMAP_IGNORE_KTHREADS;
	if (below(3) == 0) {
		c->flags |= PIDMAP_PROCFS;
		c->procfs_fd = proc_fd;
	}
	c->size = 96 + 8 * below(below(4) ? 6 : 501);
	c->mask = below(3) ? KNOWN : below(2) ? rnd() : rnd() & KNOWN;
	switch (below(4)) {
	case 0: c->start = 0; break;
	case 1: c->start = below(300); break;
	case 2: c->start = (int)(rnd() & 0x3fffff); break;
	default: c->start = below(8) ? threads_tids[below(THREADS + 1)] : INT_MAX; break;
	}
	switch (below(6)) {
	case 0: c->count = 0; break;
	case 1: c->count = 1; break;
	case 2: c->count = 1 + below(40); break;
	case 3: c->count = 1 + below(400); break;
	case 4: c->count = below(2) ? UINT_MAX : 0x80000000u + below(1000); break;
	default: c->count = 2 + below(8); break;
	}
	c->tgt = TGT_ZERO;
	if (targeted) {
		c->tgt = (enum tgt)below(TGT_NR);
		switch (c->tgt) {
		case TGT_SELF: c->target = getpid(); break;
		case TGT_CHILD: c->target = child; break;
		case TGT_INIT: c->target = 1; break;
		case TGT_PIDFD:
			c->target = self_pidfd;
			c->flags |= PIDMAP_TARGET_PIDFD;
			break;
		default: break;
		}
	}
	switch (c->bad) {
	case BAD_SIZE_SMALL: c->size = below(96); break;
	case BAD_SIZE_ODD: c->size = 97 + below(3990); c->size += !(c->size % 8); break;
	case BAD_SIZE_BIG: c->size = below(2) ? 4097 + below(100000) : UINT_MAX; break;
	case BAD_RESERVED: c->reserved = 1u << below(32); break;
	case BAD_NO_FLAG:
		c->flags &= ~PIDMAP_INFO;
		if (below(2))
			c->size = 0;	/* info_mask alone */
		if (!c->size && !c->mask)
			c->mask = 1;
		break;
	case BAD_START: c->start = -1 - (int)below(INT_MAX); break;
	case BAD_TARGET:
		c->target = -1 - (int)below(1000);
		c->flags &= ~PIDMAP_TARGET_PIDFD;
		break;
	case BAD_FLAGS: c->flags |= mode == PIDMAP_PROC ? PIDMAP_TASKS : PIDMAP_PROC; break;
	default: break;
	}

	c->buf = below(5) ? (below(2) ? BUF_ROOM : BUF_GUARD) : (enum buf)(2 + below(3));
	if (c->buf == BUF_ROOM || c->buf == BUF_GUARD) {
		size_t want = (c->size && c->size <= 4096) ? c->size : 96;
		unsigned long long need = (unsigned long long)c->count * want;

		if (c->buf == BUF_ROOM && need + 256 <= AREA) {
			/* Room for count records and a canary after them. */
			c->room = need;
			c->ptr = area + 8 * below((AREA - need - 256) / 8 + 1);
		} else {
			/* k records and part of one more, then the guard page. */
			c->buf = BUF_GUARD;
			c->room = want * below(AREA / want < 12 ? AREA / want : 12) +
				  below(want);
			c->ptr = area + AREA - c->room;
		}
	} else if (c->buf == BUF_NULL) {
		c->ptr = NULL;
	} else if (c->buf == BUF_UNMAPPED) {
		c->ptr = hole;
	} else {
		c->ptr = (unsigned char *)(uintptr_t)(sizeof(void *) == 8 ?
						      0xffffffff81000000ull : 0xc1000000ull);
	}
}

static long call(const struct call *c)
{
	struct pidmap_req req;

	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.start = c->start;
	req.target = c->target;
	req.procfs_fd = c->procfs_fd;
	req.info_size = c->size;
	req.__reserved = c->reserved;
	req.info_mask = c->mask;
	return sys_pidmap(&req, (int *)c->ptr, c->count, c->flags);
}

static int own_tid(int tid)
{
	int i;

	for (i = 0; i <= THREADS; i++)
		if (threads_tids[i] == tid)
			return 1;
	return 0;
}

/* The errno the bad argument must give, or 0 for a valid call. */
static int expected_errno(const struct call *c)
{
	switch (c->bad) {
	case BAD_SIZE_BIG: return E2BIG;
	case BAD_NONE: return 0;
	default: return EINVAL;
	}
}

static void check(const struct call *c, long r, int e)
{
	int want = expected_errno(c);
	size_t fit;
	int policy_reads;
	long i;

	st->calls++;
	if (want) {
		if (r != -1 || e != want)
			violation(c, r, e, "wrong answer to a bad argument");
		st->by_errno[want == E2BIG ? 1 : 0]++;
		return;
	}
	if (r < 0) {
		int known = c->tgt == TGT_SELF || c->tgt == TGT_CHILD || c->tgt == TGT_PIDFD ||
			    c->tgt == TGT_ZERO;

		if (e == EFAULT) {
			st->by_errno[2]++;
			/* Only with no room for one record. */
			if ((c->buf == BUF_ROOM || c->buf == BUF_GUARD) && c->room >= c->size)
				violation(c, r, e, "EFAULT although a record fit");
		} else if ((e == ESRCH || e == EPERM) && !known) {
			st->by_errno[3]++;
		} else {
			violation(c, r, e, "unexpected errno");
		}
		return;
	}
	st->ok++;
	fit = c->buf == BUF_ROOM || c->buf == BUF_GUARD ? c->room / c->size : 0;
	if ((unsigned long)r > c->count || (size_t)r > fit)
		violation(c, r, 0, "more records than count or than fit");
	for (i = 0, policy_reads = 0; i < r && (size_t)i < fit; i++) {
		const struct pidmap_info *rec = (const void *)(c->ptr + i * c->size);
		struct pidmap_info z;
		int policy;
		size_t j;

		st->records++;
		if (rec->tid < c->start || (i && rec->tid <=
		    ((const struct pidmap_info *)(c->ptr + (i - 1) * c->size))->tid))
			violation(c, r, 0, "tids not ascending from start");
		if (rec->mask & ~(c->mask & KNOWN))
			violation(c, r, 0, "mask outside info_mask and the known bits");
		z = *rec;
		z.tid = 0;
		z.mask = 0;
		if (!(rec->mask & PIDMAP_INFO_TGID))
			if (z.tgid)
				violation(c, r, 0, "tgid outside the mask");
		if (!(rec->mask & PIDMAP_INFO_COMM) && z.comm[0])
			violation(c, r, 0, "comm outside the mask");
		if (!(rec->mask & PIDMAP_INFO_NICE) && z.nice)
			violation(c, r, 0, "nice outside the mask");
		/*
		 * A record with fields has nice, if asked for, exactly under a
		 * policy with one (stat field 41: SCHED_NORMAL or SCHED_BATCH);
		 * the first few records of a call are read against the view.
		 */
		if (rec->mask && (c->mask & PIDMAP_INFO_NICE) && policy_reads < 4) {
			policy_reads++;
			policy = pt_task_policy(c->procfs_fd, c->flags, rec->tid);
			if (policy >= 0 &&
			    !(rec->mask & PIDMAP_INFO_NICE) != !proc_policy_has_nice(policy))
				violation(c, r, 0, "nice in the mask not as the task's policy says");
		}
		if (!rec->mask) {
			struct pidmap_info zero;

			memset(&zero, 0, sizeof(zero));
			if (memcmp(&z, &zero, sizeof(z)))
				violation(c, r, 0, "mask 0 with fields set");
		}
		for (j = sizeof(*rec); j < c->size; j++)
			if (c->ptr[i * c->size + j])
				break;
		if (j < c->size)
			violation(c, r, 0, "record tail not zeroed");
		if (own_tid(rec->tid)) {
			__u64 want = c->mask & KNOWN;

			st->own_records++;
			/* All asked for, but nice under a policy without one. */
			policy = pt_task_policy(-1, 0, rec->tid);
			if (policy < 0)
				violation(c, r, 0, "the caller's own thread has no readable stat");
			else if (!proc_policy_has_nice(policy))
				want &= ~PIDMAP_INFO_NICE;
			if (rec->mask != want)
				violation(c, r, 0, "the caller's own record lacks fields");
			if ((rec->mask & PIDMAP_INFO_TGID) && rec->tgid != getpid())
				violation(c, r, 0, "the caller's own record has a wrong tgid");
		}
	}
	/* TASKS of the caller: exactly its threads from start. */
	if ((c->flags & PIDMAP_MODE_MASK) == PIDMAP_TASKS &&
	    (c->tgt == TGT_ZERO || c->tgt == TGT_SELF || c->tgt == TGT_PIDFD)) {
		long want_n = 0;

		for (i = 0; i <= THREADS; i++)
			want_n += threads_tids[i] >= c->start;
		if (want_n > (long)c->count)
			want_n = c->count;
		if ((size_t)want_n > fit && c->buf == BUF_GUARD)
			want_n = fit;
		if (r != want_n)
			violation(c, r, 0, "TASKS of the caller: wrong number of records");
	}
	/* Nothing written past r records, unless it stopped at the guard. */
	if (c->ptr && c->buf != BUF_NULL) {
		size_t from = (size_t)r * c->size, to;

		if (c->buf == BUF_ROOM)
			to = c->room + 256;
		else
			to = c->room;
		if (c->buf == BUF_GUARD && (size_t)(r + 1) * c->size > c->room &&
		    (unsigned long)r < c->count)
			from = to;	/* a partial record before the guard may be written */
		for (; from < to; from++)
			if (c->ptr[from] != FILL)
				break;
		if (from < to)
			violation(c, r, 0, "a write past the records returned");
	}
}

static void phase(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		struct call c;
		long r;
		int e;

		pick(&c);
		if (c.buf == BUF_ROOM)
			memset(c.ptr, FILL, c.room + 256);
		else if (c.buf == BUF_GUARD)
			memset(c.ptr, FILL, c.room);
		errno = 0;
		r = call(&c);
		e = errno;
		check(&c, r, e);
	}
}

static void run_as(uid_t uid, unsigned long n)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		pt_die("fork");
	if (pid == 0) {
		pthread_t t;
		int i;

		if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			pt_die("become %d", (int)uid);
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		threads_tids[0] = getpid();
		for (i = 1; i <= THREADS; i++) {
			if (pthread_create(&t, NULL, parked, (void *)(long)i))
				pt_die("pthread_create");
		}
		while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < THREADS)
			usleep(1000);
		child = fork();
		if (child == 0) {
			for (;;)
				pause();
		}
		self_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
		proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (child < 0 || self_pidfd < 0 || proc_fd < 0)
			pt_die("setup");
		phase(n);
		kill(child, SIGKILL);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		pt_err("phase as uid %d ended with status %#x", (int)uid, status);
		st->violations++;
	}
}

int main(void)
{
	unsigned long n = pt_env_int("PIDMAP_INFOFUZZ_CALLS", 20000);
	const char *seed = getenv("PIDMAP_INFOFUZZ_SEED");
	long splats0, splats;

	pt_name = "infofuzz";
	pt_require_syscalls();
	if (getuid() != 0) {
		pt_err("must run as root (it switches uids)");
		return KSFT_FAIL;
	}
	if (n < 5000)
		n = 5000;
	rng = seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL) * 2654435761u + getpid();
	if (!rng)
		rng = 1;
	printf("infofuzz: seed %#llx, %lu calls per phase\n", (unsigned long long)rng, n);
	splats0 = pt_count_splats();
	alarm(280);
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	area = mmap(NULL, AREA + 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (st == MAP_FAILED || area == MAP_FAILED)
		pt_die("mmap");
	/* The guard page after the area, and an unmapped hole after it. */
	if (mprotect(area + AREA, PAGE, PROT_NONE) || munmap(area + AREA + PAGE, PAGE))
		pt_die("guard");
	hole = area + AREA + PAGE;

	run_as(0, n);
	run_as(65534, n);

	splats = pt_new_splats(splats0);
	printf("RELIABILITY: name=infofuzz calls=%lu ok=%lu records=%lu own_records=%lu "
	       "EINVAL=%lu E2BIG=%lu EFAULT=%lu ESRCH_EPERM=%lu violations=%lu splats=%ld\n",
	       st->calls, st->ok, st->records, st->own_records, st->by_errno[0],
	       st->by_errno[1], st->by_errno[2], st->by_errno[3], st->violations, splats);
	if (st->violations || splats > 0 || st->calls != 2 * n || st->own_records == 0 ||
	    !st->by_errno[0] || !st->by_errno[1] || !st->by_errno[2]) {
		printf("infofuzz: FAIL\n");
		return KSFT_FAIL;
	}
	printf("infofuzz: PASS\n");
	return KSFT_PASS;
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pidmap_uapi.h: the v3 ABI of pidmap(2), pidmap_info(2) and fdmap(2)
 * (kernel-patches/pidmap/, kernel-patches/fdmap/, the man pages of
 * kernel-patches/v3/man/) for programs that must also build against
 * headers without the series: <linux/pidmap.h> and <linux/fdmap.h> when
 * they are there, else the same definitions; the raw syscall wrappers;
 * and helpers that fill the request structs.
 *
 * The v3 ABI in short: one struct pidmap_req for both pidmap(2) (u32 ids)
 * and pidmap_info(2) (records of info_size bytes, 168 in VER0); a scope
 * (PROCS, TASKS, THREADS, CHILDREN) instead of mode flags; an exclusive
 * cursor (last_id: the last id the previous call returned, 0 to start);
 * a target only for THREADS and CHILDREN, and only as a pidfd (or
 * PIDFD_SELF_THREAD / PIDFD_SELF_THREAD_GROUP); a procfs view only with
 * PIDMAP_VIEW_PROCFS and an fd opened for reading on a procfs root. fdmap
 * takes a struct fdmap_req: a pidfd, an inclusive first_fd, and the same
 * view. Every call takes size_t nr (at most 1,000,000, else EOVERFLOW) and
 * flags that must be 0.
 *
 * Shared by guest-tests/ (64-bit, and the i686 compat test).
 */
#ifndef PIDMAP_UAPI_H
#define PIDMAP_UAPI_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <linux/types.h>

#if defined(__has_include)
#if __has_include(<linux/pidmap.h>)
#include <linux/pidmap.h>
#endif
#if __has_include(<linux/fdmap.h>)
#include <linux/fdmap.h>
#endif
#endif

/*
 * The next free numbers of Linux 7.3, the same in every table the series
 * wires but alpha's, MIPS's and (for fdmap) a few others; the guests are
 * x86_64, i386 and arm64.
 */
#ifndef __NR_pidmap
#define __NR_pidmap 473
#endif
#ifndef __NR_pidmap_info
#define __NR_pidmap_info 474
#endif
#ifndef __NR_fdmap
#define __NR_fdmap 475
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif

#ifndef PIDFD_THREAD
#define PIDFD_THREAD 0x80 /* O_EXCL on x86 and arm64 */
#endif
#ifndef PIDFD_SELF_THREAD
#define PIDFD_SELF_THREAD		-10000
#define PIDFD_SELF_THREAD_GROUP		-10001
#endif

#ifndef PIDMAP_REQ_SIZE_VER0
#define PIDMAP_SCOPE_PROCS	0
#define PIDMAP_SCOPE_TASKS	1
#define PIDMAP_SCOPE_THREADS	2
#define PIDMAP_SCOPE_CHILDREN	3

#define PIDMAP_FILTER_NO_KTHREADS	(1U << 0)
#define PIDMAP_VIEW_PROCFS		(1U << 1)
#define PIDMAP_VIEW_PIDNS		(1U << 2)

struct pidmap_req {
	__u32 size;
	__u32 scope;
	__u64 last_id;
	__s32 pidfd;
	__s32 procfs_fd;
	__u32 filter;
	__u32 info_size;
	__u64 info_mask;
	__s32 pidns_fd;
	__u32 __reserved;
};
#define PIDMAP_REQ_SIZE_VER0	48

#define PIDMAP_INFO_ID		(1ULL << 0)
#define PIDMAP_INFO_PPID	(1ULL << 1)
#define PIDMAP_INFO_CREDS	(1ULL << 2)
#define PIDMAP_INFO_SCHED	(1ULL << 3)
#define PIDMAP_INFO_NUM_THREADS	(1ULL << 4)
#define PIDMAP_INFO_CPUTIME	(1ULL << 5)
#define PIDMAP_INFO_START_TIME	(1ULL << 6)
#define PIDMAP_INFO_RSS		(1ULL << 7)
#define PIDMAP_INFO_STATE	(1ULL << 8)
#define PIDMAP_INFO_COMM	(1ULL << 9)
#define PIDMAP_INFO_TASK_FLAGS	(1ULL << 10)
#define PIDMAP_INFO_SUPPORTED_MASK (1ULL << 63)

#define PIDMAP_TASK_KTHREAD	(1U << 0)
#define PIDMAP_TASK_USER_WORKER	(1U << 1)
#define PIDMAP_TASK_EXITING	(1U << 2)
#define PIDMAP_TASK_FORKNOEXEC	(1U << 3)

struct pidmap_info {
	__u64 mask;
	__u64 supported_mask;
	__u64 pidfs_id;
	__u32 tid;
	__u32 tgid;
	__u32 ppid;
	__u32 ruid;
	__u32 euid;
	__s32 nice;
	__s32 priority;
	__u32 policy;
	__u32 num_threads;
	__u32 task_flags;
	__u64 utime;
	__u64 stime;
	__u64 start_time;
	__u64 rss_pages;
	__u8 state;
	__u8 __spare[7];
	char comm[64];
};
#define PIDMAP_INFO_SIZE_VER0	168
#endif

#ifndef FDMAP_REQ_SIZE_VER0
#define FDMAP_VIEW_PROCFS	(1U << 0)
#define FDMAP_VIEW_PIDNS	(1U << 1)

struct fdmap_req {
	__u32 size;
	__s32 pidfd;
	__u32 first_fd;
	__u32 view;
	__s32 procfs_fd;
	__s32 pidns_fd;
};
#define FDMAP_REQ_SIZE_VER0	24
#endif

/* Every field of the v3 record (everything but SUPPORTED_MASK). */
#define PIDMAP_INFO_ALL_V3	((PIDMAP_INFO_TASK_FLAGS << 1) - 1)

/* The most ids or records one call may ask for; nr above it is EOVERFLOW. */
#define PIDMAP_MAX_NR 1000000u

/* The same layout for 64-bit and i386 callers: no compat entry exists. */
_Static_assert(sizeof(struct pidmap_req) == PIDMAP_REQ_SIZE_VER0, "pidmap_req layout");
_Static_assert(sizeof(struct pidmap_info) == PIDMAP_INFO_SIZE_VER0, "pidmap_info layout");
_Static_assert(sizeof(struct fdmap_req) == FDMAP_REQ_SIZE_VER0, "fdmap_req layout");
_Static_assert(offsetof(struct pidmap_info, comm) == 104, "pidmap_info comm offset");

/* Raw calls: -1 and errno on failure, like every libc syscall wrapper. */
static inline long sys_pidmap(const void *req, __u32 *ids, size_t nr, unsigned int flags)
{
	return syscall(__NR_pidmap, req, ids, nr, flags);
}

static inline long sys_pidmap_info(const void *req, void *buf, size_t nr, unsigned int flags)
{
	return syscall(__NR_pidmap_info, req, buf, nr, flags);
}

static inline long sys_fdmap(const void *req, int *fds, size_t nr, unsigned int flags)
{
	return syscall(__NR_fdmap, req, fds, nr, flags);
}

static inline int sys_pidfd_open(pid_t pid, unsigned int flags)
{
	return (int)syscall(__NR_pidfd_open, pid, flags);
}

/*
 * A pidmap request: @scope, the ids after @last_id, of @pidfd's group
 * (THREADS and CHILDREN; 0 for PROCS and TASKS), through the procfs
 * mount of @view_fd (an fd opened for reading on its root) when
 * @view_fd > 0, else the default view; @filter: PIDMAP_FILTER_* bits
 * (PIDMAP_VIEW_PROCFS is added from @view_fd).
 */
static inline void pidmap_req_init(struct pidmap_req *req, __u32 scope, int pidfd, int view_fd,
				   __u32 filter, __u64 last_id)
{
	memset(req, 0, sizeof(*req));
	req->size = sizeof(*req);
	req->scope = scope;
	req->last_id = last_id;
	req->pidfd = pidfd;
	if (view_fd > 0) {
		req->procfs_fd = view_fd;
		filter |= PIDMAP_VIEW_PROCFS;
	}
	req->filter = filter;
}

/* pidmap(2) of a request built by pidmap_req_init(). */
static inline long pidmap_list(__u32 scope, int pidfd, int view_fd, __u32 filter, __u64 last_id,
			       __u32 *ids, size_t nr)
{
	struct pidmap_req req;

	pidmap_req_init(&req, scope, pidfd, view_fd, filter, last_id);
	return sys_pidmap(&req, ids, nr, 0);
}

/* pidmap_info(2): records of @info_size bytes with the fields of @mask. */
static inline long pidmap_info_list(__u32 scope, int pidfd, int view_fd, __u32 filter,
				    __u64 last_id, void *recs, size_t nr, __u32 info_size,
				    __u64 mask)
{
	struct pidmap_req req;

	pidmap_req_init(&req, scope, pidfd, view_fd, filter, last_id);
	req.info_size = info_size;
	req.info_mask = mask;
	return sys_pidmap_info(&req, recs, nr, 0);
}

/* fdmap(2) of @pidfd, the fds >= @first_fd, through @view_fd as above. */
static inline long fdmap_list(int pidfd, int view_fd, __u32 first_fd, int *fds, size_t nr)
{
	struct fdmap_req req;

	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.pidfd = pidfd;
	req.first_fd = first_fd;
	if (view_fd > 0) {
		req.view = FDMAP_VIEW_PROCFS;
		req.procfs_fd = view_fd;
	}
	return sys_fdmap(&req, fds, nr, 0);
}

#endif /* PIDMAP_UAPI_H */

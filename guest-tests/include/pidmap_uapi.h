/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pidmap_uapi.h: the v2 ABI of pidmap(2) and fdmap(2) (docs/ABI.md) for
 * programs that must also build against headers without the series:
 * <linux/pidmap.h> when it is there, else the values of docs/ABI.md; the
 * raw syscall wrappers; and two helpers that fill the request struct.
 *
 * Shared by guest-tests/ (64-bit and the i686 compat test) and
 * bench/pidmap-bench.c (which includes it by relative path so it still
 * builds alone).
 */
#ifndef PIDMAP_UAPI_H
#define PIDMAP_UAPI_H

#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<linux/pidmap.h>)
#include <linux/pidmap.h>
#endif
#endif

/*
 * The next free numbers of Linux 7.3, the same in every table the series
 * wires but alpha's and MIPS's; the guests are x86_64, i386 and arm64.
 */
#ifndef __NR_pidmap
#define __NR_pidmap 473
#endif
#ifndef __NR_fdmap
#define __NR_fdmap 474
#endif

#include <linux/types.h>

#ifndef PIDMAP_REQ_SIZE_VER1
#define PIDMAP_PROC		0x01u
#define PIDMAP_ALL_TASKS	0x02u
#define PIDMAP_TASKS		0x04u
#define PIDMAP_CHILDREN		0x08u
#define PIDMAP_MODE_MASK	0x0fu
#define PIDMAP_IGNORE_KTHREADS	0x100u
#define PIDMAP_TARGET_PIDFD	0x200u
#define PIDMAP_PROCFS		0x400u
#define PIDMAP_INFO		0x800u

struct pidmap_req {
	__u32 size;
	__s32 start;
	__s32 target;
	__s32 procfs_fd;
	__u32 info_size;
	__u32 __reserved;
	__u64 info_mask;
};
#define PIDMAP_REQ_SIZE_VER0 16
#define PIDMAP_REQ_SIZE_VER1 32

#define PIDMAP_INFO_TGID	(1ULL << 0)
#define PIDMAP_INFO_PPID	(1ULL << 1)
#define PIDMAP_INFO_STATE	(1ULL << 2)
#define PIDMAP_INFO_CPUTIME	(1ULL << 3)
#define PIDMAP_INFO_START_TIME	(1ULL << 4)
#define PIDMAP_INFO_RSS		(1ULL << 5)
#define PIDMAP_INFO_COMM	(1ULL << 6)
#define PIDMAP_INFO_UID		(1ULL << 7)
#define PIDMAP_INFO_FLAGS	(1ULL << 8)
#define PIDMAP_INFO_NICE	(1ULL << 9)
#define PIDMAP_INFO_NUM_THREADS	(1ULL << 10)

struct pidmap_info {
	__u64 mask;
	__s32 tid;
	__s32 tgid;
	__s32 ppid;
	__u32 ruid;
	__u32 euid;
	__s32 nice;
	__u32 num_threads;
	__u32 flags;
	__u64 utime_ns;
	__u64 stime_ns;
	__u64 start_time_ns;
	__u64 rss_pages;
	char comm[16];
	__u8 state;
	__u8 __reserved[7];
};
#define PIDMAP_INFO_SIZE_VER0 96
#endif

/* Every field docs/ABI.md defines for PIDMAP_INFO (v2). */
#define PIDMAP_INFO_ALL_V2	((PIDMAP_INFO_NUM_THREADS << 1) - 1)

#ifndef FDMAP_REQ_SIZE_VER0
#define FDMAP_TARGET_PIDFD	0x01u

struct fdmap_req {
	__u32 size;
	__s32 start;
	__s32 target;
	__u32 __reserved;
};
#define FDMAP_REQ_SIZE_VER0 16
#endif

_Static_assert(sizeof(struct pidmap_req) == PIDMAP_REQ_SIZE_VER1, "pidmap_req layout");
_Static_assert(sizeof(struct pidmap_info) == PIDMAP_INFO_SIZE_VER0, "pidmap_info layout");
_Static_assert(sizeof(struct fdmap_req) == FDMAP_REQ_SIZE_VER0, "fdmap_req layout");

/*
 * Raw calls: -1 and errno on failure, like every libc syscall wrapper.
 * Every argument is a pointer or a 32-bit integer, so 32-bit callers use
 * them unchanged (the kernel has no compat entry).
 */
static inline long sys_pidmap(const void *req, int *ids, unsigned int count,
			      unsigned int flags)
{
	return syscall(__NR_pidmap, req, ids, count, flags);
}

static inline long sys_fdmap(const void *req, int *fds, unsigned int count,
			     unsigned int flags)
{
	return syscall(__NR_fdmap, req, fds, count, flags);
}

/*
 * pidmap with a request built from its fields.  @target is a pid (0: the
 * caller) or, with PIDMAP_TARGET_PIDFD in @flags, a pidfd; @procfs_fd is
 * used only when @flags has PIDMAP_PROCFS.
 */
static inline void pidmap_req_init(struct pidmap_req *req, int procfs_fd, int target,
				   int start, unsigned int flags)
{
	memset(req, 0, sizeof(*req));
	req->size = sizeof(*req);
	req->start = start;
	req->target = target;
	req->procfs_fd = (flags & PIDMAP_PROCFS) ? procfs_fd : 0;
}

static inline long pidmap_view(int procfs_fd, int target, int start, int *ids,
			       unsigned int count, unsigned int flags)
{
	struct pidmap_req req;

	pidmap_req_init(&req, procfs_fd, target, start, flags);
	return sys_pidmap(&req, ids, count, flags);
}

/* pidmap in the default (fail-closed) view. */
static inline long pidmap_at(int target, int start, int *ids, unsigned int count,
			     unsigned int flags)
{
	return pidmap_view(0, target, start, ids, count, flags);
}

/*
 * pidmap with PIDMAP_INFO: up to @count records of @info_size bytes into
 * @recs, the fields of @mask, through the view of @procfs_fd when @flags
 * has PIDMAP_PROCFS.
 */
static inline long pidmap_info_view(int procfs_fd, int target, int start, void *recs,
				    unsigned int count, unsigned int flags,
				    unsigned int info_size, __u64 mask)
{
	struct pidmap_req req;

	pidmap_req_init(&req, procfs_fd, target, start, flags);
	req.info_size = info_size;
	req.info_mask = mask;
	return sys_pidmap(&req, (int *)recs, count, flags | PIDMAP_INFO);
}

/* fdmap of @target (a pid, 0 for the caller, or a pidfd with FDMAP_TARGET_PIDFD). */
static inline long fdmap_at(int target, int start, int *fds, unsigned int count,
			    unsigned int flags)
{
	struct fdmap_req req;

	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.start = start;
	req.target = target;
	return sys_fdmap(&req, fds, count, flags);
}

#endif /* PIDMAP_UAPI_H */

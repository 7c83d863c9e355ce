/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef _UAPI_LINUX_FDMAP_H
#define _UAPI_LINUX_FDMAP_H

#include <linux/types.h>

/* struct fdmap_req.view bits */
#define FDMAP_VIEW_PROCFS	(1U << 0) /* procfs_fd is the view */
#define FDMAP_VIEW_PIDNS	(1U << 1) /* pidns_fd is the view */

/**
 * struct fdmap_req - the request of fdmap(2)
 * @size: sizeof(struct fdmap_req), for extensions
 * @pidfd: the target: a pidfd, PIDFD_SELF_THREAD or PIDFD_SELF_THREAD_GROUP
 * @first_fd: list the fds >= @first_fd; 0 for the whole table
 * @view: 0, FDMAP_VIEW_PROCFS or FDMAP_VIEW_PIDNS
 * @procfs_fd: with FDMAP_VIEW_PROCFS, an fd opened for reading on the root
 *	of a procfs mount: its pid namespace and hidepid=/gid= are the view;
 *	else 0
 * @pidns_fd: with FDMAP_VIEW_PIDNS, an fd of a pid namespace
 *	(/proc/PID/ns/pid), the caller's or a descendant of it: the default
 *	view, in that namespace; else 0
 */
struct fdmap_req {
	__u32 size;
	__s32 pidfd;
	__u32 first_fd;
	__u32 view;
	__s32 procfs_fd;
	__s32 pidns_fd;
};

#define FDMAP_REQ_SIZE_VER0	24 /* sizeof first published struct */

#endif /* _UAPI_LINUX_FDMAP_H */

/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef _UAPI_LINUX_FDMAP_H
#define _UAPI_LINUX_FDMAP_H

#include <linux/types.h>

/**
 * struct fdmap_req - the request of fdmap(2)
 * @size: sizeof(struct fdmap_req), for extensions
 * @pidfd: the target: a pidfd, PIDFD_SELF_THREAD or PIDFD_SELF_THREAD_GROUP
 * @first_fd: list the fds >= @first_fd; 0 for the whole table
 * @__reserved: 0
 * @procfs_fd: an fd opened for reading on the root of a procfs mount: its
 *	pid namespace and hidepid=/gid= are the view; 0: none
 * @pidns_fd: an fd of a pid namespace (/proc/PID/ns/pid), the caller's or
 *	a descendant of it: the default view, in that namespace; 0: none
 * @pidns_id: the nsfs id of such a pid namespace (NS_GET_ID, listns(2));
 *	0: none. At most one of @pidns_fd and @pidns_id, and not with
 *	@procfs_fd; none: the caller's pid namespace
 *
 * The view is named as in struct pidmap_req, by the same three fields.
 */
struct fdmap_req {
	__u32 size;
	__s32 pidfd;
	__u32 first_fd;
	__u32 __reserved;
	__u32 procfs_fd;
	__u32 pidns_fd;
	__u64 pidns_id;
};

#define FDMAP_REQ_SIZE_VER0	32 /* sizeof first published struct */

#endif /* _UAPI_LINUX_FDMAP_H */

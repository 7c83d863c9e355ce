/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * task_record.h: the record the BPF programs of bench/bpf/ write per task,
 * shared by the BPF side (which gets its types from vmlinux.h) and the
 * loader: pidmap_info(2)'s 200-byte struct pidmap_info, from the series'
 * uapi header (<linux/pidmap.h> in crates/pidmap/abi/, on the include path
 * of both compilers), so the two sides and the call cannot disagree.
 *
 * In the loader a struct task_record is a struct pidmap_info. The BPF side
 * cannot use that name: the patched kernel's BTF, and so its vmlinux.h,
 * already holds a struct pidmap_info and a struct pidmap_req. So there the
 * header is included with its two structs renamed (task_record and
 * task_record_req) by the preprocessor, and without its own
 * <linux/types.h>, whose __u64 and friends vmlinux.h already defines (and
 * whose <asm/types.h> a -target bpf compiler does not find).
 */
#ifndef TASK_RECORD_H
#define TASK_RECORD_H

#ifdef __bpf__
#ifndef _LINUX_TYPES_H
#define _LINUX_TYPES_H
#define TASK_RECORD_KEEP_OUT_TYPES
#endif
#define pidmap_info task_record
#define pidmap_req task_record_req
#include <linux/pidmap.h>
#undef pidmap_info
#undef pidmap_req
#ifdef TASK_RECORD_KEEP_OUT_TYPES
#undef _LINUX_TYPES_H
#undef TASK_RECORD_KEEP_OUT_TYPES
#endif
#else
#include <linux/pidmap.h>
#define task_record pidmap_info
#endif

/* What the BPF target makes of the header is what the call writes. */
_Static_assert(sizeof(struct task_record) == PIDMAP_INFO_SIZE_VER0, "struct pidmap_info");

/* The most records the BPF_PROG_TYPE_SYSCALL program fills per run: its
 * array is one .bss map value, which must stay below KMALLOC_MAX_SIZE
 * (4 MiB): 20,000 x 200 bytes is 3.8 MiB. */
#define TASK_RECORD_MAX 20000

/* The pidmap_info(2) mask bits the programs fill: every field. */
#define TASK_RECORD_MASK ((PIDMAP_INFO_CTXSW << 1) - 1)

/*
 * The record's units: nanoseconds and bytes. USER_HZ is 100 on x86 and
 * arm64, so a time in stat's clock ticks is ns / 10,000,000, divided as
 * nsec_to_clock_t() divides it.
 */
#define NSEC_PER_USER_TICK 10000000ULL

#endif /* TASK_RECORD_H */

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * task_record.h: the record the BPF programs of bench/bpf/ write per task,
 * shared by the BPF side (which gets its types from vmlinux.h) and the
 * loader. Its layout is pidmap_info(2)'s 168-byte struct pidmap_info
 * (guest-tests/include/pidmap_uapi.h), field for field: the loader checks
 * every offset against it at compile time. It has a name of its own
 * because the patched kernel's BTF, and so its vmlinux.h, already holds a
 * struct pidmap_info.
 */
#ifndef TASK_RECORD_H
#define TASK_RECORD_H

/* The most records the BPF_PROG_TYPE_SYSCALL program fills per run: its
 * array is one .bss map value, which must stay below KMALLOC_MAX_SIZE
 * (4 MiB): 20,000 x 168 bytes is 3.2 MiB. */
#define TASK_RECORD_MAX 20000

/* The pidmap_info(2) mask bits the programs fill: every v3 field. */
#define TASK_RECORD_MASK 0x7ffULL

struct task_record {
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

#endif /* TASK_RECORD_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * task_record.bpf.c: per task, the record pidmap_info(2) returns in
 * PIDMAP_SCOPE_TASKS (the thread's own /proc/PID/task/TID/stat and status
 * values), written the way a BPF-based monitor writes it: CO-RE reads of
 * task_struct and its neighbours against the running kernel's BTF.
 *
 * Two programs fill the same record with the same code:
 * - task_records, an `iter/task` program (5.8): one record per task,
 *   bpf_seq_write()n to the iterator's seq_file, read by user space with
 *   read(2) on the fd of bpf_iter_create();
 * - fill_records, a BPF_PROG_TYPE_SYSCALL program (5.14) run with
 *   BPF_PROG_RUN, which walks every task with the open-coded
 *   bpf_iter_task kfuncs (6.7) and writes the records into a .bss array
 *   that user space reads through the skeleton's mmap.
 *
 * What the kernel's /proc does and this cannot, by construction: CPU times
 * are the raw tick-sampled task->utime/stime, not cputime_adjust()ed
 * against sum_exec_runtime as stat's are; rss is the percpu_counter's
 * approximate global count, not the exact per-CPU sum status gives; comm
 * is task->comm (16 bytes), without the workqueue suffix stat shows for a
 * kworker or the full name of other kernel threads; ids are the initial
 * pid namespace's and uids the initial user namespace's, whatever the
 * reader's. The state letter, the PF_* flags and TASK_* values below are
 * copies of kernel-internal constants, which CO-RE does not relocate.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "task_record.h"

char LICENSE[] SEC("license") = "GPL";

/* The page size of the x86_64 kernels the programs run on: rss in bytes. */
#define PAGE_SHIFT_X86 12

/* include/linux/sched.h, 5.14 and later: not in BTF. */
#define TASK_INTERRUPTIBLE 0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_NOLOAD 0x0400
#define TASK_RTLOCK_WAIT 0x1000
#define TASK_IDLE (TASK_UNINTERRUPTIBLE | TASK_NOLOAD)
#define TASK_REPORT 0x7f
#define TASK_REPORT_IDLE 0x80
#define PF_EXITING 0x00000004
#define PF_FORKNOEXEC 0x00000040
#define PF_USER_WORKER 0x00004000
#define PF_KTHREAD 0x00200000

/*
 * CO-RE flavours: the rss counters are a struct percpu_counter array since
 * 6.2, atomics in a struct mm_rss_stat before; pidfs ids live in struct
 * pid since 6.14. Which one the running kernel has is read from its BTF
 * at load time (the branch not taken is never verified).
 */
struct mm_struct___percpu {
	struct percpu_counter rss_stat[4];
} __attribute__((preserve_access_index));
struct mm_rss_stat___atomic {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));
struct mm_struct___atomic {
	struct mm_rss_stat___atomic rss_stat;
} __attribute__((preserve_access_index));
struct pid___pidfs {
	__u64 ino;
} __attribute__((preserve_access_index));

/* Before 5.14 the state was `long state`. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline __u8 state_letter(struct task_struct *t)
{
	unsigned int raw, state, index = 0;

	if (bpf_core_field_exists(t->__state))
		raw = BPF_CORE_READ(t, __state);
	else
		raw = BPF_CORE_READ((struct task_struct___pre514 *)t, state);
	/* __task_state_index() */
	state = (raw | BPF_CORE_READ(t, exit_state)) & TASK_REPORT;
	if ((raw & TASK_IDLE) == TASK_IDLE)
		state = TASK_REPORT_IDLE;
	if (raw & TASK_RTLOCK_WAIT)
		state = TASK_UNINTERRUPTIBLE;
	/* fls() */
#pragma unroll
	for (int bit = 0; bit < 8; bit++)
		if (state & (1U << bit))
			index = bit + 1;
	switch (index) {
	case 0: return 'R';
	case 1: return 'S';
	case 2: return 'D';
	case 3: return 'T';
	case 4: return 't';
	case 5: return 'X';
	case 6: return 'Z';
	case 7: return 'P';
	default: return 'I';
	}
}

static __always_inline __s64 positive(__s64 v)
{
	return v < 0 ? 0 : v;
}

/* File + anon + shmem pages, as get_mm_rss() reads them. */
static __always_inline __u64 rss_pages(struct task_struct *t)
{
	struct mm_struct *mm = BPF_CORE_READ(t, mm);
	struct mm_struct___percpu *pc = (void *)mm;
	struct mm_struct___atomic *at = (void *)mm;

	if (!mm)
		return 0;
	if (bpf_core_field_size(pc->rss_stat) > sizeof(struct mm_rss_stat___atomic))
		return positive(BPF_CORE_READ(pc, rss_stat[MM_FILEPAGES].count)) +
		       positive(BPF_CORE_READ(pc, rss_stat[MM_ANONPAGES].count)) +
		       positive(BPF_CORE_READ(pc, rss_stat[MM_SHMEMPAGES].count));
	return positive(BPF_CORE_READ(at, rss_stat.count[MM_FILEPAGES].counter)) +
	       positive(BPF_CORE_READ(at, rss_stat.count[MM_ANONPAGES].counter)) +
	       positive(BPF_CORE_READ(at, rss_stat.count[MM_SHMEMPAGES].counter));
}

static __always_inline __u32 task_flags(struct task_struct *t)
{
	unsigned int pf = BPF_CORE_READ(t, flags);
	__u32 flags = 0;

	if (pf & PF_KTHREAD)
		flags |= PIDMAP_TASK_KTHREAD;
	if (pf & PF_USER_WORKER)
		flags |= PIDMAP_TASK_USER_WORKER;
	if (pf & PF_EXITING)
		flags |= PIDMAP_TASK_EXITING;
	if (pf & PF_FORKNOEXEC)
		flags |= PIDMAP_TASK_FORKNOEXEC;
	return flags;
}

static __always_inline void fill(struct task_struct *t, struct task_record *r)
{
	struct pid___pidfs *pid = (void *)BPF_CORE_READ(t, thread_pid);

	r->mask = TASK_RECORD_MASK;
	r->supported_mask = 0;
	r->pidfs_id = bpf_core_field_exists(pid->ino) ? BPF_CORE_READ(pid, ino) : 0;
	r->tid = BPF_CORE_READ(t, pid);
	r->tgid = BPF_CORE_READ(t, tgid);
	r->ppid = BPF_CORE_READ(t, real_parent, tgid);
	r->ruid = BPF_CORE_READ(t, real_cred, uid.val);
	r->euid = BPF_CORE_READ(t, real_cred, euid.val);
	r->nice = BPF_CORE_READ(t, static_prio) - 120;
	r->priority = BPF_CORE_READ(t, prio) - 100;
	r->policy = BPF_CORE_READ(t, policy);
	r->num_threads = BPF_CORE_READ(t, signal, nr_threads);
	r->task_flags = task_flags(t);
	r->utime_ns = BPF_CORE_READ(t, utime);
	r->stime_ns = BPF_CORE_READ(t, stime);
	r->start_time_ns = BPF_CORE_READ(t, start_boottime);
	r->rss_bytes = rss_pages(t) << PAGE_SHIFT_X86;
	r->min_flt = BPF_CORE_READ(t, min_flt);
	r->maj_flt = BPF_CORE_READ(t, maj_flt);
	r->nvcsw = BPF_CORE_READ(t, nvcsw);
	r->nivcsw = BPF_CORE_READ(t, nivcsw);
	r->state = state_letter(t);
	__builtin_memset(r->__spare, 0, sizeof(r->__spare));
	__builtin_memset(r->comm, 0, sizeof(r->comm));
	bpf_probe_read_kernel_str(r->comm, TASK_COMM_LEN, &t->comm);
}

SEC("iter/task")
int task_records(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct task_record r;

	if (!t)
		return 0;
	fill(t, &r);
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}

/*
 * The open-coded task iterator (6.7): built only when the kernel's BTF
 * has it (the build passes -DTASK_RECORD_SYSCALL_PROG), so the iterator
 * above still builds and loads on older kernels.
 */
#ifdef TASK_RECORD_SYSCALL_PROG
/* The open-coded iterator's output: read by user space through mmap. */
struct task_record records[TASK_RECORD_MAX];
__u32 nr_records;
__u32 overflowed;

extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task,
			     unsigned int flags) __weak __ksym;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __weak __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __weak __ksym;
extern void bpf_rcu_read_lock(void) __weak __ksym;
extern void bpf_rcu_read_unlock(void) __weak __ksym;

SEC("syscall")
int fill_records(void *ctx)
{
	struct bpf_iter_task it;
	struct task_struct *t;

	nr_records = 0;
	overflowed = 0;
	bpf_rcu_read_lock();
	bpf_iter_task_new(&it, NULL, BPF_TASK_ITER_ALL_THREADS);
	while ((t = bpf_iter_task_next(&it))) {
		/* A load from the map each time: the verifier needs no bound
		 * on the loop to prove the index in range. */
		__u32 n = nr_records;

		/* The walk starts at init_task, the idle task (pid 0), which
		 * /proc and iter/task never list. */
		if (BPF_CORE_READ(t, pid) == 0)
			continue;

		if (n >= TASK_RECORD_MAX) {
			overflowed = 1;
			break;
		}
		fill(t, &records[n]);
		nr_records = n + 1;
	}
	bpf_iter_task_destroy(&it);
	bpf_rcu_read_unlock();
	return 0;
}
#endif /* TASK_RECORD_SYSCALL_PROG */

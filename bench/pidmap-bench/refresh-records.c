// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * pidmap-bench: the refresh variants that take records: pidmap_info(2)
 * in our /proc's view, in the default view, and its calls alone; built
 * with PIDMAP_BENCH_BPF, the BPF programs' records of the same layout.
 */
#include "refresh.h"

bool have_info;

static struct pidmap_info infobuf[INFO_CHUNK_MAX];

/*
 * Append @n records of pidmap_info(2) to @rf, as the refresh's records:
 * its nanoseconds in stat's clock ticks and its bytes in pages, divided
 * as /proc divides them.
 */
static void records_from_info(struct refresh *rf, const struct pidmap_info *in, long n)
{
	long i;

	for (i = 0; i < n; i++, in++) {
		struct task_rec *out = rec_push(rf);
		size_t len;

		if ((in->mask & REFRESH_INFO_MASK) != REFRESH_INFO_MASK)
			rf->missing_fields++;
		out->tid = in->tid;
		out->tgid = in->tgid;
		out->ppid = in->ppid;
		out->comm[0] = '\0';
		if (rf->ids_only)
			continue;
		out->state = (char)in->state;
		out->utime = in->utime_ns / ns_per_tick;
		out->stime = in->stime_ns / ns_per_tick;
		out->start_time = in->start_time_ns / ns_per_tick;
		out->rss = (long)(in->rss_bytes / ((unsigned long long)page_kib << 10));
		len = strnlen(in->comm, sizeof(in->comm));
		if (len >= REC_COMM)
			len = REC_COMM - 1;
		memcpy(out->comm, in->comm, len);
		out->comm[len] = '\0';
	}
}

/*
 * One full pidmap_info(2) listing of every task with the refresh's fields,
 * opt.info_chunk records a call, through our /proc's view or (!@procfs_view)
 * the default one; each chunk goes to @rf (NULL: counted only).  Returns
 * the number of records.
 */
static long info_all(struct refresh *rf, bool procfs_view)
{
	struct pidmap_req req = pidmap_req(PIDMAP_SCOPE_TASKS, 0, procfs_view);
	long total = 0, calls = 0;

	req.info_size = sizeof(struct pidmap_info);
	req.info_mask = REFRESH_INFO_MASK;
	if (rf)
		refresh_reset(rf);
	for (;;) {
		long r = sys_pidmap_info(&req, infobuf, (size_t)opt.info_chunk, 0);

		calls++;
		if (r < 0)
			die("pidmap_info(PIDMAP_SCOPE_TASKS, %s view, last_id %llu): %m",
			    procfs_view ? "procfs" : "default",
			    (unsigned long long)req.last_id);
		if (r > opt.info_chunk)
			die("pidmap_info returned %ld > nr %ld", r, opt.info_chunk);
		if (r == 0)
			break;
		if (rf)
			records_from_info(rf, infobuf, r);
		total += r;
		req.last_id = (__u32)infobuf[r - 1].tid;
	}
	if (rf)
		rf->calls = calls;
	return total;
}

/* The records, through our /proc's view. */
long refresh_bulk(void *arg)
{
	return info_all(arg, true);
}

/* The records in the default view. */
long refresh_bulk_default(void *arg)
{
	return info_all(arg, false);
}

/*
 * The calls alone, without turning the records into the refresh's: its
 * cost per record is the kernel's, comparable with the per-id cost of
 * plain pidmap(PIDMAP_SCOPE_TASKS).
 */
long refresh_bulk_call(void *arg)
{
	(void)arg;
	return info_all(NULL, true);
}

/*
 * Probe pidmap_info(2) with an nr-0 call: 0 means present, ENOSYS absent.
 * Anything else is a broken kernel: stop.
 */
void probe_info(void)
{
	struct pidmap_req req = pidmap_req(PIDMAP_SCOPE_TASKS, 0, true);
	long r;

	req.info_size = sizeof(struct pidmap_info);
	req.info_mask = REFRESH_INFO_MASK;
	r = sys_pidmap_info(&req, NULL, 0, 0);
	if (r == 0)
		have_info = true;
	else if (errno != ENOSYS)
		die("pidmap_info probe: expected 0 or ENOSYS, got %ld (%m)", r);
}

#ifdef PIDMAP_BENCH_BPF
/* ---- BPF: iter/task and the open-coded iterator (bpf/task_record.bpf.c) ---- */

/* The BPF records are pidmap_info(2)'s layout (bpf-tasks.c checks each field). */
_Static_assert(sizeof(struct task_record) == sizeof(struct pidmap_info), "record size");
_Static_assert(offsetof(struct task_record, comm) == offsetof(struct pidmap_info, comm),
	       "record comm");
_Static_assert(offsetof(struct task_record, rss_bytes) ==
		       offsetof(struct pidmap_info, rss_bytes), "record rss");

struct task_bpf bpf;
bool have_bpf_iter, have_bpf_syscall;
char bpf_state[96] = "absent: not built with PIDMAP_BENCH_BPF";
static struct task_record bpf_buf[REC_CAP];

/* Load, verify and attach once; the SYSCALL program where the kernel allows it. */
void probe_bpf(void)
{
	if (task_bpf_open(&bpf, true, true)) {
		snprintf(bpf_state, sizeof(bpf_state), "syscall program: %s: %s",
			 bpf.failed_step, strerror(bpf.err));
		task_bpf_close(&bpf);
		if (task_bpf_open(&bpf, true, false)) {
			snprintf(bpf_state, sizeof(bpf_state), "absent: iter/task %s: %s",
				 bpf.failed_step, strerror(bpf.err));
			task_bpf_close(&bpf);
			return;
		}
		have_bpf_iter = true;
		return;
	}
	snprintf(bpf_state, sizeof(bpf_state), "present");
	have_bpf_iter = have_bpf_syscall = true;
}

long refresh_bpf_iter(void *arg)
{
	struct refresh *rf = arg;
	long n;

	refresh_reset(rf);
	n = task_bpf_iter_read(&bpf, bpf_buf, REC_CAP);
	if (n < 0)
		die("%s: reading the iterator: %s", rf->name, strerror((int)-n));
	rf->calls = bpf.reads + 2;	/* bpf(BPF_ITER_CREATE), the reads, close */
	records_from_info(rf, (const struct pidmap_info *)bpf_buf, n);
	return rf->n;
}

long refresh_bpf_syscall(void *arg)
{
	struct refresh *rf = arg;
	const struct task_record *recs = NULL;
	long n;

	refresh_reset(rf);
	n = task_bpf_syscall_run(&bpf, &recs);
	if (n < 0)
		die("%s: BPF_PROG_RUN: %s", rf->name, strerror((int)-n));
	if (n > REC_CAP)
		die("%s: more than %d tasks", rf->name, REC_CAP);
	rf->calls = 1;
	records_from_info(rf, (const struct pidmap_info *)recs, n);
	return rf->n;
}

#endif

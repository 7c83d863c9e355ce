// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * pidsdump: one line per process from procps-ng's library (libproc2's
 * pids API), asking for the items a pidmap_info(2) record carries for
 * both stat and status (VmRSS and the real uid among them). None of ps,
 * top, pgrep and pidof asks for status so narrowly, so this is what
 * exercises the patched library's status-from-record path; identity.sh
 * compares its output with and without the calls.
 *
 *   cc -static -I procps/library/include pidsdump.c procps/library/.libs/libproc2.a
 */
#include <stdio.h>
#include <pids.h>

int main(void)
{
	enum pids_item items[] = {
		PIDS_ID_PID, PIDS_ID_PPID, PIDS_STATE, PIDS_NICE, PIDS_PRIORITY,
		PIDS_NLWP, PIDS_TICS_ALL, PIDS_TICS_BEGAN, PIDS_VM_RSS,
		PIDS_ID_RUID, PIDS_ID_EUID, PIDS_CMD,
	};
	enum { pid, ppid, state, nice, prio, nlwp, tics, began, rss, ruid, euid, cmd };
	struct pids_info *info = NULL;
	struct pids_stack *s;

	if (procps_pids_new(&info, items, sizeof(items) / sizeof(items[0])) < 0) {
		perror("procps_pids_new");
		return 1;
	}
	printf("PID PPID S NI PRI NLWP TICS BEGAN RSS RUID EUID CMD\n");
	while ((s = procps_pids_get(info, PIDS_FETCH_TASKS_ONLY)))
		printf("%d %d %c %d %d %d %llu %llu %lu %u %u %s\n",
		       PIDS_VAL(pid, s_int, s, info), PIDS_VAL(ppid, s_int, s, info),
		       PIDS_VAL(state, s_ch, s, info), PIDS_VAL(nice, s_int, s, info),
		       PIDS_VAL(prio, s_int, s, info), PIDS_VAL(nlwp, s_int, s, info),
		       PIDS_VAL(tics, ull_int, s, info), PIDS_VAL(began, ull_int, s, info),
		       PIDS_VAL(rss, ul_int, s, info), PIDS_VAL(ruid, u_int, s, info),
		       PIDS_VAL(euid, u_int, s, info), PIDS_VAL(cmd, str, s, info));
	procps_pids_unref(&info);
	return 0;
}

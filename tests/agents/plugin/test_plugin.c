/* SPDX-License-Identifier: MIT */
/* A work plugin for the agent tests: burns budget_ns of CPU time and counts its calls in a file
 * named by PD_TEST_PLUGIN_COUNT (appends one line "seq budget_ns" per job). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int pd_test_work(uint64_t seq, int64_t budget_ns);

int pd_test_work(uint64_t seq, int64_t budget_ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	int64_t end = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + budget_ns;
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	while ((int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec < end);
	const char *path = getenv("PD_TEST_PLUGIN_COUNT");
	if (path) {
		FILE *f = fopen(path, "a");
		if (f) {
			fprintf(f, "%llu %lld\n", (unsigned long long)seq, (long long)budget_ns);
			fclose(f);
		}
	}
	return 0;
}

/* Records the scheduling policy each job ran under ("seq policy", 6 = SCHED_DEADLINE) in the file
 * named by PD_TEST_PLUGIN_COUNT, then burns the budget like pd_test_work. */
#include <sched.h>
int pd_test_policy(uint64_t seq, int64_t budget_ns);
int pd_test_policy(uint64_t seq, int64_t budget_ns)
{
	int pol = sched_getscheduler(0);
	const char *path = getenv("PD_TEST_PLUGIN_COUNT");
	if (path) {
		FILE *f = fopen(path, "a");
		if (f) {
			fprintf(f, "%llu %d %d\n", (unsigned long long)seq, pol, sched_getcpu());
			fclose(f);
		}
	}
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	int64_t end = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + budget_ns;
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	while ((int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec < end);
	return 0;
}

/* Always fails: the job is flagged PD_RUNLOG_JOB_FAILED. */
int pd_test_fail(uint64_t seq, int64_t budget_ns);
int pd_test_fail(uint64_t seq, int64_t budget_ns)
{
	(void)seq, (void)budget_ns;
	return 1;
}

/* SPDX-License-Identifier: MIT */
/*
 * --self-test: does this binary work here? Clock, SCHED_DEADLINE availability (informational: a
 * refused setattr is reported, not fatal, so the test also passes under qemu-user for cross builds),
 * libiio, libgpiod. Exit 0 when the binary itself works.
 */
#include "agents/pd_agent.h"

#include <errno.h>
#include <iio.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

struct dl_probe {
	int rc;
};

static void *probe_main(void *arg)
{
	struct dl_probe *p = arg;
	struct pd_agent_sched_attr a = {.size = sizeof(a), .sched_policy = PD_SCHED_DEADLINE,
				  .sched_flags = PD_SCHED_FLAG_RESET_ON_FORK, .sched_runtime = 100 * PD_NS_PER_US,
				  .sched_deadline = 10 * PD_NS_PER_MS, .sched_period = 10 * PD_NS_PER_MS};
	p->rc = pd_agent_sched_setattr(0, &a);
	if (p->rc == 0) {
		struct pd_agent_sched_attr g;
		if (pd_agent_sched_getattr(0, &g) == 0 && g.sched_policy != PD_SCHED_DEADLINE)
			p->rc = -EINVAL;
		pd_agent_sched_set_other(0);
	}
	return NULL;
}

int pd_agent_self_test(FILE *out)
{
	int fails = 0;
	struct utsname u;
	uname(&u);
	fprintf(out, "powerdag-agent %s self-test on %s %s (%s)\n", PD_VERSION, u.sysname, u.release, u.machine);

	struct timespec a, b, res;
	bool clk = clock_gettime(CLOCK_MONOTONIC, &a) == 0 && clock_getres(CLOCK_MONOTONIC, &res) == 0;
	struct timespec d = {0, 1000000};
	nanosleep(&d, NULL);
	clk = clk && clock_gettime(CLOCK_MONOTONIC, &b) == 0 &&
	      (b.tv_sec - a.tv_sec) * PD_NS_PER_S + (b.tv_nsec - a.tv_nsec) >= PD_NS_PER_MS;
	struct timespec ct;
	bool tcpu = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ct) == 0;
	fprintf(out, "  clock:          %s (CLOCK_MONOTONIC resolution %ld ns, thread CPU clock %s)\n", clk ? "ok" : "FAILED",
		(long)res.tv_nsec, tcpu ? "ok" : "missing");
	fails += !clk || !tcpu;

	struct dl_probe p = {0};
	pthread_t th;
	if (pthread_create(&th, NULL, probe_main, &p) == 0) {
		pthread_join(th, NULL);
		fprintf(out, "  sched_setattr:  %s\n",
			p.rc == 0           ? "ok (SCHED_DEADLINE admitted and reverted)"
			: p.rc == -EPERM    ? "refused (EPERM: needs root/CAP_SYS_NICE or an exclusive cpuset)"
			: p.rc == -ENOSYS   ? "missing (ENOSYS: no sched_setattr; emulator or old kernel)"
			: p.rc == -EBUSY    ? "refused (EBUSY: no DL bandwidth left)"
					    : strerror(-p.rc));
	} else {
		fprintf(out, "  threads:        FAILED\n");
		fails++;
	}

	unsigned maj = 0, min = 0;
	char tag[8] = "";
	iio_library_get_version(&maj, &min, tag);
	struct iio_context *ctx = iio_create_local_context();
	int ierr = ctx ? 0 : errno;
	fprintf(out, "  libiio:         %u.%u (%s); local context: %s", maj, min, tag,
		ctx ? "ok" : (ierr == ENOENT ? "no IIO devices on this machine" : strerror(ierr)));
	if (ctx) {
		fprintf(out, " (%u devices)", iio_context_get_devices_count(ctx));
		iio_context_destroy(ctx);
	}
	fprintf(out, "\n");
#ifdef PD_HAVE_GPIOD
	fprintf(out, "  gpio:           libgpiod\n");
#else
	fprintf(out, "  gpio:           not built (no libgpiod)\n");
#endif
#ifdef PD_HAVE_XRT
	fprintf(out, "  fpga:           XRT + FPGA manager\n");
#else
	fprintf(out, "  fpga:           FPGA manager (built without XRT)\n");
#endif
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	fprintf(out, "  cpus:           %ld online\n", ncpu);
	fprintf(out, "self-test %s\n", fails ? "FAILED" : "passed");
	return fails ? 1 : 0;
}

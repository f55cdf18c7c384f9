/* SPDX-License-Identifier: MIT */
/*
 * Accelerator backends. A request runs for the task's latency at the accelerator's OPP; the executor
 * serialises requests per accelerator (non-preemptive FIFO of the model).
 *   emulated       sleeps for the latency (the twin's accelerators; boards without a driver);
 *   fpga_manager   loads bitstreams through /sys/class/fpga_manager/NAME/firmware (Xilinx kernel:
 *                  the write blocks until done; then state must read "operating"), runs emulated;
 *   twin           the board twin's /sys/kernel/powerdag-twin/accel/NAME/run (docs/TWIN.md);
 *   recording      test double;
 *   XRT            only when built with XRT (not packaged for Debian): see PD_HAVE_XRT below.
 */
#include "agents/pd_agent.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sleep_ns(int64_t ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t t = (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec + ns;
	ts.tv_sec = t / PD_NS_PER_S;
	ts.tv_nsec = t % PD_NS_PER_S;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int emu_load(void *ctx, const struct pd_agent_accel *a, int slot, const char *bitstream)
{
	(void)ctx, (void)a, (void)slot, (void)bitstream;
	return 0;
}

static int emu_run(void *ctx, const struct pd_agent_accel *a, const struct pd_agent_task *t, uint64_t seq,
		   int64_t latency_ns)
{
	(void)ctx, (void)a, (void)t, (void)seq;
	sleep_ns(latency_ns);
	return 0;
}

struct pd_agent_accel_ops pd_agent_accel_emulated(void) { return (struct pd_agent_accel_ops){"emulated", emu_load, emu_run, NULL}; }

static int fm_load(void *ctx, const struct pd_agent_accel *a, int slot, const char *bitstream)
{
	const char *sysfs = ctx;
	if (a->kind != PD_ACCEL_FPGA || !a->manager || !bitstream)
		return 0;
	char dir[512], p[600], state[64] = "";
	snprintf(dir, sizeof(dir), "%s/class/fpga_manager/%s", sysfs, a->manager);
	snprintf(p, sizeof(p), "%s/flags", dir);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) { /* partial reconfiguration for a slot of a DFX design (flags are hex) */
		const char *fl = slot > 0 ? "1" : "0";
		if (write(fd, fl, 1) < 0) {
			close(fd);
			return -errno;
		}
		close(fd);
	}
	snprintf(p, sizeof(p), "%s/firmware", dir);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t w = write(fd, bitstream, strlen(bitstream));
	int rc = w < 0 ? -errno : 0;
	close(fd);
	if (rc)
		return rc;
	snprintf(p, sizeof(p), "%s/state", dir);
	FILE *f = fopen(p, "re");
	if (f) {
		if (!fgets(state, sizeof(state), f))
			state[0] = '\0';
		fclose(f);
	}
	return strncmp(state, "operating", 9) == 0 ? 0 : -EIO;
}

struct pd_agent_accel_ops pd_agent_accel_fpga_manager(const char *sysfs_root)
{
	return (struct pd_agent_accel_ops){"fpga_manager", fm_load, emu_run, (void *)sysfs_root};
}

static int twin_run(void *ctx, const struct pd_agent_accel *a, const struct pd_agent_task *t, uint64_t seq,
		    int64_t latency_ns)
{
	const char *sysfs = ctx;
	(void)seq;
	char p[512], req[512];
	snprintf(p, sizeof(p), "%s/kernel/powerdag-twin/accel/%s/run", sysfs, a->name);
	/* GPU latencies go at the top OPP (the twin applies its current OPP); FPGA latencies are fixed */
	int64_t l = a->kind == PD_ACCEL_GPU && t->latency_top_ns > 0 ? t->latency_top_ns : latency_ns;
	int n = snprintf(req, sizeof(req), "latency_ns=%lld", (long long)l);
	if (t->accel_power_uw >= 0)
		n += snprintf(req + n, sizeof(req) - (size_t)n, " power_uw=%lld", (long long)t->accel_power_uw);
	if (t->bitstream)
		snprintf(req + n, sizeof(req) - (size_t)n, " bitstream=%s", t->bitstream);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t w = write(fd, req, strlen(req)); /* blocks for the job's latency */
	int rc = w < 0 ? -errno : 0;
	close(fd);
	return rc;
}

struct pd_agent_accel_ops pd_agent_accel_twin(const char *sysfs_root)
{
	return (struct pd_agent_accel_ops){"twin", fm_load, twin_run, (void *)sysfs_root};
}

struct pd_agent_accel_ops pd_agent_accel_default(const struct pd_agent_spec *s, const char *sysfs_root)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/kernel/powerdag-twin/accel", sysfs_root);
	if (access(p, F_OK) == 0)
		return pd_agent_accel_twin(sysfs_root);
	for (size_t i = 0; i < s->n_accels; i++) {
		if (!s->accels[i].manager)
			continue;
		snprintf(p, sizeof(p), "%s/class/fpga_manager/%s", sysfs_root, s->accels[i].manager);
		if (access(p, F_OK) == 0)
			return pd_agent_accel_fpga_manager(sysfs_root);
	}
	return pd_agent_accel_emulated();
}

static void rec_add(struct pd_agent_accel_rec *r, struct pd_agent_accel_rec_event ev)
{
	size_t i = atomic_fetch_add(&r->n, 1);
	if (i < r->cap)
		r->ev[i] = ev;
}

static int rec_load(void *ctx, const struct pd_agent_accel *a, int slot, const char *bitstream)
{
	(void)a, (void)bitstream;
	rec_add(ctx, (struct pd_agent_accel_rec_event){'L', 0, 0, (uint64_t)slot, 0});
	return 0;
}

static int rec_run(void *ctx, const struct pd_agent_accel *a, const struct pd_agent_task *t, uint64_t seq,
		   int64_t latency_ns)
{
	struct pd_agent_accel_rec *r = ctx;
	(void)a;
	rec_add(r, (struct pd_agent_accel_rec_event){'R', t->accel, r->tasks0 ? (size_t)(t - r->tasks0) : 0, seq, latency_ns});
	sleep_ns(latency_ns);
	return 0;
}

struct pd_agent_accel_ops pd_agent_accel_recording(struct pd_agent_accel_rec *rec)
{
	return (struct pd_agent_accel_ops){"recording", rec_load, rec_run, rec};
}

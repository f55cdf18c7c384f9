/* SPDX-License-Identifier: MIT */
#include "helper_agents.h"
#include "pd_test.h"

#include <dirent.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int pd_th_run(const char *plan, int64_t duration_ms, struct pd_agent_opts *o, const char **out_dir, pd_err *e)
{
	static char dir[512];
	snprintf(dir, sizeof(dir), "%s/run", pd_test_tmpdir());
	struct pd_agent_opts def;
	if (!o) {
		pd_agent_opts_init(&def);
		def.no_power = true;
		o = &def;
	}
	o->plan_path = plan;
	o->out_dir = dir;
	o->duration_ns = duration_ms * PD_NS_PER_MS;
	if (out_dir)
		*out_dir = dir;
	return pd_agent_run(o, e);
}

pd_runlog *pd_th_log(const char *dir)
{
	char p[600];
	snprintf(p, sizeof(p), "%s/run.pdlog", dir);
	pd_err e = {0};
	pd_runlog *r = pd_runlog_open(p, &e);
	ck_assert_msg(r != NULL, "%s", e.msg);
	return r;
}

/* the 8th field of the "cpu" line of /proc/stat, in USER_HZ ticks */
long long pd_th_steal_ms(void)
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "re");
	if (!f)
		return 0;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &v[6], &v[7]) != 8)
		v[7] = 0;
	fclose(f);
	return (long long)(v[7] * 1000 / (unsigned long long)sysconf(_SC_CLK_TCK));
}

bool pd_th_can_dl(void)
{
	return geteuid() == 0 && access("/sys/fs/cgroup/cpuset/cpuset.cpu_exclusive", W_OK) == 0;
}

size_t pd_th_instances(const pd_runlog *r, const char *dag, size_t *misses, int64_t *max_response_ns)
{
	size_t n = 0, m = 0;
	int64_t mx = 0;
	for (size_t i = 0; i < pd_runlog_instance_count(r); i++) {
		const struct pd_runlog_instance_rec *in = pd_runlog_instance(r, i);
		if (strcmp(pd_runlog_dag(r, in->dag)->name, dag) != 0)
			continue;
		n++;
		m += in->miss;
		if (in->response_ns > mx)
			mx = in->response_ns;
	}
	if (misses)
		*misses = m;
	if (max_response_ns)
		*max_response_ns = mx;
	return n;
}

void pd_th_describe_misses(const pd_runlog *r)
{
	for (size_t i = 0; i < pd_runlog_instance_count(r); i++) {
		const struct pd_runlog_instance_rec *in = pd_runlog_instance(r, i);
		if (!in->miss)
			continue;
		fprintf(stderr, "  missed: dag %s instance %llu response %.3f ms\n", pd_runlog_dag(r, in->dag)->name,
			(unsigned long long)in->seq, (double)in->response_ns / 1e6);
		for (size_t j = 0; j < pd_runlog_job_count(r); j++) {
			const struct pd_runlog_job_rec *jb = pd_runlog_job(r, j);
			const struct pd_runlog_task_info *t = pd_runlog_task(r, jb->task);
			if (jb->seq != in->seq || strcmp(t->dag, pd_runlog_dag(r, in->dag)->name) != 0)
				continue;
			fprintf(stderr, "    job %s: start +%.3f ms, wall %.3f ms, cpu %.3f ms, runtime %.3f ms\n", t->name,
				(double)(jb->start_ns - jb->release_ns) / 1e6, (double)(jb->end_ns - jb->start_ns) / 1e6,
				(double)jb->cpu_ns / 1e6, (double)t->runtime_ns / 1e6);
		}
	}
	const struct pd_runlog_job_rec *worst = NULL; /* the stall that cost most: often in an instance that met */
	for (size_t j = 0; j < pd_runlog_job_count(r); j++) {
		const struct pd_runlog_job_rec *jb = pd_runlog_job(r, j);
		if (!(jb->flags & PD_RUNLOG_JOB_SKIPPED) && (!worst || jb->cpu_ns - jb->demand_ns > worst->cpu_ns - worst->demand_ns))
			worst = jb;
	}
	if (worst)
		fprintf(stderr, "  most CPU time beyond demand: job %s instance %llu, cpu %.3f ms for %.3f ms of work\n",
			pd_runlog_task(r, worst->task)->name, (unsigned long long)worst->seq, (double)worst->cpu_ns / 1e6,
			(double)worst->demand_ns / 1e6);
}

size_t pd_th_all_misses(const pd_runlog *r)
{
	size_t m = 0;
	for (size_t i = 0; i < pd_runlog_instance_count(r); i++)
		m += pd_runlog_instance(r, i)->miss;
	return m;
}

void pd_th_judge(const pd_runlog *r, const char *dag, long long steal_ms, int64_t run_ms, struct pd_th_verdict *v)
{
	*v = (struct pd_th_verdict){.steal_ms = steal_ms, .run_ms = run_ms};
	for (size_t j = 0; j < pd_runlog_job_count(r); j++) {
		const struct pd_runlog_job_rec *jb = pd_runlog_job(r, j);
		const struct pd_runlog_task_info *t = pd_runlog_task(r, jb->task);
		bool busy = t->work && strcmp(t->work, "builtin:busy") == 0;
		bool stalled = busy && !(jb->flags & PD_RUNLOG_JOB_SKIPPED) && jb->cpu_ns > jb->demand_ns + 200 * PD_NS_PER_US;
		v->stalls += stalled;
		/* A stall charged to the thread beyond its runtime is a debt the kernel's CBS makes it pay
		 * back: the thread stays throttled while replenishments (one runtime per period) bring its
		 * runtime above zero (replenish_dl_entity), one missed instance per period */
		if (stalled && t->runtime_ns > 0 && jb->cpu_ns > t->runtime_ns) {
			size_t held = (size_t)((jb->cpu_ns - t->runtime_ns + t->runtime_ns - 1) / t->runtime_ns);
			if (held > v->debt_periods)
				v->debt_periods = held;
		}
	}
	v->quiet = steal_ms * 200 <= run_ms && v->stalls == 0;
	for (size_t g = 0; g < pd_runlog_dag_count(r); g++) {
		if (dag && strcmp(pd_runlog_dag(r, g)->name, dag) != 0)
			continue;
		uint64_t top = 0; /* instances are recorded as they complete, not in order: index by seq */
		for (size_t i = 0; i < pd_runlog_instance_count(r); i++)
			if (pd_runlog_instance(r, i)->dag == g && pd_runlog_instance(r, i)->seq + 1 > top)
				top = pd_runlog_instance(r, i)->seq + 1;
		bool *missed = calloc(top + 1, sizeof(*missed));
		ck_assert_ptr_nonnull(missed);
		for (size_t i = 0; i < pd_runlog_instance_count(r); i++) {
			const struct pd_runlog_instance_rec *in = pd_runlog_instance(r, i);
			if (in->dag != g)
				continue;
			v->instances++;
			v->misses += in->miss;
			missed[in->seq] |= in->miss != 0;
		}
		size_t cur = 0;
		for (uint64_t k = 0; k < top; k++) {
			cur = missed[k] ? cur + 1 : 0;
			if (cur > v->streak)
				v->streak = cur;
		}
		free(missed);
	}
	/* noisy: 10 % of the instances, plus twice the share of the CPUs' time the host stole (an
	 * instance that overlaps a stall may miss, and so may the one its re-anchoring abandons) */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double stolen = run_ms > 0 ? (double)steal_ms / ((double)run_ms * (double)(ncpu > 0 ? ncpu : 1)) : 0;
	double allowed = (0.10 + 2.0 * stolen) * (double)v->instances;
	v->ok = v->quiet ? v->misses == 0 : (double)v->misses <= allowed && v->streak <= PD_TH_MAX_STREAK + v->debt_periods;
}

int pd_th_run_steady(const char *plan, int64_t duration_ms, struct pd_agent_opts *o, const char **out_dir,
		     pd_err *e, int runs, void (*reset)(void *), void *arg, struct pd_th_verdict *v)
{
	struct pd_agent_opts keep = *o; /* pd_th_run fills in paths and the duration; a repeat starts anew */
	int rc = 0;
	for (int attempt = 0; attempt < runs; attempt++) {
		if (attempt && reset)
			reset(arg);
		*o = keep;
		long long steal0 = pd_th_steal_ms();
		rc = pd_th_run(plan, duration_ms, o, out_dir, e);
		if (rc)
			return rc;
		pd_runlog *r = pd_th_log(*out_dir);
		pd_th_judge(r, NULL, pd_th_steal_ms() - steal0, duration_ms, v);
		if (v->misses)
			fprintf(stderr, "run %d (%s): %zu of %zu instances missed, longest streak %zu, %lld ms of stolen CPU time, %zu stalls (longest throttles %zu periods)%s\n",
				attempt + 1, v->quiet ? "quiet" : "noisy", v->misses, v->instances, v->streak, v->steal_ms, v->stalls, v->debt_periods,
				v->ok ? "" : attempt + 1 < runs ? ": repeating" : ": not as promised");
		if (v->misses)
			pd_th_describe_misses(r);
		pd_runlog_free(r);
		if (v->ok)
			break;
	}
	return rc;
}

long pd_th_task(const pd_runlog *r, const char *dag, const char *task)
{
	for (size_t i = 0; i < pd_runlog_task_count(r); i++)
		if (strcmp(pd_runlog_task(r, i)->dag, dag) == 0 && strcmp(pd_runlog_task(r, i)->name, task) == 0)
			return (long)i;
	return -1;
}

int pd_th_cpuset_leftovers(void)
{
	DIR *d = opendir("/sys/fs/cgroup/cpuset");
	if (!d)
		return 0;
	int n = 0;
	struct dirent *de;
	char self[64];
	snprintf(self, sizeof(self), "powerdag-agent-%d", (int)getpid());
	while ((de = readdir(d)))
		n += strcmp(de->d_name, self) == 0;
	closedir(d);
	return n;
}

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>

static void wfile(const char *dir, const char *name, const char *v)
{
	char p[700];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s\n", v);
	fclose(f);
}

void pd_th_fake_iio(const char *root)
{
	char p[600];
	snprintf(p, sizeof(p), "%s/bus", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/bus/.staging", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/bus/iio", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/bus/iio/devices", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/bus/iio/devices/iio:device0", root);
	mkdir(p, 0755);
	wfile(p, "name", "ina226");
	wfile(p, "label", "ina226-u76");
	wfile(p, "in_voltage0_raw", "3152");
	wfile(p, "in_voltage0_scale", "0.002500000");
	wfile(p, "in_voltage1_raw", "680");
	wfile(p, "in_voltage1_scale", "1.250000000");
	wfile(p, "in_power2_raw", "107");
	wfile(p, "in_power2_scale", "12.500000000");
	wfile(p, "in_current3_raw", "3152");
	wfile(p, "in_current3_scale", "0.500000000");
	wfile(p, "in_sampling_frequency", "114");
	snprintf(p, sizeof(p), "%s/bus/iio/devices/iio:device1", root);
	mkdir(p, 0755);
	wfile(p, "name", "ina3221x");
	wfile(p, "in_power0_input", "2500");
	wfile(p, "in_current0_input", "500");
	wfile(p, "in_voltage0_input", "5000");
}

void pd_th_fake_set(const char *root, const char *dev, const char *file, const char *value)
{
	char st[600], dst[700];
	snprintf(st, sizeof(st), "%s/bus/.staging/%s", root, file);
	FILE *f = fopen(st, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s\n", value);
	fclose(f);
	snprintf(dst, sizeof(dst), "%s/bus/iio/devices/%s/%s", root, dev, file);
	ck_assert_int_eq(rename(st, dst), 0);
}

void pd_th_enter_fake_sys(const char *root)
{
	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	char p[600];
	snprintf(p, sizeof(p), "%s/bus", root);
	ck_assert_int_eq(mount(p, "/sys/bus", NULL, MS_BIND, NULL), 0);
}

#include <fcntl.h>
#include <sys/file.h>

int pd_th_root_balance_quiet(void)
{
	int fd = open("/run/powerdag-agent.cpuset.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		flock(fd, LOCK_EX);
	if (access("/run/powerdag-agent.cpuset.balance", F_OK) == 0) { /* a killed agent's, not yet repaired */
		if (fd >= 0)
			close(fd);
		return PD_TH_BALANCE_PENDING;
	}
	FILE *f = fopen("/sys/fs/cgroup/cpuset/cpuset.sched_load_balance", "re");
	int v = -1;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	if (fd >= 0)
		close(fd);
	return v;
}

bool pd_th_wait_file(const char *path, int timeout_ms)
{
	for (int t = 0; t < timeout_ms; t += 20) {
		if (access(path, F_OK) == 0)
			return true;
		usleep(20000);
	}
	return false;
}

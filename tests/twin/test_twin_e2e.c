/* SPDX-License-Identifier: MIT */
/*
 * Longer than ~600 lines: one suite per command or component; its cases share its fixtures.
 *
 * End-to-end test of the board twin (slow, serial, needs root): `powerdag twin up` in a private
 * state dir / netns / subnet, then talk to it as the deployer (libssh with strict host-key
 * checking, SFTP) and the agent (libiio network backend) do, check that the rails follow the
 * platform power model, and that `twin down` leaves nothing behind.
 *
 * Skips (exit 0 with a SKIP line) when not root or when sshd / iiod / /dev/fuse are missing.
 * The binary under test: $POWERDAG, else $PD_BINARY_DIR/powerdag.
 */
#include "pd_test.h"
#include "platforms/pd_platform.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <iio.h>
#include <jansson.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SUBNET "10.213.79.0"
#define ADDR "10.213.79.2"

static char state[512], powerdag[512], netns[64]; /* netns: pdtwin-e2e-PID, so a crashed run cannot block the next */

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static int twin(char *out, size_t n, const char *args)
{
	return pd_test_run(out, n, "%s twin %s --state %s 2>/dev/null", powerdag, args, state);
}

static json_t *status_json(void)
{
	static char out[8192];
	if (twin(out, sizeof(out), "status --json") != 0)
		return NULL;
	return json_loads(out, 0, NULL);
}

static const char *jstr(json_t *j, const char *k)
{
	const char *s = json_string_value(json_object_get(j, k));
	return s ? s : "";
}

/* ---------------------------------------------------------------- a minimal private SSH client */

static ssh_session ssh_open(const char *known_hosts, const char *identity)
{
	ssh_session s = ssh_new();
	unsigned port = 22;
	long timeout = 10;
	int verbosity = SSH_LOG_NOLOG;
	ssh_options_set(s, SSH_OPTIONS_HOST, ADDR);
	ssh_options_set(s, SSH_OPTIONS_PORT, &port);
	ssh_options_set(s, SSH_OPTIONS_USER, "root");
	ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, known_hosts);
	ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout);
	ssh_options_set(s, SSH_OPTIONS_LOG_VERBOSITY, &verbosity);
	ssh_key key = NULL;
	if (ssh_connect(s) != SSH_OK || ssh_session_is_known_server(s) != SSH_KNOWN_HOSTS_OK ||
	    ssh_pki_import_privkey_file(identity, NULL, NULL, NULL, &key) != SSH_OK ||
	    ssh_userauth_publickey(s, NULL, key) != SSH_AUTH_SUCCESS) {
		ssh_key_free(key);
		ssh_disconnect(s);
		ssh_free(s);
		return NULL;
	}
	ssh_key_free(key);
	return s;
}

static void ssh_close(ssh_session s)
{
	ssh_disconnect(s);
	ssh_free(s);
}

/* Runs cmd on the board; stdout into out; returns the exit status (-1 on transport error). */
static int ssh_exec(ssh_session s, const char *cmd, char *out, size_t n)
{
	ssh_channel ch = ssh_channel_new(s);
	if (!ch || ssh_channel_open_session(ch) != SSH_OK || ssh_channel_request_exec(ch, cmd) != SSH_OK) {
		ssh_channel_free(ch);
		return -1;
	}
	size_t got = 0;
	char sink[256];
	while (!ssh_channel_is_eof(ch)) {
		int r = ssh_channel_read_timeout(ch, out + got, (uint32_t)(n - 1 - got), 0, 10000);
		if (r > 0)
			got += (size_t)r;
		if (r < 0 || got >= n - 1)
			break;
		ssh_channel_read_nonblocking(ch, sink, sizeof(sink), 1); /* drain stderr */
	}
	out[got] = 0;
	ssh_channel_send_eof(ch);
	ssh_channel_close(ch);
	int st = ssh_channel_get_exit_status(ch);
	ssh_channel_free(ch);
	return st;
}

/* SFTP store, as the deployer writes sysfs files: returns 0 or the SFTP error. */
static int sftp_store(ssh_session s, const char *path, const char *text)
{
	sftp_session sf = sftp_new(s);
	if (!sf || sftp_init(sf) != SSH_OK)
		return -1;
	int rc = 0;
	sftp_file f = sftp_open(sf, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (!f)
		rc = sftp_get_error(sf) ? sftp_get_error(sf) : -1;
	else if (sftp_write(f, text, strlen(text)) != (ssize_t)strlen(text))
		rc = sftp_get_error(sf) ? sftp_get_error(sf) : -1;
	if (f && sftp_close(f) != SSH_OK && rc == 0)
		rc = -1;
	sftp_free(sf);
	return rc;
}

/* ---------------------------------------------------------------- rails and load */

static double rail_w(const char *label)
{
	char uri[64];
	snprintf(uri, sizeof(uri), "ip:%s", ADDR); /* libiio 0.24 may write into the URI */
	struct iio_context *ctx = iio_create_context_from_uri(uri);
	if (!ctx)
		return -1;
	double raw = -1, scale = -1;
	struct iio_device *d = iio_context_find_device(ctx, label);
	struct iio_channel *c = d ? iio_device_find_channel(d, "power2", false) : NULL;
	if (!c || iio_channel_attr_read_double(c, "raw", &raw) != 0 || iio_channel_attr_read_double(c, "scale", &scale) != 0)
		raw = -1;
	iio_context_destroy(ctx);
	return raw < 0 ? -1 : raw * scale / 1000.0; /* mW -> W */
}

/* Busy jiffies fraction of cpu between two /proc/stat reads. */
static void cpu_jiffies(int cpu, unsigned long long *busy, unsigned long long *total)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[512], want[16];
	snprintf(want, sizeof(want), "cpu%d ", cpu);
	*busy = *total = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long v[8] = {0};
		if (strncmp(line, want, strlen(want)) != 0)
			continue;
		sscanf(line + strlen(want), "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
		       &v[5], &v[6], &v[7]);
		for (int i = 0; i < 8; i++)
			*total += v[i];
		*busy = *total - v[3] - v[4];
	}
	if (f)
		fclose(f);
}

/* Mean rail power over ~1 s and the CPU's busy fraction over the same span (the twin averages
 * over its last 250 ms, so the /proc/stat span starts that much earlier). */
static double measure(const char *label, int cpu, double *util)
{
	unsigned long long b0, t0, b1, t1;
	cpu_jiffies(cpu, &b0, &t0);
	sleep_ms(250);
	double sum = 0;
	int n = 0;
	for (int i = 0; i < 10; i++) {
		double w = rail_w(label);
		ck_assert_msg(w >= 0, "cannot read rail %s over libiio", label);
		sum += w, n++;
		sleep_ms(80);
	}
	cpu_jiffies(cpu, &b1, &t1);
	*util = t1 > t0 ? (double)(b1 - b0) / (double)(t1 - t0) : 0;
	return sum / n;
}

/* The board's cpuacct cgroup (twin/twin_impl.h: twin_acct_dir), when the host has one: the rails
 * then count only work started on the board, so the load joins it, as SSH sessions do. */
static bool board_cgroup(char *dir, size_t n)
{
	int k = snprintf(dir, n, "/sys/fs/cgroup/cpuacct/powerdag-twin.%s", netns);
	struct stat st;
	return k > 0 && (size_t)k < n && stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

static pid_t burn(int cpu)
{
	char cg[400];
	bool in_board = board_cgroup(cg, sizeof(cg));
	pid_t p = fork();
	if (p == 0) {
		if (in_board) {
			char procs[500];
			snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
			FILE *f = fopen(procs, "we");
			if (!f || fprintf(f, "%d", (int)getpid()) < 0 || fclose(f) != 0)
				_exit(1);
		}
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
		for (volatile unsigned long x = 0;; x++)
			;
	}
	return p;
}

static void stop(pid_t p)
{
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

static pd_platform *twin_platform(void)
{
	json_t *j = status_json();
	ck_assert_ptr_nonnull(j);
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *p = pd_platform_load_file(jstr(j, "platform"), &d);
	pd_diags_print(&d, stderr);
	pd_diags_free(&d);
	json_decref(j);
	ck_assert_ptr_nonnull(p);
	return p;
}

static ssh_session board(void)
{
	json_t *j = status_json();
	ck_assert_ptr_nonnull(j);
	ssh_session s = ssh_open(jstr(j, "known_hosts"), jstr(j, "identity"));
	json_decref(j);
	ck_assert_msg(s != NULL, "cannot log in to the twin with its known_hosts and identity");
	return s;
}

/* The fastest island (largest capacity): its rail shows the largest power swings. */
static size_t big_island(const pd_platform *p)
{
	size_t best = 0;
	for (size_t k = 1; k < pd_platform_island_count(p); k++)
		if (pd_platform_island(p, k)->capacity > pd_platform_island(p, best)->capacity)
			best = k;
	return best;
}

/* ---------------------------------------------------------------- fixture */

static void setup(void)
{
	char cmd[2048], out[512];
	snprintf(state, sizeof(state), "%s/state", pd_test_tmpdir());
	snprintf(netns, sizeof(netns), "pdtwin-e2e-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "%s twin up --netns %s --subnet %s --state %s", powerdag, netns, SUBNET, state);
	int rc = pd_test_run(out, sizeof(out), "%s", cmd); /* its stderr stays visible */
	if (rc != 0)
		fprintf(stderr, "twin e2e: `%s` failed (%d)\n", cmd, rc);
}

static void teardown(void)
{
	twin(NULL, 0, "down");
}

/* ---------------------------------------------------------------- tests */

START_TEST(status_and_refusal)
{
	json_t *j = status_json();
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(jstr(j, "uri"), "ssh://root@" ADDR ":22");
	ck_assert_str_eq(jstr(j, "iio_uri"), "ip:" ADDR);
	ck_assert(json_is_true(json_object_get(j, "running")));
	const char *files[] = {"platform", "identity", "known_hosts"};
	for (int i = 0; i < 3; i++) {
		struct stat st;
		ck_assert_msg(stat(jstr(j, files[i]), &st) == 0, "%s missing", files[i]);
	}
	json_t *pids = json_object_get(j, "pids");
	ck_assert_int_gt(json_integer_value(json_object_get(pids, "daemon")), 1);
	ck_assert_int_gt(json_integer_value(json_object_get(pids, "sshd")), 1);
	ck_assert_int_gt(json_integer_value(json_object_get(pids, "iiod")), 1);
	json_decref(j);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "up --netns %s --subnet %s", netns, SUBNET);
	ck_assert_int_eq(twin(NULL, 0, cmd), 3); /* twice: refused */
}
END_TEST

START_TEST(ssh_strict_host_key)
{
	json_t *j = status_json();
	ck_assert_ptr_nonnull(j);
	/* the identity's public key is not the host key: a known_hosts naming it must be refused */
	char pub[600], *text = NULL, wrong[700];
	snprintf(pub, sizeof(pub), "%s.pub", jstr(j, "identity"));
	size_t len;
	ck_assert_int_eq(pd_read_file(pub, &text, &len, 0, NULL), 0);
	char type[64], key[256];
	ck_assert_int_eq(sscanf(text, "%63s %255s", type, key), 2);
	free(text);
	snprintf(wrong, sizeof(wrong), "%s %s %s\n", ADDR, type, key);
	const char *kh = pd_test_write(pd_test_tmpdir(), "known_hosts", wrong);
	ck_assert_ptr_null(ssh_open(kh, jstr(j, "identity")));
	json_decref(j);

	pd_platform *p = twin_platform();
	ssh_session s = board();
	char out[4096], cmd[512];
	const struct pd_island *isl = pd_platform_island(p, 0);
	snprintf(cmd, sizeof(cmd), "cat /sys/devices/system/cpu/cpufreq/%s/related_cpus", isl->policy);
	ck_assert_int_eq(ssh_exec(s, cmd, out, sizeof(out)), 0);
	ck_assert_int_eq(atoi(out), isl->cpus[0]);
	snprintf(cmd, sizeof(cmd), "cat /sys/devices/system/cpu/cpufreq/%s/scaling_available_frequencies", isl->policy);
	ck_assert_int_eq(ssh_exec(s, cmd, out, sizeof(out)), 0);
	ck_assert_int_eq(atoll(out), isl->opps[0].freq_khz);
	ck_assert_int_eq(ssh_exec(s, "cat /sys/kernel/debug/sched/fair_server/cpu0/runtime", out, sizeof(out)), 0);
	ck_assert_int_eq(atoll(out), 50000000);
	ssh_close(s);
	pd_platform_free(p);
}
END_TEST

START_TEST(iio_sees_rails)
{
	pd_platform *p = twin_platform();
	char uri[64];
	snprintf(uri, sizeof(uri), "ip:%s", ADDR);
	struct iio_context *ctx = iio_create_context_from_uri(uri);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_uint_eq(iio_context_get_devices_count(ctx), pd_platform_sensor_count(p));
	for (size_t i = 0; i < pd_platform_sensor_count(p); i++) {
		const struct pd_sensor *sn = pd_platform_sensor(p, i);
		ck_assert_str_eq(sn->uri, uri);
		struct iio_device *d = iio_context_find_device(ctx, sn->device);
		ck_assert_msg(d != NULL, "device %s not served", sn->device);
		ck_assert_str_eq(iio_device_get_name(d), "ina226");
		ck_assert_ptr_nonnull(iio_device_find_channel(d, sn->channel, false));
	}
	iio_context_destroy(ctx);
	/* the board rail is the platform's base power */
	ck_assert_double_eq_tol(rail_w("ina226-board"), (double)pd_platform_base_uw(p) / 1e6, 0.01);
	pd_platform_free(p);
}
END_TEST

static void set_cpufreq(ssh_session s, const char *policy, const char *file, const char *value, int want_rc)
{
	char cmd[512], out[256];
	snprintf(cmd, sizeof(cmd), "echo %s > /sys/devices/system/cpu/cpufreq/%s/%s", value, policy, file);
	int rc = ssh_exec(s, cmd, out, sizeof(out));
	if (want_rc == 0)
		ck_assert_msg(rc == 0, "%s: exit %d", cmd, rc);
	else
		ck_assert_msg(rc != 0, "%s: accepted", cmd);
}

/* Summed busy fraction of processes over a measure() of an island rail: with the board's cgroup
 * the rail counts only them, and on a shared host they may not get their whole CPU. */
struct cpu_clocks {
	clockid_t clk[64];
	struct timespec c[64], w;
	size_t n;
};

static void clocks_start(struct cpu_clocks *k, const pid_t *pids, size_t n)
{
	k->n = n;
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(clock_getcpuclockid(pids[i], &k->clk[i]), 0);
		clock_gettime(k->clk[i], &k->c[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &k->w);
}

static double ts_d(struct timespec a, struct timespec b)
{
	return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

static double clocks_util(const struct cpu_clocks *k)
{
	struct timespec w, c;
	double u = 0;
	clock_gettime(CLOCK_MONOTONIC, &w);
	for (size_t i = 0; i < k->n; i++) {
		clock_gettime(k->clk[i], &c);
		u += ts_d(k->c[i], c);
	}
	return u / ts_d(k->w, w);
}

START_TEST(frequency_changes_power_as_modelled)
{
	pd_platform *p = twin_platform();
	size_t k = big_island(p);
	const struct pd_island *isl = pd_platform_island(p, k);
	const struct pd_opp *lo = &isl->opps[0], *hi = &isl->opps[isl->n_opps - 1];
	char label[160], f[32];
	snprintf(label, sizeof(label), "ina226-%s", isl->name);
	ssh_session s = board();
	set_cpufreq(s, isl->policy, "scaling_governor", "userspace", 0);
	snprintf(f, sizeof(f), "%lld", (long long)lo->freq_khz);
	set_cpufreq(s, isl->policy, "scaling_setspeed", f, 0);
	/* every core of the island busy: the island draws n * P_busy whatever else the host runs */
	pid_t burners[64];
	for (size_t c = 0; c < isl->n_cpus; c++)
		burners[c] = burn(isl->cpus[c]);
	sleep_ms(400);
	double u1, u2;
	struct cpu_clocks k1, k2;
	clocks_start(&k1, burners, isl->n_cpus);
	double p1 = measure(label, isl->cpus[0], &u1);
	double b1 = clocks_util(&k1);
	snprintf(f, sizeof(f), "%lld", (long long)hi->freq_khz);
	set_cpufreq(s, isl->policy, "scaling_setspeed", f, 0);
	sleep_ms(300); /* the rail averages the last 250 ms */
	clocks_start(&k2, burners, isl->n_cpus);
	double p2 = measure(label, isl->cpus[0], &u2);
	double b2 = clocks_util(&k2);
	for (size_t c = 0; c < isl->n_cpus; c++)
		stop(burners[c]);
	char out[64], cmd[256];
	snprintf(cmd, sizeof(cmd), "cat /sys/devices/system/cpu/cpufreq/%s/cpuinfo_cur_freq", isl->policy);
	ck_assert_int_eq(ssh_exec(s, cmd, out, sizeof(out)), 0);
	ck_assert_int_eq(atoll(out), hi->freq_khz);
	set_cpufreq(s, isl->policy, "scaling_governor", "performance", 0);
	ssh_close(s);
	char cg[400];
	double n = (double)isl->n_cpus;
	/* without the board's cgroup every host process counts: the island is fully busy */
	if (!board_cgroup(cg, sizeof(cg)))
		b1 = b2 = n;
	double want = (pd_platform_island_power_w(isl, isl->n_opps - 1, b2) - pd_platform_island_power_w(isl, 0, b1));
	fprintf(stderr, "twin e2e: %s %lld->%lld kHz busy: %.4f W -> %.4f W (delta %.4f W, model %.4f W, util %.3f/%.3f, "
		"load %.3f/%.3f)\n", isl->name, (long long)lo->freq_khz, (long long)hi->freq_khz, p1, p2, p2 - p1, want, u1, u2,
		b1, b2);
	ck_assert_msg(fabs((p2 - p1) - want) <= 0.02 * want, "power change %.4f W, model %.4f W", p2 - p1, want);
	pd_platform_free(p);
}
END_TEST

START_TEST(invalid_writes_refused)
{
	pd_platform *p = twin_platform();
	const struct pd_island *isl = pd_platform_island(p, big_island(p));
	ssh_session s = board();
	char path[256], f[32];
	snprintf(f, sizeof(f), "%lld", (long long)isl->opps[0].freq_khz);
	set_cpufreq(s, isl->policy, "scaling_governor", "performance", 0);
	set_cpufreq(s, isl->policy, "scaling_setspeed", f, 1); /* not under userspace */
	set_cpufreq(s, isl->policy, "scaling_governor", "ondemand-nonexistent", 1);
	set_cpufreq(s, isl->policy, "scaling_governor", "userspace", 0);
	set_cpufreq(s, isl->policy, "scaling_setspeed", "123457", 1); /* not an OPP */
	set_cpufreq(s, isl->policy, "scaling_setspeed", "fast", 1);
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpufreq/%s/scaling_setspeed", isl->policy);
	ck_assert_int_ne(sftp_store(s, path, "123457\n"), 0); /* the deployer's SFTP path too */
	ck_assert_int_eq(sftp_store(s, path, f), 0);
	char out[64], cmd[300];
	snprintf(cmd, sizeof(cmd), "cat %s", path);
	ck_assert_int_eq(ssh_exec(s, cmd, out, sizeof(out)), 0);
	ck_assert_int_eq(atoll(out), isl->opps[0].freq_khz);
	ck_assert_int_ne(sftp_store(s, "/sys/kernel/debug/sched/fair_server/cpu0/runtime", "2000000000"), 0);
	ck_assert_int_eq(ssh_exec(s, "echo 1200000000 > /sys/kernel/debug/sched/fair_server/cpu0/period", out,
				  sizeof(out)), 0);
	set_cpufreq(s, isl->policy, "scaling_governor", "performance", 0);
	ssh_close(s);
	pd_platform_free(p);
}
END_TEST

/* The island whose (first) host CPU is the least busy right now: the host is shared. */
static size_t quietest_island(const pd_platform *p)
{
	unsigned long long b0[64], t0[64], b1, t1;
	size_t n = pd_platform_island_count(p), best = 0;
	double best_u = 2;
	for (size_t k = 0; k < n && k < 64; k++)
		cpu_jiffies(pd_platform_island(p, k)->cpus[0], &b0[k], &t0[k]);
	sleep_ms(300);
	for (size_t k = 0; k < n && k < 64; k++) {
		cpu_jiffies(pd_platform_island(p, k)->cpus[0], &b1, &t1);
		double u = t1 > t0[k] ? (double)(b1 - b0[k]) / (double)(t1 - t0[k]) : 1;
		if (u < best_u)
			best_u = u, best = k;
	}
	return best;
}

START_TEST(cpu_load_raises_island_rail)
{
	pd_platform *p = twin_platform();
	size_t k = quietest_island(p);
	const struct pd_island *isl = pd_platform_island(p, k);
	const struct pd_opp *top = &isl->opps[isl->n_opps - 1]; /* performance governor */
	char label[160];
	snprintf(label, sizeof(label), "ina226-%s", isl->name);
	double u0, u1;
	double idle = measure(label, isl->cpus[0], &u0);
	if (u0 > 0.10) {
		/* The host is real and shared: with other work on every CPU the rise cannot be measured
		 * (ctest runs _e2e tests serially, so this happens only on a machine busy elsewhere). */
		printf("twin e2e: SKIP load check: host CPU %d is %.0f%% busy without our load\n", isl->cpus[0], 100 * u0);
		pd_platform_free(p);
		return;
	}
	char cg[400];
	bool in_board = board_cgroup(cg, sizeof(cg));
	pid_t b = burn(isl->cpus[0]);
	sleep_ms(300);
	clockid_t bclk;
	struct timespec c0, c1, w0, w1;
	ck_assert_int_eq(clock_getcpuclockid(b, &bclk), 0);
	clock_gettime(bclk, &c0), clock_gettime(CLOCK_MONOTONIC, &w0);
	double busy = measure(label, isl->cpus[0], &u1);
	clock_gettime(bclk, &c1), clock_gettime(CLOCK_MONOTONIC, &w1);
	stop(b);
	double ub = ((double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9) /
		    ((double)(w1.tv_sec - w0.tv_sec) + (double)(w1.tv_nsec - w0.tv_nsec) / 1e9);
	double delta = (double)(top->busy_uw - top->idle_uw) / 1e6;
	/* with the board's cgroup only the load counts (its own busy fraction); without it, background
	 * work on that CPU (<= 10 %) already counted as busy before the load started */
	double want = in_board ? delta * ub : delta * (u1 - u0);
	fprintf(stderr, "twin e2e: board CPU time from %s; the load got %.3f of the CPU\n",
		in_board ? cg : "/proc/stat", ub);
	fprintf(stderr, "twin e2e: %s rail idle %.4f W (util %.3f) -> loaded %.4f W (util %.3f): rise %.4f W, "
		"P_busy-P_idle %.4f W, expected %.4f W\n", isl->name, idle, u0, busy, u1, busy - idle, delta, want);
	ck_assert_msg(u1 > 0.98, "the CPU-bound process got only %.0f%% of CPU %d", 100 * u1, isl->cpus[0]);
	ck_assert_msg(fabs((busy - idle) - want) <= 0.05 * delta, "rise %.4f W, expected %.4f W", busy - idle, want);
	pd_platform_free(p);
}
END_TEST

START_TEST(fpga_and_gpu_emulated)
{
	pd_platform *p = twin_platform();
	ssh_session s = board();
	char out[256];
	for (size_t a = 0; a < pd_platform_accel_count(p); a++) {
		const struct pd_accelerator *ac = pd_platform_accel(p, a);
		char cmd[512];
		struct timespec t0, t1;
		if (ac->kind == PD_ACCEL_FPGA) {
			ck_assert_int_eq(sftp_store(s, "/lib/firmware/e2e.bin", "bitstream"), 0);
			snprintf(cmd, sizeof(cmd), "echo missing.bin > /sys/class/fpga_manager/%s/firmware", ac->manager);
			ck_assert_int_ne(ssh_exec(s, cmd, out, sizeof(out)), 0);
			snprintf(cmd, sizeof(cmd), "cat /sys/class/fpga_manager/%s/state", ac->manager);
			ssh_exec(s, cmd, out, sizeof(out));
			ck_assert_str_eq(out, "firmware request error\n");
			clock_gettime(CLOCK_MONOTONIC, &t0);
			snprintf(cmd, sizeof(cmd),
				 "echo 0 > /sys/class/fpga_manager/%s/flags && echo e2e.bin > /sys/class/fpga_manager/%s/firmware"
				 " && cat /sys/class/fpga_manager/%s/state", ac->manager, ac->manager, ac->manager);
			ck_assert_int_eq(ssh_exec(s, cmd, out, sizeof(out)), 0);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			ck_assert_str_eq(out, "operating\n");
			double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
			ck_assert_msg(ms >= (double)ac->reconfig_ns / 1e6, "load took %.1f ms", ms);
		}
		/* a 300 ms job blocks the writer that long */
		snprintf(cmd, sizeof(cmd), "echo latency_ns=300000000 power_uw=500000 > /sys/kernel/powerdag-twin/accel/%s/run"
			 " && cat /sys/kernel/powerdag-twin/accel/%s/run", ac->name, ac->name);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ck_assert_int_eq(ssh_exec(s, cmd, out, sizeof(out)), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		ck_assert_msg(ms >= 300, "%s run returned after %.1f ms", ac->name, ms);
		ck_assert_msg(strncmp(out, "runs=1 ", 7) == 0, "%s: %s", ac->name, out);
		if (ac->kind != PD_ACCEL_GPU)
			continue;
		/* while a long job runs, the GPU rail shows P_busy of the current (top) OPP */
		json_t *j = status_json();
		ck_assert_ptr_nonnull(j);
		int daemon = (int)json_integer_value(json_object_get(json_object_get(j, "pids"), "daemon"));
		json_decref(j);
		ck_assert_int_eq(pd_test_run(NULL, 0, "nsenter -t %d -m sh -c 'echo latency_ns=900000000 > "
						   "/sys/kernel/powerdag-twin/accel/%s/run' >/dev/null 2>&1 &", daemon, ac->name), 0);
		sleep_ms(450);
		char label[160];
		snprintf(label, sizeof(label), "ina226-%s", ac->name);
		double w = rail_w(label), want = (double)ac->opps[ac->n_opps - 1].busy_uw / 1e6;
		fprintf(stderr, "twin e2e: %s rail during a job %.4f W, model P_busy %.4f W\n", ac->name, w, want);
		ck_assert_msg(fabs(w - want) <= 0.02 * want, "%s rail %.4f W during a job, model %.4f W", ac->name, w, want);
		sleep_ms(500);
	}
	ssh_close(s);
	pd_platform_free(p);
}
END_TEST

/* ---------------------------------------------------------------- the board's /proc/stat */

/* The cpu lines of a /proc/stat text: fields (user nice system idle iowait irq softirq steal guest
 * guest_nice) of the aggregate and of each cpuN. */
struct pstat {
	bool has[64];
	unsigned long long f[64][10], agg[10];
	int n_cpu_lines;
};

static void pstat_parse(const char *text, struct pstat *ps)
{
	memset(ps, 0, sizeof(*ps));
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		unsigned long long v[10] = {0};
		int cpu;
		if (strncmp(p, "cpu ", 4) == 0) {
			sscanf(p + 4, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
			       &v[5], &v[6], &v[7], &v[8], &v[9]);
			memcpy(ps->agg, v, sizeof(v));
		} else if (sscanf(p, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2],
				  &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) == 11) {
			ps->n_cpu_lines++;
			ck_assert_msg(cpu >= 0 && cpu < 64, "cpu%d", cpu);
			ps->has[cpu] = true;
			memcpy(ps->f[cpu], v, sizeof(v));
		}
	}
}

/* The board's /proc/stat as the daemon's mount namespace shows it (/proc/PID/root crosses into it):
 * read by this process, which is not the board's, so the read itself counts nowhere. */
static void board_pstat(int daemon, struct pstat *ps)
{
	char path[64], text[16384];
	snprintf(path, sizeof(path), "/proc/%d/root/proc/stat", daemon);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
	ssize_t r = read(fd, text, sizeof(text) - 1);
	close(fd);
	ck_assert_int_gt(r, 0);
	text[r] = 0;
	pstat_parse(text, ps);
}

static int daemon_pid(void)
{
	json_t *j = status_json();
	ck_assert_ptr_nonnull(j);
	int d = (int)json_integer_value(json_object_get(json_object_get(j, "pids"), "daemon"));
	json_decref(j);
	ck_assert_int_gt(d, 1);
	return d;
}

/* The board cgroup's CPU time on cpu (ns), read on the host. */
static unsigned long long cg_usage(const char *cg, int cpu)
{
	char path[500];
	unsigned long long v = 0;
	snprintf(path, sizeof(path), "%s/cpuacct.usage_percpu", cg);
	FILE *f = fopen(path, "re");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i <= cpu; i++)
		ck_assert_int_eq(fscanf(f, "%llu", &v), 1);
	fclose(f);
	return v;
}

START_TEST(board_proc_stat)
{
	pd_platform *p = twin_platform();
	char cg[400];
	if (!board_cgroup(cg, sizeof(cg))) {
		/* without the board's cgroup the rails count the host's /proc/stat, which the board then
		 * sees as it is */
		printf("twin e2e: SKIP board /proc/stat: no cpuacct v1 hierarchy, the board shows the host's\n");
		pd_platform_free(p);
		return;
	}
	/* exactly the twin's cores, over the board's sshd; the aggregate is their sum */
	bool core[64] = {false};
	int n_cores = 0;
	for (size_t k = 0; k < pd_platform_island_count(p); k++)
		for (size_t c = 0; c < pd_platform_island(p, k)->n_cpus; c++, n_cores++)
			core[pd_platform_island(p, k)->cpus[c]] = true;
	ssh_session s = board();
	static char out[16384];
	ck_assert_int_eq(ssh_exec(s, "cat /proc/stat", out, sizeof(out)), 0);
	struct pstat ps, a, b;
	pstat_parse(out, &ps);
	ck_assert_int_eq(ps.n_cpu_lines, n_cores);
	for (int c = 0; c < 64; c++)
		ck_assert_msg(ps.has[c] == core[c], "cpu%d %s in the board's /proc/stat", c, ps.has[c] ? "listed" : "missing");
	for (int i = 0; i < 10; i++) {
		unsigned long long sum = 0;
		for (int c = 0; c < 64; c++)
			sum += ps.has[c] ? ps.f[c][i] : 0;
		ck_assert_msg(ps.agg[i] == sum, "field %d: cpu line %llu, sum of cpuN %llu", i, ps.agg[i], sum);
	}
	ck_assert_msg(strstr(out, "\nctxt ") && strstr(out, "\nbtime ") && strstr(out, "\nprocesses "), "%s", out);

	/* one descriptor, lseek(0) + read again (the agent's sampling): a new snapshot, not the first */
	int daemon = daemon_pid();
	char path[64], t1[16384], t2[16384];
	snprintf(path, sizeof(path), "/proc/%d/root/proc/stat", daemon);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ssize_t r1 = read(fd, t1, sizeof(t1) - 1);
	sleep_ms(300);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ssize_t r2 = read(fd, t2, sizeof(t2) - 1);
	close(fd);
	ck_assert_int_gt(r1, 0);
	ck_assert_int_gt(r2, 0);
	t1[r1] = t2[r2] = 0;
	pstat_parse(t1, &a), pstat_parse(t2, &b);
	ck_assert_msg(b.agg[3] > a.agg[3], "idle did not advance over 300 ms on one descriptor: %llu -> %llu", a.agg[3],
		      b.agg[3]);

	/* a CPU-bound process started on the board, pinned to one core, for 2 s: that core's user ticks
	 * rise by the CPU time it got (what its shell's cutime + cstime, in ticks too, gain around it:
	 * the shell starts with the SSH session's reaped children in them). Starting its processes costs
	 * the board some time on that core too (fork and exec are slow on this VM class: up to 0.6 s),
	 * hence 2 s rather than 1. User + system are the board cgroup's time on the core, to the tick. */
	size_t k = quietest_island(p);
	int cpu = pd_platform_island(p, k)->cpus[0];
	long hz = sysconf(_SC_CLK_TCK);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "taskset -c %d sh -c 'read l </proc/$$/stat; echo $l; timeout 2 sh -c \"while :; do :; "
		 "done\"; read l </proc/$$/stat; echo $l'", cpu);
	unsigned long long g0 = cg_usage(cg, cpu);
	board_pstat(daemon, &a);
	ck_assert_int_eq(ssh_exec(s, cmd, out, sizeof(out)), 0);
	board_pstat(daemon, &b);
	unsigned long long g1 = cg_usage(cg, cpu);
	ssh_close(s);
	unsigned long long cut[2] = {0}, cst[2] = {0};
	const char *rp = out;
	for (int i = 0; i < 2; i++) {
		rp = strchr(rp, ')');
		ck_assert_msg(rp != NULL, "%s", out);
		/* after ")": state (3) ... utime (14) stime (15) cutime (16) cstime (17) */
		ck_assert_int_eq(sscanf(rp + 2, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu", &cut[i],
					&cst[i]), 2);
		rp++;
	}
	double got = (double)(cut[1] + cst[1] - cut[0] - cst[0]), user = (double)(b.f[cpu][0] - a.f[cpu][0]);
	double used = user + (double)(b.f[cpu][2] - a.f[cpu][2]), cg_ticks = (double)(g1 - g0) * (double)hz / 1e9;
	fprintf(stderr, "twin e2e: board busy loop on cpu%d: %.0f ticks of CPU (%ld/s); the board's /proc/stat: user +%.0f, "
		"system +%llu, idle +%llu; its cgroup +%.1f ticks there\n", cpu, got, hz, user, b.f[cpu][2] - a.f[cpu][2],
		b.f[cpu][3] - a.f[cpu][3], cg_ticks);
	ck_assert_msg(got >= 0.6 * (double)hz, "the busy loop got only %.0f ticks of 2 s", got);
	ck_assert_msg(fabs(used - cg_ticks) <= 3, "cpu%d user+system +%.0f ticks, the cgroup +%.1f", cpu, used, cg_ticks);
	ck_assert_msg(fabs(user - got) <= 0.3 * got, "cpu%d user +%.0f ticks, the loop ran %.0f", cpu, user, got);

	/* the same loop on the host, outside the board: the board's counters of that core do not move
	 * (its sshd idles), its idle does */
	pid_t h = fork();
	if (h == 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
		for (volatile unsigned long x = 0;; x++)
			;
	}
	board_pstat(daemon, &a);
	struct timespec w0, w1;
	clock_gettime(CLOCK_MONOTONIC, &w0);
	sleep_ms(1000);
	board_pstat(daemon, &b);
	clock_gettime(CLOCK_MONOTONIC, &w1);
	stop(h);
	double wall = ts_d(w0, w1) * (double)hz;
	unsigned long long bu = b.f[cpu][0] - a.f[cpu][0] + b.f[cpu][2] - a.f[cpu][2];
	/* the hypervisor's steal is the host's: idle + steal is the wall time */
	unsigned long long idle = b.f[cpu][3] - a.f[cpu][3] + b.f[cpu][7] - a.f[cpu][7];
	fprintf(stderr, "twin e2e: host busy loop on cpu%d for %.0f ticks: the board's user+system +%llu, idle+steal +%llu\n",
		cpu, wall, bu, idle);
	ck_assert_msg((double)bu <= 0.05 * wall, "cpu%d: the board counted %llu ticks of a host process", cpu, bu);
	ck_assert_msg(fabs((double)idle - wall) <= 0.3 * wall, "cpu%d idle+steal +%llu over %.0f ticks", cpu, idle, wall);
	pd_platform_free(p);
}
END_TEST

static unsigned long mntns_users(unsigned long ino)
{
	unsigned long n = 0;
	DIR *d = opendir("/proc");
	struct dirent *de;
	while (d && ino && (de = readdir(d))) {
		char path[300];
		struct stat st;
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/mnt", de->d_name);
		if (stat(path, &st) == 0 && st.st_ino == ino)
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

START_TEST(down_leaves_nothing)
{
	json_t *j = status_json();
	ck_assert_ptr_nonnull(j);
	json_t *pids = json_object_get(j, "pids");
	pid_t d = (pid_t)json_integer_value(json_object_get(pids, "daemon"));
	pid_t s = (pid_t)json_integer_value(json_object_get(pids, "sshd"));
	pid_t i = (pid_t)json_integer_value(json_object_get(pids, "iiod"));
	unsigned long ns = (unsigned long)json_integer_value(json_object_get(j, "mntns"));
	char veth[64];
	snprintf(veth, sizeof(veth), "/sys/class/net/%s", jstr(j, "veth"));
	ck_assert_uint_gt(mntns_users(ns), 2);
	json_decref(j);
	ck_assert_int_eq(twin(NULL, 0, "down"), 0);
	char proc[64];
	pid_t all[] = {d, s, i};
	for (int k = 0; k < 3; k++) {
		snprintf(proc, sizeof(proc), "/proc/%d/ns/mnt", (int)all[k]);
		ck_assert_msg(access(proc, F_OK) != 0, "pid %d still alive", (int)all[k]);
	}
	ck_assert_uint_eq(mntns_users(ns), 0); /* no process, hence no mount of the twin, left */
	char nspath[128];
	snprintf(nspath, sizeof(nspath), "/run/netns/%s", netns);
	ck_assert_int_ne(access(nspath, F_OK), 0);
	ck_assert_int_ne(access(veth, F_OK), 0);
	ck_assert_int_ne(access(state, F_OK), 0);
	/* nothing of ours mounted in the host's namespace: neither the FUSE tree nor the netns handle */
	char out[64];
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "grep -c -e fuse.powerdag-twin -e '/run/netns/%s ' /proc/self/mountinfo",
				     netns), 1); /* grep: no line */
	ck_assert_int_eq(twin(NULL, 0, "status"), 3);
}
END_TEST

static const char *skip_reason(void)
{
	if (geteuid() != 0)
		return "needs root (network namespaces, mounts)";
	const char *need[] = {"/dev/fuse", "/usr/sbin/sshd", "/usr/sbin/iiod", "/usr/bin/ssh-keygen", "/usr/sbin/ip"};
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (access(need[i], F_OK) != 0)
			return need[i];
	if (access(powerdag, X_OK) != 0)
		return "the powerdag binary is not built";
	return NULL;
}

int main(void)
{
	const char *env = getenv("POWERDAG");
	snprintf(powerdag, sizeof(powerdag), "%s", env ? env : pd_test_bin("powerdag"));
	const char *why = skip_reason();
	if (why) {
		printf("SKIP twin e2e: %s\n", why);
		return 0;
	}
	Suite *s = suite_create("twin_e2e");
	TCase *tc = tcase_create("twin");
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, status_and_refusal);
	tcase_add_test(tc, ssh_strict_host_key);
	tcase_add_test(tc, iio_sees_rails);
	tcase_add_test(tc, frequency_changes_power_as_modelled);
	tcase_add_test(tc, invalid_writes_refused);
	tcase_add_test(tc, cpu_load_raises_island_rail);
	tcase_add_test(tc, fpga_and_gpu_emulated);
	tcase_add_test(tc, board_proc_stat);
	tcase_add_test(tc, down_leaves_nothing);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}

/* SPDX-License-Identifier: MIT */
/*
 * The twin's model without namespaces or root: platform derivation, kernel-like validation of
 * sysfs stores, the rails' power model and the INA226 view, FPGA loads and accelerator runs.
 */
#include "pd_test.h"
#include "twin/model_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct fixture {
	pd_ydoc doc;
	pd_platform *p;
	twin_model *m;
	char fw[512];
};

static pd_platform *derive(int n_cpus, const char *src, pd_ydoc *doc)
{
	pd_buf y;
	pd_buf_init(&y);
	pd_err e = {0};
	ck_assert_msg(pd_twin_derive_platform(src, n_cpus, "ip:10.0.0.2", &y, &e) == 0, "%s", e.msg);
	pd_diags d;
	pd_diags_init(&d);
	ck_assert_int_eq(pd_yaml_load(doc, "twin.yaml", y.data, y.len, &d), 0);
	pd_platform *p = pd_platform_from_node(pd_ymap_get(doc->root, "platform"), &d);
	pd_diags_print(&d, stderr);
	ck_assert_ptr_nonnull(p);
	pd_diags_free(&d);
	pd_buf_free(&y);
	return p;
}

static void open_model(struct fixture *f, int n_cpus)
{
	memset(f, 0, sizeof(*f));
	f->p = derive(n_cpus, NULL, &f->doc);
	snprintf(f->fw, sizeof(f->fw), "%s", pd_test_tmpdir());
	pd_err e = {0};
	f->m = twin_model_new(f->p, f->fw, &e);
	ck_assert_msg(f->m != NULL, "%s", e.msg);
}

static void close_model(struct fixture *f)
{
	twin_model_free(f->m);
	pd_platform_free(f->p);
	pd_yaml_free(&f->doc);
}

static const char *rd(twin_model *m, const char *path)
{
	static char out[4][4096];
	static int k;
	pd_buf b;
	pd_buf_init(&b);
	int rc = twin_model_read(m, path, &b);
	ck_assert_msg(rc == 0, "read %s: %d", path, rc);
	char *o = out[k++ % 4];
	snprintf(o, 4096, "%s", b.data);
	pd_buf_free(&b);
	return o;
}

static int wr(twin_model *m, const char *path, const char *s)
{
	return twin_model_write(m, path, s, strlen(s));
}

#define POL1 "/cpufreq/policy1/"

START_TEST(derive_default_two_cpus)
{
	pd_ydoc doc = {0};
	pd_platform *p = derive(2, NULL, &doc);
	ck_assert_uint_eq(pd_platform_island_count(p), 2);
	const struct pd_island *little = pd_platform_island(p, 0), *big = pd_platform_island(p, 1);
	ck_assert_str_eq(little->name, "little");
	ck_assert_str_eq(big->name, "big");
	ck_assert_uint_eq(little->n_cpus, 1);
	ck_assert_int_eq(little->cpus[0], 0);
	ck_assert_int_eq(big->cpus[0], 1);
	ck_assert_str_eq(big->policy, "policy1");
	ck_assert_int_eq(big->opps[big->n_opps - 1].freq_khz, 2000000);
	ck_assert_int_eq(big->opps[big->n_opps - 1].busy_uw, 1982000);
	ck_assert_uint_eq(pd_platform_accel_count(p), 2);
	/* a rail per island, per accelerator and the board, all at the twin's iiod */
	ck_assert_uint_eq(pd_platform_sensor_count(p), 5);
	const struct pd_sensor *s = pd_platform_sensor(p, 1);
	ck_assert_str_eq(s->uri, "ip:10.0.0.2");
	ck_assert_str_eq(s->device, "ina226-big");
	ck_assert_str_eq(s->channel, "power2");
	ck_assert_str_eq(s->measures, "big");
	ck_assert_str_eq(pd_platform_sensor(p, 4)->measures, "base");
	pd_platform_free(p);
	pd_yaml_free(&doc);
}
END_TEST

/* The default source is platforms/odroid-xu4.yaml itself (compiled in): every figure the twin takes
 * from it equals the board file's. */
START_TEST(derive_default_is_the_xu4_board_file)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *xu4 = pd_platform_load_file(pd_test_src("platforms/odroid-xu4.yaml"), &d);
	pd_diags_print(&d, stderr);
	ck_assert_ptr_nonnull(xu4);
	pd_ydoc doc = {0};
	pd_platform *p = derive(8, NULL, &doc);
	ck_assert_str_eq(pd_platform_name(p), "twin-odroid-xu4");
	ck_assert_int_eq(pd_platform_ref_freq_khz(p), pd_platform_ref_freq_khz(xu4));
	ck_assert_int_eq(pd_platform_base_uw(p), pd_platform_base_uw(xu4));
	ck_assert_double_eq(pd_platform_dl(p)->max_util_per_cpu, pd_platform_dl(xu4)->max_util_per_cpu);
	ck_assert_int_eq(pd_platform_dl(p)->fair_runtime_ns, pd_platform_dl(xu4)->fair_runtime_ns);
	ck_assert_uint_eq(pd_platform_island_count(p), pd_platform_island_count(xu4));
	for (size_t k = 0; k < pd_platform_island_count(p); k++) {
		const struct pd_island *a = pd_platform_island(p, k), *b = pd_platform_island(xu4, k);
		ck_assert_str_eq(a->name, b->name);
		ck_assert_double_eq(a->capacity, b->capacity);
		ck_assert_uint_eq(a->n_opps, b->n_opps);
		for (size_t j = 0; j < a->n_opps; j++) {
			ck_assert_int_eq(a->opps[j].freq_khz, b->opps[j].freq_khz);
			ck_assert_int_eq(a->opps[j].busy_uw, b->opps[j].busy_uw);
			ck_assert_int_eq(a->opps[j].idle_uw, b->opps[j].idle_uw);
		}
	}
	/* the board file has no accelerator: the default twin adds its two emulated ones */
	ck_assert_uint_eq(pd_platform_accel_count(xu4), 0);
	ck_assert_str_eq(pd_platform_accel(p, 0)->name, "gpu0");
	ck_assert_str_eq(pd_platform_accel(p, 1)->name, "pl");
	pd_platform_free(p);
	pd_yaml_free(&doc);
	pd_platform_free(xu4);
	pd_diags_free(&d);
}
END_TEST

/* Names as long as the platform parser accepts (PD_PLATFORM_MAX_COMPONENT) are served whole. */
START_TEST(longest_component_names_served)
{
	char df[PD_PLATFORM_MAX_COMPONENT + 1], mgr[PD_PLATFORM_MAX_COMPONENT + 1], text[2048], p[1024];
	memset(df, 'd', PD_PLATFORM_MAX_COMPONENT);
	df[PD_PLATFORM_MAX_COMPONENT] = 0;
	memset(mgr, 'm', PD_PLATFORM_MAX_COMPONENT);
	mgr[PD_PLATFORM_MAX_COMPONENT] = 0;
	snprintf(text, sizeof(text),
		 "platform:\n  name: long\n  reference_frequency: 1GHz\n"
		 "  islands: [{name: a, cpus: [0], opps: [{freq: 1GHz, busy: 1W, idle: 0.1W}]}]\n"
		 "  accelerators:\n"
		 "    - {name: g, kind: gpu, devfreq: %s, opps: [{freq: 500MHz, busy: 1W, idle: 0.1W}]}\n"
		 "    - {name: f, kind: fpga, slots: %d, reconfig_time: 1ms, manager: %s}\n",
		 df, PD_PLATFORM_MAX_SLOTS, mgr);
	const char *src = pd_test_write(pd_test_tmpdir(), "long.yaml", text);
	struct fixture f;
	memset(&f, 0, sizeof(f));
	f.p = derive(1, src, &f.doc);
	snprintf(f.fw, sizeof(f.fw), "%s", pd_test_tmpdir());
	pd_err e = {0};
	f.m = twin_model_new(f.p, f.fw, &e);
	ck_assert_msg(f.m != NULL, "%s", e.msg);
	snprintf(p, sizeof(p), "/class/devfreq/%s/max_freq", df);
	ck_assert_str_eq(rd(f.m, p), "500000000\n");
	snprintf(p, sizeof(p), "/class/fpga_manager/%s/state", mgr);
	ck_assert_str_eq(rd(f.m, p), "unknown\n");
	close_model(&f);
}
END_TEST

START_TEST(derive_spreads_and_picks)
{
	pd_ydoc doc = {0};
	pd_platform *p = derive(8, NULL, &doc);
	ck_assert_uint_eq(pd_platform_island(p, 0)->n_cpus, 4);
	ck_assert_uint_eq(pd_platform_island(p, 1)->n_cpus, 4);
	ck_assert_int_eq(pd_platform_island(p, 1)->cpus[0], 4);
	pd_platform_free(p);
	pd_yaml_free(&doc);
	pd_ydoc doc1 = {0};
	p = derive(1, NULL, &doc1);
	ck_assert_uint_eq(pd_platform_island_count(p), 1);
	ck_assert_uint_eq(pd_platform_core_count(p), 1);
	pd_platform_free(p);
	pd_yaml_free(&doc1);
	/* 3 CPUs: the spare core goes to the fastest island */
	pd_ydoc doc3 = {0};
	p = derive(3, NULL, &doc3);
	ck_assert_uint_eq(pd_platform_island(p, 0)->n_cpus, 1);
	ck_assert_uint_eq(pd_platform_island(p, 1)->n_cpus, 2);
	pd_platform_free(p);
	pd_yaml_free(&doc3);
}
END_TEST

START_TEST(derive_bad_input)
{
	pd_buf y;
	pd_buf_init(&y);
	pd_err e = {0};
	const char *bad = pd_test_write(pd_test_tmpdir(), "bad.yaml", "platform:\n  name: x\n  islands: 3\n");
	ck_assert_int_eq(pd_twin_derive_platform(bad, 2, "ip:x", &y, &e), PD_EXIT_USAGE);
	ck_assert_msg(strstr(e.msg, "bad.yaml") != NULL, "%s", e.msg);
	ck_assert_int_eq(pd_twin_derive_platform("/nonexistent/p.yaml", 2, "ip:x", &y, &e), e.code);
	ck_assert_int_ne(e.code, 0);
	ck_assert_int_eq(pd_twin_derive_platform(NULL, 0, "ip:x", &y, &e), PD_EXIT_USAGE);
	pd_buf_free(&y);
}
END_TEST

START_TEST(cpufreq_validation)
{
	struct fixture f;
	open_model(&f, 2);
	twin_model *m = f.m;
	ck_assert_str_eq(rd(m, POL1 "scaling_governor"), "performance\n");
	ck_assert_str_eq(rd(m, POL1 "cpuinfo_cur_freq"), "2000000\n");
	ck_assert_str_eq(rd(m, POL1 "scaling_setspeed"), "<unsupported>\n");
	ck_assert_str_eq(rd(m, POL1 "related_cpus"), "1\n");
	ck_assert_int_eq(wr(m, POL1 "scaling_setspeed", "1000000\n"), -EINVAL); /* not userspace */
	ck_assert_int_eq(wr(m, POL1 "scaling_governor", "schedutil\n"), -EINVAL);
	ck_assert_int_eq(wr(m, POL1 "scaling_governor", "userspace\n"), 0);
	ck_assert_str_eq(rd(m, POL1 "scaling_setspeed"), "2000000\n"); /* userspace starts at cur */
	ck_assert_int_eq(wr(m, POL1 "scaling_setspeed", "1000001"), -EINVAL);
	ck_assert_int_eq(wr(m, POL1 "scaling_setspeed", "-5"), -EINVAL);
	ck_assert_int_eq(wr(m, POL1 "scaling_setspeed", "10 00"), -EINVAL);
	ck_assert_int_eq(wr(m, POL1 "scaling_setspeed", ""), -EINVAL);
	ck_assert_int_eq(wr(m, POL1 "scaling_setspeed", "1000000\n"), 0);
	ck_assert_str_eq(rd(m, POL1 "cpuinfo_cur_freq"), "1000000\n");
	ck_assert_int_eq(twin_model_island_khz(m, 1), 1000000);
	/* limits win over the request: max rounds down to an OPP */
	ck_assert_int_eq(wr(m, POL1 "scaling_max_freq", "850000"), 0);
	ck_assert_str_eq(rd(m, POL1 "scaling_cur_freq"), "800000\n");
	ck_assert_int_eq(wr(m, POL1 "scaling_max_freq", "2000000"), 0);
	ck_assert_int_eq(wr(m, POL1 "scaling_governor", "powersave"), 0);
	ck_assert_str_eq(rd(m, POL1 "scaling_cur_freq"), "200000\n");
	ck_assert_int_eq(wr(m, POL1 "scaling_min_freq", "1500000"), 0);
	ck_assert_str_eq(rd(m, POL1 "scaling_cur_freq"), "1500000\n");
	/* read-only and unknown files */
	ck_assert_int_eq(wr(m, POL1 "scaling_available_frequencies", "1"), -EACCES);
	ck_assert_int_eq(wr(m, POL1 "nope", "1"), -ENOENT);
	struct twin_stat st;
	ck_assert_int_eq(twin_model_stat(m, "/cpufreq/policy1", &st), 0);
	ck_assert_int_eq(st.kind, TWIN_DIR);
	ck_assert_int_eq(twin_model_stat(m, POL1 "scaling_setspeed", &st), 0);
	ck_assert_uint_eq(st.mode, 0644);
	close_model(&f);
}
END_TEST

START_TEST(devfreq_fair_server_fpga)
{
	struct fixture f;
	open_model(&f, 2);
	twin_model *m = f.m;
	const char *df = "/class/devfreq/11800000.gpu/";
	char p[256];
	snprintf(p, sizeof(p), "%savailable_frequencies", df);
	ck_assert_str_eq(rd(m, p), "177000000 266000000 350000000 420000000 480000000 543000000 600000000\n");
	snprintf(p, sizeof(p), "%smax_freq", df);
	ck_assert_int_eq(wr(m, p, "300000000"), 0);
	snprintf(p, sizeof(p), "%scur_freq", df);
	ck_assert_str_eq(rd(m, p), "266000000\n");
	snprintf(p, sizeof(p), "%sgovernor", df);
	ck_assert_int_eq(wr(m, p, "bogus"), -EINVAL);

	const char *fs = "/debug/sched/fair_server/cpu1/";
	snprintf(p, sizeof(p), "%sruntime", fs);
	ck_assert_str_eq(rd(m, p), "50000000\n");
	ck_assert_int_eq(wr(m, p, "2000000000"), -EINVAL); /* > period */
	ck_assert_int_eq(wr(m, p, "0"), 0);
	snprintf(p, sizeof(p), "%speriod", fs);
	ck_assert_int_eq(wr(m, p, "99999"), -EINVAL); /* < 100 us */
	ck_assert_int_eq(wr(m, p, "5000000000"), -EINVAL); /* > 2^22 us */
	ck_assert_int_eq(wr(m, p, "100000"), 0);

	const char *fm = "/class/fpga_manager/fpga0/";
	snprintf(p, sizeof(p), "%sstate", fm);
	ck_assert_str_eq(rd(m, p), "unknown\n");
	snprintf(p, sizeof(p), "%sfirmware", fm);
	ck_assert_int_eq(wr(m, p, "missing.bin\n"), -ENOENT);
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(twin_model_read(m, p, &b), -EACCES); /* write-only */
	pd_buf_free(&b);
	snprintf(p, sizeof(p), "%sstate", fm);
	ck_assert_str_eq(rd(m, p), "firmware request error\n");
	snprintf(p, sizeof(p), "%sflags", fm);
	ck_assert_int_eq(wr(m, p, "zz"), -EINVAL);
	ck_assert_int_eq(wr(m, p, "0x10"), 0);
	ck_assert_str_eq(rd(m, p), "10\n");
	pd_test_write(f.fw, "a.bin", "bits");
	/* running before any load: nothing in the fabric */
	ck_assert_int_eq(wr(m, "/twin/accel/pl/run", "latency_ns=1000"), -EIO);
	snprintf(p, sizeof(p), "%sfirmware", fm);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(wr(m, p, "a.bin\n"), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	ck_assert_msg(ms >= 22.664, "load took %.3f ms, reconfiguration time is 22.664 ms", ms);
	snprintf(p, sizeof(p), "%sstate", fm);
	ck_assert_str_eq(rd(m, p), "operating\n");
	ck_assert_int_eq(wr(m, "/twin/accel/pl/run", "latency_ns=1000 bitstream=b.bin"), -ENOEXEC);
	ck_assert_int_eq(wr(m, "/twin/accel/pl/run", "latency_ns=1000 bitstream=a.bin"), 0);
	ck_assert_int_eq(wr(m, "/twin/accel/pl/run", "speed=3"), -EINVAL);
	ck_assert(strncmp(rd(m, "/twin/accel/pl/run"), "runs=1 busy_ns=", 15) == 0);
	close_model(&f);
}
END_TEST

START_TEST(gpu_latency_follows_devfreq)
{
	struct fixture f;
	open_model(&f, 2);
	twin_model *m = f.m;
	ck_assert_int_eq(wr(m, "/class/devfreq/11800000.gpu/max_freq", "177000000"), 0);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(wr(m, "/twin/accel/gpu0/run", "latency_ns=20000000\n"), 0); /* 20 ms at 600 MHz */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	const struct pd_accelerator *g = pd_platform_accel(f.p, (size_t)pd_platform_find_accel(f.p, "gpu0"));
	double want = (double)pd_platform_latency_at(g, 20000000, 0) / 1e6;
	ck_assert_msg(ms >= want && want > 60, "run took %.1f ms, expected %.1f ms at 177 MHz", ms, want);
	close_model(&f);
}
END_TEST

static void tick(twin_model *m, int64_t t, uint64_t b0, uint64_t b1, uint64_t total)
{
	uint64_t busy[2] = {b0, b1}, tot[2] = {total, total};
	twin_model_tick(m, t, busy, tot, 2);
}

START_TEST(rails_follow_the_power_model)
{
	struct fixture f;
	open_model(&f, 2);
	twin_model *m = f.m;
	ck_assert_uint_eq(twin_model_rail_count(m), 5);
	ck_assert_str_eq(twin_model_rail_name(m, 1), "big");
	/* cpu1 half busy over the window, cpu0 idle */
	for (int i = 0; i <= TWIN_WINDOW; i++)
		tick(m, (int64_t)i * TWIN_TICK_NS, 0, (uint64_t)i * 5, (uint64_t)i * 10);
	const struct pd_island *big = pd_platform_island(f.p, 1), *little = pd_platform_island(f.p, 0);
	ck_assert_double_eq_tol(twin_model_rail_w(m, 1), pd_platform_island_power_w(big, big->n_opps - 1, 0.5), 1e-9);
	ck_assert_double_eq_tol(twin_model_rail_w(m, 0), pd_platform_island_power_w(little, little->n_opps - 1, 0.0), 1e-9);
	ck_assert_double_eq_tol(twin_model_rail_w(m, 4), 2.1, 1e-9);
	/* GPU idle at its top OPP until something runs */
	const struct pd_accelerator *g = pd_platform_accel(f.p, 0);
	ck_assert_double_eq_tol(twin_model_rail_w(m, 2), (double)g->opps[g->n_opps - 1].idle_uw / 1e6, 1e-9);
	/* a lower OPP lowers the rail as the model says */
	ck_assert_int_eq(wr(m, POL1 "scaling_governor", "powersave"), 0);
	ck_assert_double_eq_tol(twin_model_rail_w(m, 1), pd_platform_island_power_w(big, 0, 0.5), 1e-9);
	/* the window slides: fully busy from now on */
	for (int i = TWIN_WINDOW + 1; i <= 2 * TWIN_WINDOW + 1; i++)
		tick(m, (int64_t)i * TWIN_TICK_NS, 0, 25 + (uint64_t)(i - TWIN_WINDOW) * 10, (uint64_t)i * 10);
	ck_assert_double_eq_tol(twin_model_rail_w(m, 1), (double)big->opps[0].busy_uw / 1e6, 1e-9);
	/* the INA226 view of the rail reads back to the same power (quantised by power LSB) */
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(twin_model_read(m, "/bus/iio/devices/iio:device1/in_power2_raw", &b), 0);
	double raw = atof(b.data);
	pd_buf_free(&b);
	double scale = atof(rd(m, "/bus/iio/devices/iio:device1/in_power2_scale"));
	ck_assert_double_eq_tol(raw * scale / 1000, (double)big->opps[0].busy_uw / 1e6, scale / 2000 + 1e-9);
	ck_assert_str_eq(rd(m, "/bus/iio/devices/iio:device1/label"), "ina226-big\n");
	ck_assert_str_eq(rd(m, "/bus/iio/devices/iio:device1/name"), "ina226\n");
	ck_assert_int_eq(wr(m, "/bus/iio/devices/iio:device1/in_oversampling_ratio", "3"), -EINVAL);
	ck_assert_int_eq(wr(m, "/bus/iio/devices/iio:device1/in_oversampling_ratio", "16"), 0);
	close_model(&f);
}
END_TEST

START_TEST(ina226_conversion)
{
	struct twin_ina226 v;
	twin_ina226_from_w(1.0, 100000, &v); /* 1 W on 5 V through 100 mOhm */
	ck_assert_double_eq_tol(v.current_scale, 0.025, 1e-12);
	ck_assert_double_eq_tol(v.power_scale, 0.625, 1e-12);
	ck_assert_int_eq(v.bus_raw, 4000);
	ck_assert_int_eq(v.current_raw, 8000); /* 200 mA */
	ck_assert_int_eq(v.shunt_raw, v.current_raw);
	ck_assert_int_eq(v.power_raw, 1600);
	ck_assert_int_eq(twin_shunt_for(2.0), 100000);
	ck_assert_int_eq(twin_shunt_for(10.0), 20000); /* 2 A: 60 mV with headroom */
	/* shunt voltage of the chosen shunt stays within the INA226's 81.92 mV */
	double w = 40.0;
	ck_assert_double_le(w / 5.0 * (double)twin_shunt_for(w) / 1e6, 0.08192);
}
END_TEST

struct names {
	char v[64][64];
	int n;
};

static void collect(const char *name, void *arg)
{
	struct names *nm = arg;
	if (nm->n < 64)
		snprintf(nm->v[nm->n++], 64, "%s", name);
}

START_TEST(tree_listing)
{
	struct fixture f;
	open_model(&f, 2);
	struct names nm = {.n = 0};
	ck_assert_int_eq(twin_model_list(f.m, "/bus/iio/devices", collect, &nm), 0);
	ck_assert_int_eq(nm.n, 5);
	ck_assert_str_eq(nm.v[0], "iio:device0");
	nm.n = 0;
	ck_assert_int_eq(twin_model_list(f.m, "/", collect, &nm), 0);
	ck_assert_int_eq(nm.n, 6); /* cpufreq class twin debug bus proc */
	nm.n = 0;
	ck_assert_int_eq(twin_model_list(f.m, "/debug/sched/fair_server", collect, &nm), 0);
	ck_assert_int_eq(nm.n, 2);
	ck_assert_int_eq(twin_model_list(f.m, "/cpufreq/policy0/related_cpus", collect, &nm), -ENOTDIR);
	ck_assert_int_eq(twin_model_list(f.m, "/nope", collect, &nm), -ENOENT);
	close_model(&f);
}
END_TEST

/* ---------------------------------------------------------------- the board's /proc/stat */

/* A host /proc/stat of 3 CPUs; steal: cpu0 7, cpu2 3. Its idle and busy counters are not the board's:
 * a board CPU is idle whenever the board does not run on it (the host's idle would leave out the
 * host's own processes). */
static const char host_stat_a[] = "cpu  1400 50 500 6900 20 10 5 10 100 0\n"
				  "cpu0 1000 50 300 5000 20 10 5 7 100 0\n"
				  "cpu1 200 0 100 700 0 0 0 0 0 0\n"
				  "cpu2 200 0 100 900 0 0 0 3 0 0\n"
				  "intr 12345 0 1 2\n"
				  "ctxt 999\n"
				  "btime 1700000000\n"
				  "processes 4242\n"
				  "procs_running 3\n"
				  "procs_blocked 0\n"
				  "softirq 77 1 2 3 4 5 6 7 8 9 10\n";
static const char host_tail[] = "intr 12345 0 1 2\nctxt 999\nbtime 1700000000\nprocesses 4242\nprocs_running 3\n"
				"procs_blocked 0\nsoftirq 77 1 2 3 4 5 6 7 8 9 10\n";

static void render(const char *host, const uint64_t *user, const uint64_t *sys, uint64_t now_s,
		   struct twin_procstat_mono *mono, char *out, size_t n)
{
	struct twin_procstat_in in = {.host = host, .host_len = strlen(host), .user_ns = user, .sys_ns = sys,
				      .n_acct = 3, .hz = 100, .now_ns = now_s * PD_NS_PER_S};
	in.core[0] = in.core[2] = true; /* a twin on host CPUs 0 and 2 (--host-cpus 0,2) */
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(twin_procstat_render(&in, mono, &b), 0);
	snprintf(out, n, "%s", b.data);
	pd_buf_free(&b);
}

START_TEST(procstat_values_and_lines)
{
	struct twin_procstat_mono mono = {0};
	/* cpu0: 2.5 s user + 0.5 s system = 250 + 50 ticks; cpu1 (not a twin core) busy; cpu2: 1.2345 s
	 * user -> 123 ticks (truncated, as the kernel's nsec_to_clock_t) */
	uint64_t user[3] = {2500000000ULL, 9000000000ULL, 1234567891ULL}, sys[3] = {500000000ULL, 0, 0};
	char out[2048], want[2048];
	render(host_stat_a, user, sys, 70, &mono, out, sizeof(out));
	/* idle = 70 s since boot - user - system - steal: cpu0 7000-250-50-7 = 6693, cpu2 7000-123-0-3 = 6874 */
	snprintf(want, sizeof(want), "cpu  373 0 50 13567 0 0 0 10 0 0\n"
				     "cpu0 250 0 50 6693 0 0 0 7 0 0\n"
				     "cpu2 123 0 0 6874 0 0 0 3 0 0\n%s", host_tail);
	ck_assert_str_eq(out, want);
	/* a host text without cpu lines, or no USER_HZ: an error, nothing rendered */
	struct twin_procstat_in bad = {.host = "intr 1\n", .host_len = 7, .user_ns = user, .sys_ns = sys, .n_acct = 3,
				       .hz = 100};
	bad.core[0] = true;
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(twin_procstat_render(&bad, &mono, &b), -EIO);
	bad.host = host_stat_a, bad.host_len = strlen(host_stat_a), bad.hz = 0;
	ck_assert_int_eq(twin_procstat_render(&bad, &mono, &b), -EIO);
	ck_assert_uint_eq(b.len, 0);
	pd_buf_free(&b);
}
END_TEST

START_TEST(procstat_never_goes_back)
{
	struct twin_procstat_mono mono = {0};
	uint64_t user[3] = {2500000000ULL, 0, 1234567891ULL}, sys[3] = {500000000ULL, 0, 0};
	char out[2048];
	render(host_stat_a, user, sys, 70, &mono, out, sizeof(out));
	/* cpu0's cgroup reads 60 s of user time, cpu2's less than before (recreated), at the same instant.
	 * Nothing goes back: cpu0's idle (7000-6000-50-7 = 943 now) stays at 6693, cpu2's user at 123; cpu0's
	 * user rises, and so does cpu2's idle (7000-0-0-3: each counter keeps its own maximum). */
	uint64_t user2[3] = {60000000000ULL, 0, 0}, sys2[3] = {500000000ULL, 0, 0};
	render(host_stat_a, user2, sys2, 70, &mono, out, sizeof(out));
	const char *want2 = "cpu  6123 0 50 13690 0 0 0 10 0 0\ncpu0 6000 0 50 6693 0 0 0 7 0 0\n"
			    "cpu2 123 0 0 6997 0 0 0 3 0 0\n";
	ck_assert_msg(strncmp(out, want2, strlen(want2)) == 0, "%s", out);
	/* 130 s later, 10 more steal on cpu2: idle follows the clock again */
	const char *host_b = "cpu  0 0 0 0 0 0 0 0 0 0\n"
			     "cpu0 1000 50 300 15000 20 10 5 7 100 0\n"
			     "cpu2 200 0 100 900 0 0 0 13 0 0\n"
			     "intr 1\n";
	render(host_b, user2, sys2, 200, &mono, out, sizeof(out));
	/* cpu0 20000-6000-50-7 = 13943; cpu2 20000-0-0-13 = 19987 (its user shows 123 still) */
	ck_assert_str_eq(out, "cpu  6123 0 50 33930 0 0 0 20 0 0\n"
			      "cpu0 6000 0 50 13943 0 0 0 7 0 0\n"
			      "cpu2 123 0 0 19987 0 0 0 13 0 0\n"
			      "intr 1\n");
}
END_TEST

START_TEST(procstat_split)
{
	uint64_t u, s;
	twin_procstat_split(1000, 3, 1, &u, &s);
	ck_assert_uint_eq(u, 750);
	ck_assert_uint_eq(s, 250);
	twin_procstat_split(1000, 0, 0, &u, &s); /* no split known: all user */
	ck_assert_uint_eq(u, 1000);
	ck_assert_uint_eq(s, 0);
	/* this machine's figures: 11 311 s of usage, 7 732.86 s user and 3 582.556 s system sampled */
	twin_procstat_split(11311478144425ULL, 7732860000000ULL, 3582556000000ULL, &u, &s);
	ck_assert_uint_eq(u + s, 11311478144425ULL);
	ck_assert_msg(s > 3581300000000ULL && s < 3581320000000ULL, "%llu", (unsigned long long)s); /* x 0.31661 */
	twin_procstat_split(UINT64_MAX, UINT64_MAX / 2, UINT64_MAX / 2, &u, &s); /* no overflow */
	ck_assert_uint_eq(u + s, UINT64_MAX);
	ck_assert_uint_le(s, UINT64_MAX / 2 + 1);
	ck_assert_uint_ge(s, UINT64_MAX / 2 - 4096);
}
END_TEST

/* CLOCK_MONOTONIC in USER_HZ ticks: the time each CPU has counted since boot. */
static long long uptime_ticks(long hz)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * hz + (long long)ts.tv_nsec * hz / PD_NS_PER_S;
}

/* The model's file: the daemon's sources (a host /proc/stat descriptor, the cgroup directory), read
 * again on every read of the file. */
START_TEST(procstat_served_by_the_model)
{
	struct fixture f;
	open_model(&f, 2); /* cores 0 and 1 */
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(twin_model_read(f.m, "/proc/stat", &b), -ENODEV); /* no sources yet */
	const char *dir = pd_test_tmpdir();
	const char *host = pd_test_write(dir, "stat", host_stat_a);
	/* usage 4 s on cpu0 split 3:1 (user:sys), 1 s on cpu1 */
	pd_test_write(dir, "cpuacct.usage_percpu", "4000000000 1000000000 7000000000\n");
	pd_test_write(dir, "cpuacct.usage_percpu_user", "300 100 0\n");
	pd_test_write(dir, "cpuacct.usage_percpu_sys", "100 0 0\n");
	int fd = open(host, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	twin_model_serve_proc_stat(f.m, fd, dir);
	long hz = sysconf(_SC_CLK_TCK);
	long long up0 = uptime_ticks(hz);
	ck_assert_int_eq(twin_model_read(f.m, "/proc/stat", &b), 0);
	long long up1 = uptime_ticks(hz);
	long long u0 = 3 * hz, s0 = hz, u1 = hz; /* ticks */
	long long v[2][4], sum[4];
	ck_assert_int_eq(sscanf(b.data, "cpu  %lld 0 %lld %lld 0 0 0 %lld 0 0\ncpu0 %lld 0 %lld %lld 0 0 0 %lld 0 0\n"
					"cpu1 %lld 0 %lld %lld 0 0 0 %lld 0 0\n",
				&sum[0], &sum[1], &sum[2], &sum[3], &v[0][0], &v[0][1], &v[0][2], &v[0][3], &v[1][0], &v[1][1],
				&v[1][2], &v[1][3]),
			 12);
	ck_assert_int_eq(v[0][0], u0);
	ck_assert_int_eq(v[0][1], s0);
	ck_assert_int_eq(v[0][3], 7);
	ck_assert_int_eq(v[1][0], u1);
	ck_assert_int_eq(v[1][1], 0);
	ck_assert_int_eq(v[1][3], 0);
	/* idle: the time since boot at the read, less what the board ran and what the host stole */
	ck_assert_int_ge(v[0][2], up0 - u0 - s0 - 7);
	ck_assert_int_le(v[0][2], up1 - u0 - s0 - 7);
	ck_assert_int_ge(v[1][2], up0 - u1);
	ck_assert_int_le(v[1][2], up1 - u1);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(sum[i], v[0][i] + v[1][i]);
	ck_assert_msg(strstr(b.data, host_tail) != NULL, "%s", b.data);
	/* the host file rewritten under the same descriptor: the next read sees it (pread from 0) */
	pd_test_write(dir, "stat", "cpu0 0 0 0 20000 0 0 0 9 0 0\ncpu1 0 0 0 5000 0 0 0 0 0 0\nctxt 1\n");
	pd_buf_free(&b);
	pd_buf_init(&b);
	ck_assert_int_eq(twin_model_read(f.m, "/proc/stat", &b), 0);
	char want[2048];
	snprintf(want, sizeof(want), "cpu0 %lld 0 %lld ", u0, s0);
	ck_assert_msg(strstr(b.data, want) != NULL, "%s", b.data);
	ck_assert_msg(strstr(b.data, " 0 0 0 9 0 0\ncpu1 ") != NULL, "%s", b.data); /* cpu0's new steal */
	ck_assert_msg(strstr(b.data, "\nctxt 1\n") != NULL, "%s", b.data);
	/* the cgroup gone (twin down): an error, not a made-up file */
	char p[600];
	snprintf(p, sizeof(p), "%s/cpuacct.usage_percpu", dir);
	unlink(p);
	ck_assert_int_eq(twin_model_read(f.m, "/proc/stat", &b), -EIO);
	pd_buf_free(&b);
	close(fd);
	close_model(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("twin_model");
	TCase *tc = tcase_create("model");
	tcase_add_test(tc, derive_default_two_cpus);
	tcase_add_test(tc, derive_default_is_the_xu4_board_file);
	tcase_add_test(tc, derive_spreads_and_picks);
	tcase_add_test(tc, longest_component_names_served);
	tcase_add_test(tc, derive_bad_input);
	tcase_add_test(tc, cpufreq_validation);
	tcase_add_test(tc, devfreq_fair_server_fpga);
	tcase_add_test(tc, gpu_latency_follows_devfreq);
	tcase_add_test(tc, rails_follow_the_power_model);
	tcase_add_test(tc, ina226_conversion);
	tcase_add_test(tc, tree_listing);
	tcase_add_test(tc, procstat_values_and_lines);
	tcase_add_test(tc, procstat_never_goes_back);
	tcase_add_test(tc, procstat_split);
	tcase_add_test(tc, procstat_served_by_the_model);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}

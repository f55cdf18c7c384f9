/* SPDX-License-Identifier: MIT */
/*
 * powerdag simulate PLAN [options] - discrete-event simulation of a plan (simulator/): predicted
 * power, energy, deadline misses and response times. Exit 0 (1 with --fail-on-miss when a DAG
 * missed a deadline), 2 bad usage or input, 3 when the trace cannot be written.
 */
#include "cli/cli_impl.h"
#include "simulator/pd_simulator.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

enum { O_DURATION = 1, O_SEED, O_EXEC, O_JSON, O_TRACE, O_WINDOW, O_BG, O_FAIR, O_JITTER, O_FAIL, O_RECLAIM, O_INJECT };

/* Run lengths and trace windows alike: at most PD_MAX_RUN_NS, so that every time of the simulation
 * (release + period, duration x rate) stays within int64 ns. */
static int duration_arg(const char *opt, const char *s, int64_t *out, bool allow_zero)
{
	const char *why = NULL;
	if (allow_zero && pd_parse_duration_ns(s, out, &why) == 0 && *out == 0)
		return 0;
	if (pd_parse_run_ns(s, false, out, &why) != 0)
		return pd_cli_fail("simulate", PD_EXIT_USAGE, "%s '%s': %s (a duration with a unit, e.g. 10s, 250ms)",
				   opt, s, why);
	return 0;
}

static int window_arg(const char *s, struct pd_sim_params *p)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", s);
	char *colon = strchr(buf, ':');
	if (!colon)
		return pd_cli_fail("simulate", PD_EXIT_USAGE, "--trace-window '%s': expected A:B, e.g. 0s:200ms", s);
	*colon = '\0';
	if (duration_arg("--trace-window", buf, &p->trace_from_ns, true) ||
	    duration_arg("--trace-window", colon + 1, &p->trace_to_ns, false))
		return PD_EXIT_USAGE;
	if (p->trace_to_ns <= p->trace_from_ns)
		return pd_cli_fail("simulate", PD_EXIT_USAGE, "--trace-window '%s': needs A < B", s);
	return 0;
}

static int number_arg(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi)) {
		char a[32], b[32]; /* limits that read back exactly (%g prints 2^53 as 9.0072e+15) */
		return pd_cli_fail("simulate", PD_EXIT_USAGE, "%s '%s': expected a number in [%s, %s]", opt, s,
				   pd_fmt_double(lo, a, sizeof(a)), pd_fmt_double(hi, b, sizeof(b)));
	}
	*out = v;
	return 0;
}

static int parse(int argc, char **argv, struct pd_sim_params *p, bool *json, bool *fail_on_miss, bool *window,
		 bool *has_duration)
{
	static const struct option opts[] = {
		{"duration", required_argument, NULL, O_DURATION}, {"seed", required_argument, NULL, O_SEED},
		{"exec", required_argument, NULL, O_EXEC},         {"json", no_argument, NULL, O_JSON},
		{"trace", required_argument, NULL, O_TRACE},       {"trace-window", required_argument, NULL, O_WINDOW},
		{"background", required_argument, NULL, O_BG},     {"fair-server", required_argument, NULL, O_FAIR},
		{"jitter", required_argument, NULL, O_JITTER},     {"fail-on-miss", no_argument, NULL, O_FAIL},
		{"reclaim-all", no_argument, NULL, O_RECLAIM},     {"inject-overrun", required_argument, NULL, O_INJECT},
		{NULL, 0, NULL, 0}};
	int c;
	pd_err e = {0};
	double v = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int rc = 0;
		switch (c) {
		case O_DURATION:
			rc = duration_arg("--duration", optarg, &p->duration_ns, false);
			*has_duration = true;
			break;
		case O_SEED:
			rc = number_arg("--seed", optarg, 0, 9007199254740992.0, &v);
			p->seed = (uint64_t)v;
			break;
		case O_EXEC:
			if (pd_sim_parse_exec(optarg, p, &e))
				rc = pd_cli_fail("simulate", PD_EXIT_USAGE, "%s", e.msg);
			break;
		case O_JSON: *json = true; break;
		case O_TRACE: p->trace_path = optarg; break;
		case O_WINDOW: rc = window_arg(optarg, p); *window = true; break;
		case O_BG: rc = number_arg("--background", optarg, 0, 1, &p->background_util); break;
		case O_FAIR:
			if (pd_sim_parse_fair(optarg, &p->fair, &e))
				rc = pd_cli_fail("simulate", PD_EXIT_USAGE, "%s", e.msg);
			break;
		case O_JITTER: rc = duration_arg("--jitter", optarg, &p->release_jitter_ns, true); break;
		case O_FAIL: *fail_on_miss = true; break;
		case O_RECLAIM: p->reclaim_all = true; break;
		case O_INJECT:
			if (pd_sim_parse_inject(optarg, p, &e))
				rc = pd_cli_fail("simulate", PD_EXIT_USAGE, "--inject-overrun: %s", e.msg);
			break;
		default:
			rc = pd_cli_fail("simulate", PD_EXIT_USAGE, "unknown or incomplete option '%s' (see --help)",
					 argv[optind - 1]);
		}
		if (rc)
			return PD_EXIT_USAGE;
	}
	if (optind != argc - 1)
		return pd_cli_fail("simulate", PD_EXIT_USAGE, "expected one PLAN file (see --help)");
	return 0;
}

/* --exec replay:RUN: the run's measured jobs, and its length as the default duration (a replay
 * beyond the run would replay medians only). */
static int load_replay(struct pd_sim_params *prm, const pd_plan *p, bool has_duration, pd_sim_replay **out,
		       pd_err *e)
{
	pd_sim_replay *rp = pd_sim_replay_load(prm->replay_path, p, e);
	if (!rp)
		return -1;
	if (pd_sim_replay_jobs(rp) == 0) {
		pd_sim_replay_free(rp);
		return pd_err_set(e, PD_EXIT_USAGE, "replay: the run '%s' holds no executed CPU job of this plan",
				  prm->replay_path);
	}
	if (!has_duration && pd_sim_replay_duration(rp) > 0)
		prm->duration_ns = pd_sim_replay_duration(rp);
	prm->replay = rp;
	*out = rp;
	return 0;
}

static int run(int argc, char **argv)
{
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	bool json = false, fail_on_miss = false, window = false, has_duration = false;
	if (parse(argc, argv, &prm, &json, &fail_on_miss, &window, &has_duration))
		return PD_EXIT_USAGE;
	if (window && !prm.trace_path)
		return pd_cli_fail("simulate", PD_EXIT_USAGE, "--trace-window needs --trace FILE");
	pd_diags d;
	pd_diags_init(&d);
	pd_plan *p = pd_plan_load_file(argv[optind], &d);
	if (!p) {
		pd_diags_print(&d, stderr);
		pd_diags_free(&d);
		return PD_EXIT_USAGE;
	}
	pd_diags_free(&d);
	pd_err e = {0};
	pd_sim_replay *rp = NULL;
	if (prm.exec == PD_SIM_EXEC_REPLAY && load_replay(&prm, p, has_duration, &rp, &e)) {
		pd_plan_free(p);
		return pd_cli_fail("simulate", e.code ? e.code : PD_EXIT_ENV, "%s", e.msg);
	}
	if (prm.trace_path && !window) { /* default window: the whole run */
		prm.trace_from_ns = 0;
		prm.trace_to_ns = prm.duration_ns;
	}
	pd_sim_result *r = pd_sim_run(p, &prm, &e);
	if (!r) {
		pd_sim_replay_free(rp);
		pd_plan_free(p);
		return pd_cli_fail("simulate", e.code ? e.code : PD_EXIT_ENV, "%s", e.msg);
	}
	int rc = PD_EXIT_OK;
	if (json) {
		char *text = pd_sim_result_json(r, p);
		if (!text) {
			rc = pd_cli_fail("simulate", PD_EXIT_ENV, "out of memory");
		} else {
			fputs(text, stdout);
			fputc('\n', stdout);
			free(text);
		}
	} else {
		pd_sim_result_print(r, p, stdout);
	}
	if (rc == PD_EXIT_OK && fail_on_miss && r->misses > 0)
		rc = PD_EXIT_FAIL;
	pd_sim_result_free(r);
	pd_sim_replay_free(rp);
	pd_plan_free(p);
	return rc;
}

const struct pd_cmd pd_cmd_simulate = {
	"simulate", run, "discrete-event simulation of a plan: predicted power and deadline misses",
	"simulate PLAN [--duration T] [--seed S] [--exec MODEL] [--json] [--trace FILE [--trace-window A:B]]\n"
	"                [--background U] [--fair-server immediate|deferred|off] [--jitter T] [--fail-on-miss]\n"
	"                [--inject-overrun DAG/TASK:N:F]\n\n"
	"Simulates the plan on its platform: SCHED_DEADLINE per core (CBS, EDF, GRUB for reclaiming tasks),\n"
	"the fair deadline server, FIFO accelerators with FPGA reconfiguration, DAG precedence, and the\n"
	"platform power model.\n\n"
	"  --duration T         simulated time (default 10s; with replay, the run's), at most 2592000s (30 days)\n"
	"  --seed S             random seed (default 1)\n"
	"  --exec MODEL         wcet (default) | uniform (in [bcet, wcet]) | overrun:P:F (uniform, and with\n"
	"                       probability P a job needs F x wcet) | replay:RUN (every CPU job executes\n"
	"                       the CPU time the same job took in RUN, a run directory of this plan, plus\n"
	"                       the plan's per-job overhead; the duration defaults to the run's: do the\n"
	"                       misses RUN saw follow from the model and the execution times it measured?)\n"
	"  --json               one JSON object on stdout (docs/SIMULATOR.md)\n"
	"  --trace FILE         Chrome/Perfetto JSON trace (open in ui.perfetto.dev)\n"
	"  --trace-window A:B   only this window of the run, e.g. 0s:200ms (default: the whole run)\n"
	"  --background U       fair (SCHED_OTHER) load offered on every core, fraction of a CPU in [0, 1]\n"
	"  --fair-server MODE   immediate | deferred | off (default: deferred when the platform has one)\n"
	"  --jitter T           release jitter of the DAG sources, uniform in [0, T]\n"
	"  --reclaim-all        run every CPU task with SCHED_FLAG_RECLAIM (GRUB)\n"
	"  --inject-overrun DAG/TASK:N:F\n"
	"                       job N (from 0) of that task executes F x its demand, once (what a single\n"
	"                       transient costs under the DAG's 'late' policy)\n"
	"  --fail-on-miss       exit 1 when a DAG missed a deadline\n\n"
	"exit: 0 ok, 1 misses with --fail-on-miss, 2 bad usage or input, 3 cannot write the trace"};

/* SPDX-License-Identifier: MIT */
/*
 * powerdag demo - the whole tool on a machine with no board: start the board twin, optimise the
 * shipped twin DAG set for it, check and simulate the plan, deploy it over SSH for a short run,
 * print the report (predicted next to measured), refit the islands' background from that run, do it all
 * again on the refitted platform (the closed loop, once), compare the two runs' errors, and take the
 * twin down again on every path.
 *
 * The twin and the deploy go through their libraries (twin/pd_twin.h, deployer/pd_deployer.h);
 * optimize, check, simulate and report run as this very binary (/proc/self/exe) with argument vectors,
 * so the demo shows exactly what those commands print for a user. No shell is involved anywhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli_impl.h"
#include "deployer/pd_deployer.h"
#include "twin/pd_twin.h"

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { (void)sig; interrupted = 1; }

/* Runs `powerdag ARGS...` (this binary); stdout goes to capture_path when non-NULL. */
static int run_self(const char *self, const char *const *args, const char *capture_path)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (capture_path) {
			int fd = open(capture_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
			if (fd < 0 || dup2(fd, 1) < 0)
				_exit(127);
		}
		execv(self, (char *const *)args);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The shipped twin DAG set: installed, or in the source tree next to the build directory. */
static int find_dags(const char *self, char *out, size_t n)
{
	char tmp[1024];
	snprintf(tmp, sizeof(tmp), "%s", self);
	const char *d = dirname(tmp);
	const char *rel[] = {"../share/powerdag/examples/twin.yaml", "../dags/examples/twin.yaml",
			     "../../dags/examples/twin.yaml", "../../../dags/examples/twin.yaml"};
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(out, n, "%s/%s", d, rel[i]);
		if (access(out, R_OK) == 0)
			return 0;
	}
	return -1;
}

/* When no example is found the demo generates one small set sized for the twin (~30 % of a core),
 * whose jobs do their whole WCET like the example's: with bcet < wcet the rails would read below the
 * plan by the demand ratio, the model right and the work different (docs/TWIN.md "Fidelity"). */
static int generate_dags(const char *path, pd_err *e)
{
	struct pd_gen_params gp;
	pd_dags_gen_defaults(&gp);
	gp.n_dags = 1;
	gp.min_tasks = 3;
	gp.max_tasks = 4;
	gp.util = 0.3;
	gp.seed = 7;
	gp.whole_wcet = true;
	pd_dagset *s = pd_dags_generate(&gp, e);
	if (!s)
		return e->code ? e->code : PD_EXIT_ENV;
	int rc = pd_dags_write_file(s, path, e);
	pd_dags_free(s);
	return rc;
}

struct twin_info {
	char uri[256], platform[512], identity[512], known_hosts[512];
	bool vm; /* the twin up is a qemu guest (twin up --vm), not a namespace of this kernel */
};

static int twin_info(const char *state, struct twin_info *ti, bool *running, pd_err *e)
{
	char *js = NULL;
	*running = false;
	int rc = pd_twin_status_json(state, &js, running, e);
	if (rc)
		return rc;
	json_error_t je;
	json_t *j = json_loads(js, 0, &je);
	free(js);
	if (!j)
		return pd_err_set(e, PD_EXIT_ENV, "twin status is not JSON: %s", je.text);
	const char *keys[] = {"uri", "platform", "identity", "known_hosts"};
	char *dst[] = {ti->uri, ti->platform, ti->identity, ti->known_hosts};
	size_t sz[] = {sizeof(ti->uri), sizeof(ti->platform), sizeof(ti->identity), sizeof(ti->known_hosts)};
	for (size_t i = 0; i < 4; i++) {
		const char *v = json_string_value(json_object_get(j, keys[i]));
		if (!v) {
			json_decref(j);
			return pd_err_set(e, PD_EXIT_ENV, "twin status lacks '%s'", keys[i]);
		}
		snprintf(dst[i], sz[i], "%s", v);
	}
	const char *kind = json_string_value(json_object_get(j, "kind"));
	ti->vm = kind && strcmp(kind, "vm") == 0;
	json_decref(j);
	return 0;
}

static void step(const char *what)
{
	printf("\n== demo: %s\n", what);
	fflush(stdout);
}

/* One pass of the loop into RUNDIR dir (made by the caller, private): optimize dags on platform, check,
 * simulate, deploy to the twin for 10 s, report (text on stdout, JSON into dir/report.json). */
static int one_run(const char *self, const char *dir, const char *dags, const char *platform, const struct twin_info *ti)
{
	char plan[1100], sim[1100], rep_json[1100];
	snprintf(plan, sizeof(plan), "%s/demo-plan.yaml", dir);
	snprintf(sim, sizeof(sim), "%s/simulate.json", dir);
	snprintf(rep_json, sizeof(rep_json), "%s/report.json", dir);
	step("optimize");
	/* a short time limit: the demo shows the flow; the exact solver's best plan so far is kept */
	const char *opt[] = {"powerdag", "optimize", dags, platform, "-o", plan, "--time-limit", "5", NULL};
	int rc = run_self(self, opt, NULL);
	if (rc)
		return pd_cli_fail("demo", rc, "optimize failed (exit %d)", rc);
	step("check");
	const char *chk[] = {"powerdag", "check", plan, NULL};
	rc = run_self(self, chk, NULL);
	if (rc)
		return pd_cli_fail("demo", rc, "the plan does not pass the checker (exit %d)", rc);
	step("simulate");
	const char *simv[] = {"powerdag", "simulate", plan, "--duration", "10s", "--json", NULL};
	rc = run_self(self, simv, sim);
	if (rc)
		return pd_cli_fail("demo", rc, "simulate failed (exit %d)", rc);
	fprintf(stderr, "prediction written to %s\n", sim);
	if (interrupted)
		return pd_cli_fail("demo", PD_EXIT_ENV, "interrupted");
	step("deploy to the twin (10 s run)");
	pd_err e = {0};
	struct pd_deploy_opts o = {
		.plan_path = plan,
		.board_uri = ti->uri,
		.duration_ns = 10 * PD_NS_PER_S,
		.out_dir = dir,
		.tp = {.identity = ti->identity, .known_hosts = ti->known_hosts},
		.self_exe = self,
		.simulate_json = NULL, /* already in RUNDIR */
		.out_dir_ready = true, /* made by the caller, holds the plan and the prediction */
		.fault = getenv("POWERDAG_FAULT"),
		.interrupted = &interrupted,
		.log = stderr,
	};
	struct pd_deploy_result r;
	rc = pd_deploy_run(&o, &r, &e);
	if (rc)
		return pd_cli_fail("demo", rc, "deploy: %s", e.msg);
	fprintf(stderr, "run collected in %s; board restored (setup %.2f s, teardown %.2f s)\n", dir, r.setup_s,
		r.teardown_s);
	step("report");
	const char *rep[] = {"powerdag", "report", dir, NULL};
	const char *repj[] = {"powerdag", "report", dir, "--json", NULL};
	rc = run_self(self, rep, NULL);
	if (!rc)
		rc = run_self(self, repj, rep_json);
	if (rc)
		return pd_cli_fail("demo", rc, "report failed (exit %d)", rc);
	return PD_EXIT_OK;
}

/* Per rail of a report.json (and "total"): the error against the plan and against the model at what
 * really ran (NAN when unknown); returns how many rows, 0 when the file cannot be read. */
struct rail_err {
	char name[64];
	double plan_pct, model_pct;
};
static double jnum_or_nan(json_t *v) { return json_is_number(v) ? json_number_value(v) : NAN; }
static size_t rail_errors(const char *rep_json, struct rail_err *e, size_t n)
{
	json_t *j = json_load_file(rep_json, 0, NULL);
	if (!j)
		return 0;
	json_t *rs = json_object_get(json_object_get(j, "measured"), "rail_stats");
	size_t k = 0;
	for (size_t i = 0; i < json_array_size(rs) && k + 1 < n; i++) {
		json_t *x = json_array_get(rs, i);
		double avg = jnum_or_nan(json_object_get(x, "avg_w")), pred = jnum_or_nan(json_object_get(x, "predicted_w"));
		const char *name = json_string_value(json_object_get(x, "name"));
		if (!(pred > 0) || !name)
			continue;
		snprintf(e[k].name, sizeof(e[k].name), "%s", name);
		e[k].plan_pct = (avg / pred - 1) * 100;
		e[k++].model_pct = jnum_or_nan(json_object_get(x, "model_error_pct"));
	}
	if (k < n && json_is_number(json_object_get(j, "power_error_pct"))) {
		snprintf(e[k].name, sizeof(e[k].name), "total");
		e[k].plan_pct = json_number_value(json_object_get(j, "power_error_pct"));
		e[k++].model_pct = NAN;
	}
	json_decref(j);
	return k;
}

static void pct(double v, char *buf, size_t n)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%+.1f%%", v);
}

/* The closed loop's effect, rail by rail: how far each run was from its plan, and from the model at
 * what really ran (the busy time the jobs and the other software took: the report's "model at
 * measured"), which tells a wrong table from work that took longer or shorter than planned. */
static void compare_runs(const char *dir1, const char *dir2)
{
	char p1[1200], p2[1200];
	struct rail_err a[16], b[16];
	snprintf(p1, sizeof(p1), "%s/report.json", dir1);
	snprintf(p2, sizeof(p2), "%s/report.json", dir2);
	size_t ka = rail_errors(p1, a, 16), kb = rail_errors(p2, b, 16);
	printf("  %-12s %12s %12s %14s %14s\n", "error of", "plan, run 1", "plan, run 2", "model, run 1", "model, run 2");
	for (size_t i = 0; i < ka; i++)
		for (size_t j = 0; j < kb; j++) {
			if (strcmp(a[i].name, b[j].name))
				continue;
			char c[4][32];
			pct(a[i].plan_pct, c[0], 32), pct(b[j].plan_pct, c[1], 32);
			pct(a[i].model_pct, c[2], 32), pct(b[j].model_pct, c[3], 32);
			printf("  %-12s %12s %12s %14s %14s\n", a[i].name, c[0], c[1], c[2], c[3]);
		}
	if (!ka || !kb)
		printf("  (a report had no power to compare)\n");
	printf("(model: at the busy time that really ran. Run 2 plans with the software beside the plan that\n"
	       " run 1 measured; what is left against the plan is work that took more or less CPU time than\n"
	       " planned, the reports' busy columns)\n");
}

/* Everything after the twin is up; the caller takes the twin down whatever this returns. The loop of
 * docs/REFIT.md, closed once: run 1 on the twin's nominal platform, `refit --what background` from
 * what it measured (the CPU time of the software beside the plan: the agent's sampler, iiod, sshd),
 * run 2 on the refitted platform, and the two runs' error against their plans side by side. */
static int pipeline(const char *self, const char *out, const struct twin_info *ti)
{
	char dags[1024], dir2[1024], fitted[1200];
	pd_err e = {0};
	if (find_dags(self, dags, sizeof(dags)) != 0) {
		snprintf(dags, sizeof(dags), "%s/dags.yaml", out);
		if (generate_dags(dags, &e))
			return pd_cli_fail("demo", e.code ? e.code : PD_EXIT_ENV, "generating a DAG set: %s", e.msg);
	}
	int rc = one_run(self, out, dags, ti->platform, ti);
	if (rc)
		return rc;
	snprintf(dir2, sizeof(dir2), "%s/refit", out);
	snprintf(fitted, sizeof(fitted), "%s/refit/platform.yaml", out);
	int dfd;
	bool created;
	if (pd_dir_open_private(dir2, false, &dfd, &created, &e))
		return pd_cli_fail("demo", e.code, "%s", e.msg);
	close(dfd);
	/* only the background: the twin's power table is its truth already, and one 10-s run's rail
	 * noise (+-1 % between runs here) fitted into the table came back as a -2.5 % error in run 2 */
	step("refit the islands' background from run 1 (powerdag refit --what background)");
	const char *rf[] = {"powerdag", "refit", out, "--what", "background", "-o", fitted, NULL};
	rc = run_self(self, rf, NULL);
	if (rc)
		return pd_cli_fail("demo", rc, "refit failed (exit %d)", rc);
	printf("\n== demo: run 2, on the refitted platform (%s)\n", fitted);
	if ((rc = one_run(self, dir2, dags, fitted, ti)))
		return rc;
	step("closed loop: each run against its plan");
	compare_runs(out, dir2);
	return PD_EXIT_OK;
}

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"out", required_argument, NULL, 'o'}, {"vm", no_argument, NULL, 'v'}, {NULL, 0, NULL, 0}};
	char defout[64];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(defout, sizeof(defout), "powerdag-demo-%Y%m%d-%H%M%S", &tm);
	const char *out = defout;
	bool vm = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		if (c == 'o')
			out = optarg;
		else if (c == 'v')
			vm = true;
		else
			return pd_cli_fail("demo", PD_EXIT_USAGE, "see 'powerdag demo --help'");
	}
	if (optind != argc)
		return pd_cli_fail("demo", PD_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	char self[1024];
	ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (l <= 0)
		return pd_cli_fail("demo", PD_EXIT_ENV, "cannot find the powerdag binary: %s", strerror(errno));
	self[l] = '\0';
	/* a twin already up is used (and left up); --vm asks for a VM twin, so a namespace twin that is
	 * up is refused before anything is written (only one twin runs per state directory) */
	char state[512];
	pd_twin_state_dir(NULL, state, sizeof(state));
	struct twin_info ti;
	bool running = false, started = false;
	pd_err e = {0};
	bool use_up = twin_info(state, &ti, &running, &e) == 0 && running;
	if (use_up && vm && !ti.vm)
		return pd_cli_fail("demo", PD_EXIT_ENV,
				   "a namespace twin is up at %s: take it down first (powerdag twin down) or run demo without --vm",
				   ti.uri);
	e = (pd_err){0};
	/* a new directory of ours (docs/DEPLOY.md): no one else can plant a link where the demo writes */
	int dfd;
	bool created;
	pd_err de0 = {0};
	if (pd_dir_open_private(out, false, &dfd, &created, &de0))
		return pd_cli_fail("demo", de0.code, "%s", de0.msg);
	close(dfd);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (use_up) {
		fprintf(stderr, "== demo: using the %s twin already up at %s (left up afterwards)\n", ti.vm ? "VM" : "namespace",
			ti.uri);
	} else {
		step(vm ? "twin up --vm (a qemu guest with Debian's 6.1 kernel)" : "twin up");
		struct pd_twin_opts to = {.self_exe = self, .vm = vm};
		char uri[256];
		int rc = pd_twin_up(&to, uri, sizeof(uri), &e);
		if (rc)
			return pd_cli_fail("demo", rc, "twin up: %s", e.msg);
		started = true;
		fprintf(stderr, "twin up at %s\n", uri);
		if ((rc = twin_info(state, &ti, &running, &e)) != 0) {
			bool was;
			pd_err de = {0};
			pd_twin_down(state, &was, &de);
			return pd_cli_fail("demo", rc, "twin status: %s", e.msg);
		}
	}
	int rc = pipeline(self, out, &ti);
	if (started) {
		step("twin down");
		bool was = false;
		pd_err de = {0};
		if (pd_twin_down(state, &was, &de)) {
			pd_cli_fail("demo", PD_EXIT_ENV, "twin down: %s", de.msg);
			if (!rc)
				rc = PD_EXIT_ENV;
		}
	}
	if (rc == 0)
		fprintf(stderr, "\ndemo done: the run is kept in %s (powerdag report %s --html report.html)\n", out, out);
	return rc;
}

const struct pd_cmd pd_cmd_demo = {
	"demo", run, "hardware-free demo: twin up, optimize, check, simulate, deploy, report, refit, again, down",
	"demo [--vm] [--out RUNDIR]\n\n"
	"  --out RUNDIR   where the run is kept: a new or empty directory of yours\n"
	"                 (default ./powerdag-demo-YYYYmmdd-HHMMSS)\n"
	"  --vm           the board is a VM twin (`twin up --vm`: a qemu guest running Debian 12's 6.1\n"
	"                 kernel, cgroup v2, no fair server; its image is built once, cached); a VM twin\n"
	"                 already up is used; a namespace twin that is up is refused (exit 3)\n\n"
	"Needs root (the twin uses network and mount namespaces). Starts the board twin unless one is\n"
	"already up (then it is used and left up), optimises dags/examples/twin.yaml for it, checks and\n"
	"simulates the plan (RUNDIR/simulate.json), deploys it over SSH for 10 s, prints the report\n"
	"(predicted next to measured power and misses), refits the islands' background from that run\n"
	"(refit --what background: RUNDIR/refit/platform.yaml), does it all again on it into\n"
	"RUNDIR/refit, prints each run's error against its plan rail by rail, and takes the twin down on\n"
	"every path."};

/* SPDX-License-Identifier: MIT */
/*
 * powerdag deploy - configure a board for a plan, run the agent, collect the run into RUNDIR and
 * restore the board (deployer/pd_deployer.h; docs/DEPLOY.md). Ctrl-C only sets a flag: the deployer
 * then stops the agent, fetches what was collected and restores the board before exiting.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli_impl.h"
#include "deployer/pd_deployer.h"
#include "twin/pd_twin.h"

/* A bare number is seconds; checked (18446744074 once wrapped to a negative and ran the default). */
static int parse_duration(const char *s, int64_t *ns, const char **why)
{
	return pd_parse_run_ns(s, true, ns, why);
}

static int run(int argc, char **argv)
{
	struct pd_cli_twin tb;
	static const struct option longopts[] = {
		{"board", required_argument, NULL, 'b'},   {"duration", required_argument, NULL, 'd'},
		{"out", required_argument, NULL, 'o'},     {"no-restore", no_argument, NULL, 'n'},
		{"identity", required_argument, NULL, 'i'}, {"known-hosts", required_argument, NULL, 'k'},
		{"agent", required_argument, NULL, 'a'},   {"board-root", required_argument, NULL, 'r'},
		{"cgroup", required_argument, NULL, 'g'},  {"cpu-map", required_argument, NULL, 'm'},
		{NULL, 0, NULL, 0},
	};
	struct pd_deploy_opts o = {.log = stderr, .interrupted = NULL} /* set once the arguments are checked */;
	char defout[64];
	int cpu_map[PD_PLATFORM_MAX_CPU + 1];
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "b:d:o:i:", longopts, NULL)) != -1) {
		switch (c) {
		case 'b': o.board_uri = optarg; break;
		case 'd': {
			const char *why = "";
			if (parse_duration(optarg, &o.duration_ns, &why))
				return pd_cli_fail("deploy", PD_EXIT_USAGE, "--duration '%s': %s (e.g. 10s, 500ms)",
						   optarg, why);
			break;
		}
		case 'o': o.out_dir = optarg; break;
		case 'n': o.no_restore = true; break;
		case 'i': o.tp.identity = optarg; break;
		case 'k': o.tp.known_hosts = optarg; break;
		case 'a': o.agent_path = optarg; break;
		case 'r':
			o.board.root = optarg;
			o.board.plain_files = true;
			break;
		case 'g': {
			pd_err ce = {0};
			if (pd_deploy_cgroup_name_check(optarg, &ce))
				return pd_cli_fail("deploy", PD_EXIT_USAGE, "--cgroup: %s", ce.msg);
			o.board.cgroup_name = optarg;
			break;
		}
		case 'm': {
			const char *why = "";
			if (pd_parse_cpuseq(optarg, cpu_map, sizeof(cpu_map) / sizeof(cpu_map[0]), &o.n_cpu_map, &why))
				return pd_cli_fail("deploy", PD_EXIT_USAGE, "--cpu-map '%s': %s", optarg, why);
			o.cpu_map = cpu_map;
			break;
		}
		default: return pd_cli_fail("deploy", PD_EXIT_USAGE, "see 'powerdag deploy --help'");
		}
	}
	if (optind != argc - 1)
		return pd_cli_fail("deploy", PD_EXIT_USAGE, "expected one PLAN (see 'powerdag deploy --help')");
	if (!o.board_uri)
		return pd_cli_fail("deploy", PD_EXIT_USAGE, "--board URI is required (ssh://[user@]host[:port] or local)");
	pd_err ue = {0};
	if (strcmp(o.board_uri, "twin") && pd_deploy_transport_check_uri(o.board_uri, &ue))
		return pd_cli_fail("deploy", PD_EXIT_USAGE, "--board: %s", ue.msg);
	/* files named on the command line are checked now: exit 2 must come before the first write */
	const struct {
		const char *opt, *path;
		int mode;
	} files[] = {{"--identity", o.tp.identity, R_OK}, {"--known-hosts", o.tp.known_hosts, R_OK},
		     {"--agent", o.agent_path, R_OK | X_OK}, {"--board-root", o.board.root, R_OK | X_OK}};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (files[i].path && access(files[i].path, files[i].mode) != 0)
			return pd_cli_fail("deploy", PD_EXIT_USAGE, "%s %s: %s", files[i].opt, files[i].path,
					   strerror(errno));
	if (!strcmp(o.board_uri, "twin")) {
		int rc = pd_cli_twin_board("deploy", &tb, &o.board_uri, &o.tp.identity, &o.tp.known_hosts,
					   &o.board.cgroup_name);
		if (rc)
			return rc;
	}
	o.plan_path = argv[optind];
	if (!o.out_dir) {
		time_t t = time(NULL);
		struct tm tm;
		localtime_r(&t, &tm);
		strftime(defout, sizeof(defout), "run-%Y%m%d-%H%M%S", &tm);
		o.out_dir = defout;
	}
	o.fault = getenv("POWERDAG_FAULT"); /* test-only, docs/DEPLOY.md */
	o.interrupted = pd_cli_catch_interrupts();
	struct pd_deploy_result r;
	pd_err e = {0};
	int rc = pd_deploy_run(&o, &r, &e);
	if (rc)
		return pd_cli_fail("deploy", rc, "%s", e.msg);
	printf("run collected in %s (%llu bytes of run log, agent exit %d); board %s; setup %.2f s, teardown "
	       "%.2f s\n", o.out_dir, (unsigned long long)r.log_bytes, r.agent_status,
	       o.no_restore ? "left configured (--no-restore)" : "restored", r.setup_s, r.teardown_s);
	return PD_EXIT_OK;
}

const struct pd_cmd pd_cmd_deploy = {
	"deploy", run, "configure a board for a plan, run it, collect the data, restore the board",
	"deploy PLAN --board URI [--duration T] [--out RUNDIR] [--no-restore]\n"
	"                [--identity KEY] [--known-hosts FILE] [--agent PATH] [--cgroup NAME]\n"
	"                [--cpu-map LIST]\n\n"
	"  --board URI         ssh://[user@]host[:port], local (this machine, no SSH), or twin\n"
	"                      (the board twin that is up, with its key and known_hosts)\n"
	"  --duration T        run length (10s, 500ms; a bare number is seconds), at most\n"
	"                      2592000s (30 days); default 10s\n"
	"  --out RUNDIR        where plan.yaml, run.pdlog, deploy.json, agent.stderr go: a new\n"
	"                      or empty directory of yours, not writable by group or others;\n"
	"                      default ./run-YYYYmmdd-HHMMSS\n"
	"  --no-restore        leave the board configured for the plan afterwards\n"
	"  --identity KEY      SSH private key (default: ~/.ssh/id_ed25519, id_rsa, agent)\n"
	"  --known-hosts FILE  known_hosts to verify the board's host key against (default\n"
	"                      ~/.ssh/known_hosts); an unknown or changed key is refused (exit 3)\n"
	"  --agent PATH        powerdag-agent binary for the board's architecture (default: next\n"
	"                      to powerdag, or in the build tree)\n"
	"  --cgroup NAME       the cpuset directory made under the board's cpuset root (default\n"
	"                      powerdag; --board twin: the twin's, powerdag-NETNS with\n"
	"                      --host-cpus): boards that share one kernel deploy at once, each in\n"
	"                      its own directory, on disjoint CPUs\n"
	"  --cpu-map LIST      the board's CPU id of each core of the plan's platform, in the\n"
	"                      file's order (e.g. 1, or 4-7,0-3): the plan runs on those CPUs,\n"
	"                      the same plan on another board's numbering (a twin on other\n"
	"                      host CPUs); RUNDIR/plan.yaml is the renumbered plan\n"
	"  --board-root DIR    (tests) prefix of every board file: a fake sysfs tree\n\n"
	"Pre-flight checks the board before touching it (exit 3 with every problem listed), the\n"
	"plan's plugins included: a plan is code run as root on the board, its plugins must be\n"
	"absolute paths that only root can write (docs/DEPLOY.md, trust model). The board is\n"
	"restored on every exit path, Ctrl-C included. known_hosts @revoked keys are refused,\n"
	"@cert-authority lines are not supported. Environment POWERDAG_FAULT=STEP:KIND injects\n"
	"faults (tests only; docs/DEPLOY.md)."};

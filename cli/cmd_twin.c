/* SPDX-License-Identifier: MIT */
/*
 * powerdag twin up [PLATFORM] [--vm [--arch arm64]] [--state DIR] [--netns NAME] [--subnet A.B.C.D] [--port N]
 *                  [--cpus N | --host-cpus LIST]
 * powerdag twin status [--json] [--state DIR]
 * powerdag twin down [--state DIR]
 * (and the hidden `twin _daemon ...`, the twin's own daemon, started by `up`)
 */
#include "cli/cli_impl.h"
#include "twin/pd_twin.h"

#include <getopt.h>
#include <stdlib.h>
#include <jansson.h>
#include <string.h>

static int usage_error(const char *msg)
{
	return pd_cli_fail("twin", PD_EXIT_USAGE, "%s (see powerdag twin --help)", msg);
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int cmd_up(struct pd_twin_opts *o, bool json)
{
	char uri[256];
	pd_err e = {0};
	int rc = pd_twin_up(o, uri, sizeof(uri), &e);
	if (rc)
		return pd_cli_fail("twin", rc, "%s", e.msg);
	if (json) {
		char *s = NULL;
		bool running;
		if (pd_twin_status_json(o->state_dir, &s, &running, &e) == 0)
			printf("%s\n", s);
		free(s);
		return PD_EXIT_OK;
	}
	printf("%s\n", uri);
	return PD_EXIT_OK;
}

static int cmd_status(const char *state, bool json)
{
	char *s = NULL;
	bool running = false;
	pd_err e = {0};
	int rc = pd_twin_status_json(state, &s, &running, &e);
	if (rc) {
		if (json)
			printf("{\"running\": false}\n");
		return pd_cli_fail("twin", rc, "%s", e.msg);
	}
	json_t *j = json_loads(s, 0, NULL);
	const char *kind = "netns", *accel = "", *kernel = "", *arch = "?";
	json_unpack(j, "{s?s,s?s,s?s,s?s}", "kind", &kind, "accel", &accel, "kernel", &kernel, "arch", &arch);
	char what[160];
	if (strcmp(kind, "vm") == 0)
		snprintf(what, sizeof(what), "vm, %s, %s, kernel %s", arch, accel, kernel);
	else
		snprintf(what, sizeof(what), "netns, %s, this machine's kernel", arch);
	if (json)
		printf("%s\n", s);
	else
		printf("twin %s (%s)\n%s\n", running ? "running" : "NOT running (crashed? `powerdag twin down` cleans it)", what, s);
	json_decref(j);
	free(s);
	return running ? PD_EXIT_OK : PD_EXIT_ENV;
}

static int cmd_down(const char *state)
{
	bool was_up = false;
	pd_err e = {0};
	int rc = pd_twin_down(state, &was_up, &e);
	if (rc)
		return pd_cli_fail("twin", rc, "%s", e.msg);
	fprintf(stderr, "powerdag twin: %s\n", was_up ? "down" : "no twin recorded: nothing to do");
	return PD_EXIT_OK;
}

static int run(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "_daemon") == 0)
		return pd_twin_daemon_main(argc - 1, argv + 1);
	if (pd_cli_wants_help(argc, argv)) {
		pd_cli_help("twin", stdout);
		return PD_EXIT_OK;
	}
	if (argc < 2)
		return usage_error("missing action: up, status or down");
	const char *action = argv[1];
	struct pd_twin_opts o = {0};
	bool json = false;
	static const struct option longs[] = {
		{"state", required_argument, NULL, 's'}, {"netns", required_argument, NULL, 'n'},
		{"subnet", required_argument, NULL, 'a'}, {"port", required_argument, NULL, 'p'},
		{"cpus", required_argument, NULL, 'c'},   {"json", no_argument, NULL, 'j'},
		{"vm", no_argument, NULL, 'v'},          {"arch", required_argument, NULL, 'r'},
		{"host-cpus", required_argument, NULL, 'H'}, {NULL, 0, NULL, 0},
	};
	/* options may follow or precede PLATFORM: GNU getopt permutes argv after the action word */
	int ac = argc - 1;
	char **av = argv + 1;
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(ac, av, "", longs, NULL)) != -1) {
		switch (c) {
		case 's': o.state_dir = optarg; break;
		case 'n': o.netns = optarg; break;
		case 'a': o.subnet = optarg; break;
		case 'p':
			if (parse_int(optarg, 1, 65535, &o.ssh_port))
				return usage_error("--port: expected 1..65535");
			break;
		case 'c':
			if (parse_int(optarg, 1, 64, &o.n_cpus))
				return usage_error("--cpus: expected 1..64");
			break;
		case 'j': json = true; break;
		case 'v': o.vm = true; break;
		case 'r': o.arch = optarg; break; /* checked by pd_twin_up: exit 2 when unknown or without --vm */
		case 'H': o.host_cpus = optarg; break; /* checked by pd_twin_up (exit 2) */
		default: return usage_error("unknown option");
		}
	}
	int rest = ac - optind;
	if (strcmp(action, "up") == 0) {
		if (rest > 1)
			return usage_error("up takes at most one PLATFORM file");
		o.platform = rest ? av[optind] : NULL;
		return cmd_up(&o, json);
	}
	if (rest)
		return usage_error("unexpected argument");
	if (strcmp(action, "status") == 0)
		return cmd_status(o.state_dir, json);
	if (strcmp(action, "down") == 0)
		return cmd_down(o.state_dir);
	return usage_error("unknown action (up, status, down)");
}

const struct pd_cmd pd_cmd_twin = {
	"twin", run, "start/stop a hardware-free emulated board (board twin)",
	"twin up [PLATFORM] [--vm [--arch x86_64|arm64]] [--state DIR] [--netns NAME] [--subnet A.B.C.D] [--port N]\n"
	"                     [--cpus N | --host-cpus LIST] [--json]\n"
	"       powerdag twin status [--json] [--state DIR]\n"
	"       powerdag twin down [--state DIR]\n\n"
	"  up      start the twin (needs root): prints its board URI ssh://root@ADDR:PORT; writes the\n"
	"          twin's platform.yaml, identity key and known_hosts into the state dir. Without\n"
	"          PLATFORM the twin emulates the ODROID-XU4 islands (one core per host CPU) plus an\n"
	"          emulated GPU and FPGA slot. Exit 3 when a twin is already up there.\n"
	"          With --vm the board is a qemu guest running Debian 12's 6.1 kernel (cgroup v2, no\n"
	"          fair server), KVM when a boot probe succeeded on this machine, TCG otherwise; its\n"
	"          image is built once from Debian packages into $POWERDAG_VM_CACHE or\n"
	"          /var/cache/powerdag/vm (scripts/vm-image.sh, a few minutes).\n"
	"          --arch arm64 boots Debian's arm64 6.1 kernel on an emulated Cortex-A53 (qemu virt\n"
	"          board, TCG, 3 twin cores + 1 by default) from $POWERDAG_VM_CACHE_ARM64 or\n"
	"          /var/cache/powerdag/vm-arm64 (scripts/vm-image-arm64.sh); the guest runs an aarch64\n"
	"          powerdag, from\n"
	"          $POWERDAG_VM_EXE_ARM64 or build-aarch64-full/ (`scripts/cross-build.sh aarch64\n"
	"          --full`): exit 3 when there is none, exit 2 for an unknown --arch.\n"
	"  status  prints the twin's record (uri, platform, identity, known_hosts, iio_uri, pids,\n"
	"          kind netns|vm, arch (the board's uname -m), for a vm accel kvm|tcg and kernel,\n"
	"          running); exit 3 when no twin is up or it is not running.\n"
	"  down    ends every twin process, removes netns, veth, mounts and state files (also after a\n"
	"          crash).\n\n"
	"  --state DIR      state directory (default $POWERDAG_TWIN_DIR or /run/powerdag-twin)\n"
	"  --netns NAME     network namespace (default $POWERDAG_TWIN_NETNS or powerdag-twin)\n"
	"  --subnet A.B.C.D base of the private /30 (default $POWERDAG_TWIN_SUBNET or 10.213.77.0):\n"
	"                   host .1, board .2\n"
	"  --port N         the board's SSH port (default 22)\n"
	"  --cpus N         twin cores (default: the host's online CPUs; for --arch arm64 at\n"
	"                   most 3, the ZCU102's);\n"
	"                   a VM guest has one vCPU more, for its root cgroup\n"
	"  --host-cpus LIST namespace twin: its cores are these host CPUs (1, 0,2-3), and its\n"
	"                   deploys use their own cpuset directory powerdag-NETNS, so twins on\n"
	"                   disjoint CPUs deploy at the same time\n"
	"See docs/TWIN.md.",
};

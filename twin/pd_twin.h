/* SPDX-License-Identifier: MIT */
/*
 * pd_twin.h - the board twin: a hardware-free emulated board that the real code paths talk to.
 *
 * `pd_twin_up` starts, on this machine:
 *   - a named network namespace NETNS with a veth pair on a private /30 (host .1, board .2);
 *   - a daemon (`powerdag twin _daemon`) in that network namespace and in a private mount namespace,
 *     serving a FUSE filesystem whose files are bound over the board's sysfs paths (cpufreq, devfreq,
 *     fair_server debugfs, FPGA manager, IIO power rails, /sys/kernel/powerdag-twin accelerators) and
 *     a private /lib/firmware; every write is validated as the kernel would and changes the twin's
 *     state; rail values are computed at read time from the platform power model;
 *   - the real OpenSSH server and the real iiod, children of the daemon, so that SSH sessions and
 *     libiio's network backend see that emulated board.
 * The twin's platform file (STATE/platform.yaml) describes exactly what it emulates. Details:
 * docs/TWIN.md.
 *
 * Invariants: every process the twin starts lives in its mount namespace (recorded by inode in
 * STATE/twin.json), so `pd_twin_down` can end all of them by pid, even after a crash; nothing is
 * ever mounted in the host's mount namespace; the host's sshd and ~/.ssh are never touched.
 */
#ifndef PD_TWIN_H
#define PD_TWIN_H

#include "core/pd_core.h"
#include "platforms/pd_platform.h"

#define PD_TWIN_DEFAULT_DIR "/run/powerdag-twin"
#define PD_TWIN_DEFAULT_NETNS "powerdag-twin"
#define PD_TWIN_DEFAULT_SUBNET "10.213.77.0"
#define PD_TWIN_IIOD_PORT 30431

struct pd_twin_opts {
	const char *state_dir; /* NULL: $POWERDAG_TWIN_DIR, else PD_TWIN_DEFAULT_DIR */
	const char *platform;  /* source platform file; NULL: the built-in XU4-derived twin */
	const char *netns;     /* NULL: $POWERDAG_TWIN_NETNS, else PD_TWIN_DEFAULT_NETNS */
	const char *subnet;    /* base of a /30; NULL: $POWERDAG_TWIN_SUBNET, else PD_TWIN_DEFAULT_SUBNET */
	int ssh_port;          /* 0: 22 */
	int n_cpus;            /* twin cores; 0: the host's online CPUs */
	const char *host_cpus; /* namespace twin: the host CPUs that are its cores ("1", "0,2-3"); NULL:
				* 0 .. n_cpus-1. Given, the twin's deploys use their own cpuset directory
				* (powerdag-NETNS), so twins on disjoint CPUs deploy at the same time */
	const char *self_exe;  /* a binary that runs `twin _daemon` (the powerdag binary) */
	bool vm;               /* a qemu guest with Debian's 6.1 kernel instead of a namespace (twin/vm.c) */
	const char *arch;      /* vm: the guest's architecture, x86_64 (NULL) or arm64 (aarch64, TCG) */
};

/* The state directory chosen by opts / environment (static storage not used: copies into buf). */
const char *pd_twin_state_dir(const char *requested, char *buf, size_t n);

/* Starts the twin and fills uri (ssh://root@ADDR:PORT). Exit-code classes in e: 2 bad input
 * (platform file, options), 3 environment (not root, missing sshd/iiod/fuse, already up). */
int pd_twin_up(const struct pd_twin_opts *o, char *uri, size_t uri_n, pd_err *e);

/* Ends every process of the twin (by pid), removes the netns, the veth and the state files. Also
 * cleans a crashed twin. *was_up tells whether anything was found. */
int pd_twin_down(const char *state_dir, bool *was_up, pd_err *e);

/* The twin's status document (JSON text, caller frees): uri, platform, identity, known_hosts,
 * iio_uri, pids, running. Returns PD_EXIT_ENV in e when no twin is recorded in state_dir. */
int pd_twin_status_json(const char *state_dir, char **json, bool *running, pd_err *e);

/* The twin's platform derived from a source platform (NULL: built-in default) for n_cpus cores,
 * with its sensors served by iiod at iio_uri: YAML text (with the top-level "platform:" key). */
int pd_twin_derive_platform(const char *src_path, int n_cpus, const char *iio_uri, pd_buf *yaml, pd_err *e);
/* The same for a board kernel with or without the fair deadline server (the VM twin's Debian 6.1
 * has none: the derived platform then declares no dl.fair_server, whatever the source says). */
int pd_twin_derive_platform_kernel(const char *src_path, int n_cpus, const char *iio_uri, bool fair_server,
				   pd_buf *yaml, pd_err *e);
/* The same with the twin's cores on the given host CPU numbers (cpu_ids[n_cpus], ascending; NULL:
 * 0 .. n_cpus-1): a namespace twin's plan CPUs are this machine's. */
int pd_twin_derive_platform_on(const char *src_path, const int *cpu_ids, int n_cpus, const char *iio_uri,
			       bool fair_server, pd_buf *yaml, pd_err *e);

/* Entry point of the hidden `powerdag twin _daemon` subcommand (argv[0] = "_daemon"). */
int pd_twin_daemon_main(int argc, char **argv);

#endif /* PD_TWIN_H */

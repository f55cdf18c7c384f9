/* SPDX-License-Identifier: MIT */
/*
 * pd_farm.h - running plans on many boards through a LAVA board farm (docs/FARM.md).
 *
 * A *lab file* names the LAVA server (URL, user, token file) and the boards powerdag may deploy to
 * (LAVA device name, device type, board URI, SSH key, known_hosts, CPU group). A *farm directory* is
 * one matrix (plans x device types x repetitions): the plans, one LAVA job definition per run,
 * farm.json (every run's LAVA job, device and outcome), and runs/RUN/, a normal run directory that
 * `powerdag report` reads.
 *
 * How a run travels: the LAVA job only *holds* the device (deploy to ssh, boot over ssh, a test
 * step that waits for a release marker); `pd_farm_collect` sees the job holding a device, runs
 * `powerdag deploy` to that board through powerdag's own SSH transport (configure, run, stream with
 * checksums, restore), then releases the job with the deploy's verdict. LAVA does the queueing,
 * device health and bookkeeping; powerdag keeps the board configuration and the run data.
 *
 * LAVA is reached through `lavacli` started with an argument vector (never a shell), its token in a
 * private configuration file (never on a command line). Errors are values: 2 bad input (nothing
 * written), 3 environment (LAVA, a board); collect and status return 1 when a run is missing.
 */
#ifndef PD_FARM_H
#define PD_FARM_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/pd_core.h"

/* ---------------------------------------------------------------- lab file */
typedef struct pd_farm_lab pd_farm_lab;

/* Reads and checks a lab file (docs/FARM.md "Lab file"): errors carry file:line:col, exit 2. */
int pd_farm_lab_load(const char *path, pd_farm_lab **out, pd_err *e);
void pd_farm_lab_free(pd_farm_lab *l);
size_t pd_farm_lab_device_count(const pd_farm_lab *l);
/* How many boards of that device type the lab file lists. */
size_t pd_farm_lab_type_count(const pd_farm_lab *l, const char *device_type);

/* ---------------------------------------------------------------- job definitions */
/* The LAVA job of one run: holds a device of device_type until the release marker named by token
 * appears on the board (docs/FARM.md "The job"). All strings are checked: token is 32 hex digits,
 * names and types [A-Za-z0-9._-]; a timeout of 0 means one hour. Pure: testable without LAVA. */
struct pd_farm_jobspec {
	const char *run_id;      /* e.g. "plan1-twin-r2" */
	const char *device_type; /* LAVA device type */
	const char *plan_name;   /* file name of the plan, for the job's metadata */
	const char *token;       /* 32 hex digits: names the hold/release markers */
	int64_t run_ns;          /* the run's duration */
	int64_t hold_timeout_s;  /* how long the job may hold the device */
};
int pd_farm_job_yaml(const struct pd_farm_jobspec *js, pd_buf *out, pd_err *e);
/* Directory of the markers on the board, and the names: DIR/TOKEN.held, DIR/TOKEN.done. */
#define PD_FARM_HOLD_DIR "/run/powerdag-hold"

/* ---------------------------------------------------------------- a farm directory */
struct pd_farm_matrix {
	const char *const *plans; /* plan files */
	size_t n_plans;
	const char *const *device_types; /* at least one */
	size_t n_types;
	int repetitions;   /* 1..1000 */
	int64_t run_ns;    /* each run's duration */
};

struct pd_farm_opts {
	const char *lab_path;   /* lab file (its absolute path is recorded in farm.json) */
	const char *self_exe;   /* the powerdag binary collect runs `deploy` with (NULL: /proc/self/exe) */
	FILE *log;              /* progress lines (NULL: none) */
	volatile sig_atomic_t *interrupted; /* set: collect stops following (jobs are cancelled) */
	int poll_ms;            /* LAVA poll period (0: 1000) */
};

/* Checks every plan and the matrix (exit 2, nothing written), creates DIR (new or empty, ours),
 * writes the plans, the job definitions and farm.json, and submits the jobs. A failed submission
 * (exit 3) leaves farm.json naming what was submitted. */
int pd_farm_submit(const struct pd_farm_opts *o, const struct pd_farm_matrix *m, const char *dir, pd_err *e);

/* Follows the jobs of DIR until every run is collected or missing (docs/FARM.md "collect").
 * Returns 0 when every run was collected, 1 when some are missing, 2/3 on errors. */
int pd_farm_collect(const struct pd_farm_opts *o, const char *dir, pd_err *e);

/* Prints the runs of DIR (a table, or one JSON object with json) and names the missing ones.
 * *missing / *pending count them. LAVA is asked for the jobs not yet finished when the lab file
 * recorded in farm.json is readable. */
int pd_farm_status(const char *dir, bool json, FILE *out, int *missing, int *pending, pd_err *e);

#endif

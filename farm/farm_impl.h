/* SPDX-License-Identifier: MIT */
/*
 * farm_impl.h - private to farm/: the lab file's records, the lavacli client, the farm directory's
 * record (farm.json) and its runs.
 */
#ifndef PD_FARM_IMPL_H
#define PD_FARM_IMPL_H

#include "farm/pd_farm.h"

#include <jansson.h>
#include <sys/types.h>

#define FARM_NAME_MAX 64

struct farm_device {
	char name[FARM_NAME_MAX], type[FARM_NAME_MAX], group[FARM_NAME_MAX];
	char *board, *identity, *known_hosts; /* malloc'd */
	/* `deploy --cgroup` and `--cpu-map` of this board ("" = none): boards of one type that share a
	 * kernel on disjoint CPUs (twins of `twin up --host-cpus`) each deploy in their own cpuset
	 * directory, and run the type's plans on their own CPU ids (docs/FARM.md, concurrency) */
	char cgroup[FARM_NAME_MAX], cpu_map[256];
	size_t n_cpu_map; /* CPUs cpu_map names: every plan run on the board has that many cores */
};

struct pd_farm_lab {
	char *path;                         /* absolute */
	char *url, *user, *token;           /* token read from token_file */
	struct farm_device *dev;
	size_t n_dev;
	char cfgdir[64];                    /* private XDG_CONFIG_HOME for lavacli; "" until made */
};

const struct farm_device *farm_lab_device(const pd_farm_lab *l, const char *name);
/* [A-Za-z0-9._-], 1..FARM_NAME_MAX-1 characters: names that go into paths and job definitions. */
bool farm_name_ok(const char *s);

/* ---- lavacli (lava.c) */
/* Runs `lavacli -i powerdag ARGS...` (argument vector, no shell) with the token in a private config
 * file; stdout into out (capped), stderr's first line into e on failure. Returns 0, or PD_EXIT_ENV. */
int farm_lava(pd_farm_lab *l, const char *const *args, pd_buf *out, pd_err *e);
struct farm_job_state {
	char state[32], health[32], device[FARM_NAME_MAX], failure[256];
};
int farm_lava_submit(pd_farm_lab *l, const char *def_path, long *job_id, pd_err *e);
int farm_lava_show(pd_farm_lab *l, long job_id, struct farm_job_state *s, pd_err *e);
/* REST (rest.c): the job's state through GET /api/v0.2/jobs/ID/ (http:// URLs). */
int farm_rest_show(pd_farm_lab *l, long job_id, struct farm_job_state *s, pd_err *e);
/* Either: REST for http://, lavacli otherwise. */
int farm_job_state(pd_farm_lab *l, long job_id, struct farm_job_state *s, pd_err *e);
int farm_lava_cancel(pd_farm_lab *l, long job_id, pd_err *e);
/* The job's log into path (created, not followed if a link). */
int farm_lava_log(pd_farm_lab *l, long job_id, int dirfd, const char *name, pd_err *e);

/* ---- farm.json (record.c) */
enum farm_phase {
	FARM_SUBMITTED, /* queued in LAVA */
	FARM_RESERVED,  /* LAVA runs the job on a device: waiting for the hold marker */
	FARM_RUNNING,   /* powerdag deploy runs to the device */
	FARM_RELEASED,  /* released: waiting for the LAVA job to finish */
	FARM_COLLECTED, /* terminal: the run directory is complete */
	FARM_MISSING,   /* terminal: no run (reason) */
};
const char *farm_phase_name(enum farm_phase p);
int farm_phase_parse(const char *s, enum farm_phase *p);

struct farm_run {
	char id[FARM_NAME_MAX * 2], plan[FARM_NAME_MAX], type[FARM_NAME_MAX], token[33];
	int rep;
	long job;                  /* 0: not submitted */
	enum farm_phase phase;
	char device[FARM_NAME_MAX];
	char lava_state[32], lava_health[32];
	char reason[512];
	int deploy_rc;             /* -1 until the deploy ended */
	double hold_wait_s, deploy_s; /* measured: from LAVA start to the hold, the deploy itself */
	double t_reserved, t_deploy0;  /* monotonic seconds (not saved) */
	pid_t pid;                 /* the deploy child (not saved) */
};

struct farm_record {
	char *lab_path;
	int64_t run_ns;
	char created[32];
	struct farm_run *runs;
	size_t n;
};
int farm_record_load(int dirfd, const char *dir, struct farm_record *r, pd_err *e);
int farm_record_save(int dirfd, const struct farm_record *r, pd_err *e);
/* j as indented JSON plus a newline into dirfd/name (pd_write_file_at). */
int farm_write_json_at(int dirfd, const char *name, const json_t *j, pd_err *e);
void farm_record_free(struct farm_record *r);
json_t *farm_record_json(const struct farm_record *r);

double farm_now(void);

#endif

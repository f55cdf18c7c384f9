/* SPDX-License-Identifier: MIT */
/*
 * replay.c - the report's answer to "was the schedule wrong, or its inputs?": the run's measured jobs
 * replayed through the simulator (`simulate --exec replay:RUNDIR`, simulator/sim_replay.c), so that the
 * report puts the misses the model predicts from what each job really consumed next to the misses the
 * board saw (docs/REPORTS.md "Replay").
 *
 * Reading the comparison:
 *   - measured <= replayed: every miss follows, through the one model, from the execution times the
 *     jobs took; the WCETs or the budget margin are what to fix (`refit`, `profile`).
 *   - measured > replayed: the excess comes from outside the model: time the kernel did not charge to
 *     the jobs (a stalled or stolen vCPU, interrupts, release latency) or a gap in the model.
 * A replay that cannot run (no log, a log of another plan, no executed CPU job) is left out with a note;
 * it never fails the report.
 */
#include "reports/run_model_impl.h"

#include "simulator/pd_simulator.h"

/* Jobs the replay would simulate over duration_ns; the report replays runs up to REPLAY_MAX_JOBS
 * (about a second of simulation), longer ones are left to `simulate --exec replay:RUNDIR`. */
#define REPLAY_MAX_JOBS 20000000.0
static double expected_jobs(const pd_plan *p, int64_t duration_ns)
{
	const pd_dagset *ds = pd_plan_dags(p);
	double n = 0;
	for (size_t g = 0; g < pd_dags_count(ds); g++)
		n += (double)pd_dags_dag(ds, g)->n_tasks * ((double)duration_ns / (double)pd_dags_dag(ds, g)->period_ns);
	return n;
}

void rpt_replay(struct rpt_run *r)
{
	if (!r->has_log || !r->plan)
		return;
	pd_err e = {0};
	pd_sim_replay *rp = pd_sim_replay_load(r->rundir, r->plan, &e);
	if (!rp) {
		rpt_run_note(r, "replay of the measured jobs left out: %s", e.msg);
		return;
	}
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	prm.exec = PD_SIM_EXEC_REPLAY;
	prm.replay = rp;
	/* the instances the report judges: those whose deadline passed within the logged run */
	prm.duration_ns = r->verdict_ns > 0 ? r->verdict_ns : pd_sim_replay_duration(rp);
	if (prm.duration_ns > PD_MAX_RUN_NS || expected_jobs(r->plan, prm.duration_ns) > REPLAY_MAX_JOBS) {
		rpt_run_note(r, "replay of the measured jobs left out: the run is too long to replay here (%.0f s); "
				"use powerdag simulate PLAN --exec replay:RUNDIR", (double)prm.duration_ns / 1e9);
		pd_sim_replay_free(rp);
		return;
	}
	size_t jobs = pd_sim_replay_jobs(rp);
	pd_sim_result *res = jobs && prm.duration_ns > 0 ? pd_sim_run(r->plan, &prm, &e) : NULL;
	if (res) {
		r->has_replay = true;
		r->replay_misses = (int64_t)res->misses;
		r->replay_jobs = (int64_t)jobs;
		uint64_t inst = 0;
		for (size_t g = 0; g < res->n_dags; g++)
			inst += res->dags[g].instances;
		r->replay_instances = (int64_t)inst;
		pd_sim_result_free(res);
	} else {
		rpt_run_note(r, "replay of the measured jobs left out: %s",
			     jobs ? e.msg : "the log holds no executed CPU job of the plan");
	}
	pd_sim_replay_free(rp);
}

/* SPDX-License-Identifier: MIT */
/*
 * sim_accel.c - accelerators as non-preemptive FIFO servers: one per GPU, one per FPGA slot.
 * A request waits in arrival order; when a slot must switch to another bitstream, the
 * reconfiguration (reconfig_time) runs first, on that slot only. The queue holds at most
 * SIM_RING requests per task of the server, sized at build time (no allocation while running).
 */
#include "simulator/sim_impl.h"

#include <string.h>

static void start(struct sim *s, struct sim_server *v, struct sim_req r)
{
	struct sim_task *t = &s->tasks[r.task];
	int64_t reconf = 0;
	if (!v->gpu && t->bitstream && (!v->loaded || strcmp(v->loaded, t->bitstream) != 0)) {
		reconf = v->reconfig_ns;
		v->loaded = t->bitstream;
		v->st.reconfigs++;
	}
	v->busy = true;
	v->cur = r;
	v->start = s->now;
	v->exec_start = s->now + reconf;
	sim_heap_set(&s->heap, s->id_server + (uint32_t)(v - s->servers), v->exec_start + sim_exec_time(s, t, r.seq));
}

void sim_accel_submit(struct sim *s, uint32_t task, uint64_t seq)
{
	struct sim_server *v = &s->servers[s->tasks[task].server];
	struct sim_req r = {task, seq, s->now};
	if (!v->busy) {
		start(s, v, r);
		return;
	}
	if (v->n == v->cap) { /* cannot happen: SIM_RING instances per task at most */
		s->oom = true;
		return;
	}
	v->q[(v->head + v->n) % v->cap] = r;
	v->n++;
}

void sim_accel_done(struct sim *s, struct sim_server *v)
{
	struct sim_req r = v->cur;
	struct sim_task *t = &s->tasks[r.task];
	int64_t busy = s->now - v->exec_start;
	v->st.busy_ns += busy;
	t->accel_busy_ns += busy;
	v->st.requests++;
	if (s->now - r.arrival > v->st.max_response_ns)
		v->st.max_response_ns = s->now - r.arrival;
	if (s->prm.trace_path) {
		int32_t track = (int32_t)(s->n_cores + (size_t)(v - s->servers));
		if (v->exec_start > v->start)
			sim_trace_seg(s, track, -3, 0, v->start, v->exec_start);
		sim_trace_seg(s, track, (int32_t)r.task, r.seq, v->exec_start, s->now);
	}
	/* still busy while the successors are released, so that a new request queues behind the
	 * waiting ones (FIFO) */
	sim_job_done(s, r.task, r.seq, false);
	v->busy = false;
	if (v->n > 0) {
		struct sim_req nx = v->q[v->head];
		v->head = (v->head + 1) % v->cap;
		v->n--;
		start(s, v, nx);
	}
}

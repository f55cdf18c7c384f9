/* SPDX-License-Identifier: MIT */
/*
 * The instance: every number the solvers need, precomputed once from the DAG set and the platform
 * (runtime Q and demand D for each task x island x OPP, latencies per server, power tables in W), and the solution
 * record with its power model. Nothing here decides anything.
 */
#include "optimizer/opt_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double opt_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *xcalloc(size_t n, size_t sz, bool *oom)
{
	void *p = calloc(n ? n : 1, sz);
	if (!p)
		*oom = true;
	return p;
}

static double **table2(size_t rows, const size_t *cols, bool *oom)
{
	double **t = xcalloc(rows, sizeof(*t), oom);
	for (size_t r = 0; t && r < rows; r++)
		t[r] = xcalloc(cols[r], sizeof(double), oom);
	return t;
}

static void free2(double **t, size_t rows)
{
	for (size_t r = 0; t && r < rows; r++)
		free(t[r]);
	free(t);
}

static void build_islands(struct opt_inst *in, bool *oom)
{
	const pd_platform *p = in->plat;
	in->isl_nopp = xcalloc(in->n_isl, sizeof(size_t), oom);
	in->isl_ncores = xcalloc(in->n_isl, sizeof(size_t), oom);
	in->isl_core0 = xcalloc(in->n_isl, sizeof(size_t), oom);
	in->wcet_off = xcalloc(in->n_isl, sizeof(size_t), oom);
	if (*oom)
		return;
	for (size_t k = 0; k < in->n_isl; k++) {
		const struct pd_island *isl = pd_platform_island(p, k);
		in->isl_nopp[k] = isl->n_opps;
		in->isl_ncores[k] = isl->n_cpus;
		in->isl_core0[k] = in->n_cores;
		in->wcet_off[k] = in->isl_opps_total;
		in->n_cores += isl->n_cpus;
		in->isl_opps_total += isl->n_opps;
	}
	in->core_isl = xcalloc(in->n_cores, sizeof(size_t), oom);
	in->idle_w = table2(in->n_isl, in->isl_nopp, oom);
	in->busy_w = table2(in->n_isl, in->isl_nopp, oom);
	in->isl_const_w = table2(in->n_isl, in->isl_nopp, oom);
	if (*oom)
		return;
	for (size_t k = 0; k < in->n_isl; k++) {
		const struct pd_island *isl = pd_platform_island(p, k);
		for (size_t c = 0; c < isl->n_cpus; c++)
			in->core_isl[in->isl_core0[k] + c] = k;
		for (size_t m = 0; m < isl->n_opps; m++) {
			in->idle_w[k][m] = (double)isl->opps[m].idle_uw * 1e-6;
			in->busy_w[k][m] = (double)isl->opps[m].busy_uw * 1e-6;
			in->isl_const_w[k][m] = (double)isl->n_cpus * in->idle_w[k][m] + pd_platform_island_background_w(isl, m);
		}
	}
}

static void build_accels(struct opt_inst *in, bool *oom)
{
	const pd_platform *p = in->plat;
	in->acc_nopp = xcalloc(in->n_acc, sizeof(size_t), oom);
	if (*oom)
		return;
	for (size_t a = 0; a < in->n_acc; a++) {
		const struct pd_accelerator *A = pd_platform_accel(p, a);
		in->acc_nopp[a] = A->kind == PD_ACCEL_GPU && A->n_opps ? A->n_opps : 1;
		in->n_srv += A->kind == PD_ACCEL_FPGA ? (size_t)(A->slots > 0 ? A->slots : 1) : 1;
	}
	in->acc_idle_w = table2(in->n_acc, in->acc_nopp, oom);
	in->acc_busy_w = table2(in->n_acc, in->acc_nopp, oom);
	in->srv = xcalloc(in->n_srv, sizeof(*in->srv), oom);
	if (*oom)
		return;
	size_t v = 0;
	for (size_t a = 0; a < in->n_acc; a++) {
		const struct pd_accelerator *A = pd_platform_accel(p, a);
		if (A->kind == PD_ACCEL_GPU) {
			for (size_t m = 0; m < A->n_opps; m++) {
				in->acc_idle_w[a][m] = (double)A->opps[m].idle_uw * 1e-6;
				in->acc_busy_w[a][m] = (double)A->opps[m].busy_uw * 1e-6;
			}
			in->srv[v++] = (struct opt_server){a, 0, PD_ACCEL_GPU};
		} else {
			in->acc_idle_w[a][0] = in->acc_busy_w[a][0] = (double)A->idle_uw * 1e-6;
			int slots = A->slots > 0 ? A->slots : 1;
			for (int q = 0; q < slots; q++)
				in->srv[v++] = (struct opt_server){a, q, PD_ACCEL_FPGA};
		}
	}
}

/* The implementation of task t usable on server v: right kind, and the named accelerator when the
 * implementation pins one. The first matching implementation wins. */
static int impl_for(const struct opt_inst *in, const struct pd_task *t, size_t v)
{
	const struct pd_accelerator *A = pd_platform_accel(in->plat, in->srv[v].accel);
	for (size_t j = 0; j < t->n_impls; j++) {
		const struct pd_impl *im = &t->impls[j];
		if (im->kind != A->kind)
			continue;
		if (im->accel && strcmp(im->accel, A->name) != 0)
			continue;
		return (int)j;
	}
	return -1;
}

static void build_tasks(struct opt_inst *in, bool *oom)
{
	size_t n = in->n_tasks, ns = in->n_srv ? in->n_srv : 1;
	in->task_dag = xcalloc(n, sizeof(size_t), oom);
	in->T_ns = xcalloc(n, sizeof(int64_t), oom);
	in->D_ns = xcalloc(n, sizeof(int64_t), oom);
	in->runtime = xcalloc(n * (in->isl_opps_total ? in->isl_opps_total : 1), sizeof(int64_t), oom);
	in->demand = xcalloc(n * (in->isl_opps_total ? in->isl_opps_total : 1), sizeof(int64_t), oom);
	in->impl = xcalloc(n * ns, sizeof(int), oom);
	in->fpga_pw = xcalloc(n * ns, sizeof(double), oom);
	in->bits = xcalloc(n * ns, sizeof(char *), oom);
	in->lat_top = xcalloc(n * ns, sizeof(int64_t), oom);
	in->fast_ns = xcalloc(n, sizeof(double), oom);
	in->hi_ns = xcalloc(n, sizeof(double), oom);
	if (*oom)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct pd_task *t = pd_dags_task(in->dags, i);
		const struct pd_dag *g = pd_dags_dag(in->dags, t->dag);
		in->task_dag[i] = t->dag;
		in->T_ns[i] = g->period_ns;
		in->D_ns[i] = g->deadline_ns;
		double fast = INFINITY;
		for (size_t k = 0; k < in->n_isl; k++)
			for (size_t m = 0; m < in->isl_nopp[k]; m++) {
				/* The platform's one budget law (overhead, margin): the optimizer, the
				 * checker and the simulator must agree on Q and D to the ns. */
				struct pd_budget b;
				size_t at = i * in->isl_opps_total + in->wcet_off[k] + m;
				bool ok = pd_platform_budget_at(in->plat, t, k, m, &b) == 0;
				in->runtime[at] = ok ? b.runtime_ns : INT64_MAX;
				in->demand[at] = ok ? b.demand_ns : INT64_MAX;
				fast = fmin(fast, (double)in->runtime[at]);
			}
		for (size_t v = 0; v < in->n_srv; v++) {
			int j = impl_for(in, t, v);
			in->impl[i * ns + v] = j;
			if (j < 0)
				continue;
			const struct pd_impl *im = &t->impls[j];
			in->lat_top[i * ns + v] = im->latency_ns;
			in->fpga_pw[i * ns + v] = im->power_uw > 0 ? (double)im->power_uw * 1e-6 : 0.0;
			in->bits[i * ns + v] = im->bitstream ? im->bitstream : "";
			fast = fmin(fast, (double)im->latency_ns);
		}
		in->fast_ns[i] = fast;
	}
	/* hi_i = D - (longest fastest path through i) + fast_i: no feasible plan gives i more. */
	double *tail = xcalloc(n, sizeof(double), oom), *fin = xcalloc(n, sizeof(double), oom);
	if (!*oom)
		for (size_t g = 0; g < in->n_dags; g++) {
			const struct pd_dag *G = pd_dags_dag(in->dags, g);
			pd_dags_longest_path_d(in->dags, g, in->fast_ns, fin, tail);
			for (size_t i = G->first_task; i < G->first_task + G->n_tasks; i++)
				in->hi_ns[i] = (double)G->deadline_ns - (fin[i] + tail[i] - in->fast_ns[i]) + in->fast_ns[i];
		}
	free(tail);
	free(fin);
}

int opt_inst_build(struct opt_inst *in, const pd_dagset *dags, const pd_platform *plat, double eta, pd_err *e)
{
	memset(in, 0, sizeof(*in));
	in->dags = dags;
	in->plat = plat;
	in->tasks = pd_dags_task(dags, 0);
	in->n_tasks = pd_dags_task_count(dags);
	in->n_dags = pd_dags_count(dags);
	in->n_isl = pd_platform_island_count(plat);
	in->n_acc = pd_platform_accel_count(plat);
	in->cap_raw = pd_platform_core_capacity(plat);
	in->cap = in->cap_raw * (1.0 - eta);
	in->base_w = (double)pd_platform_base_uw(plat) * 1e-6;
	in->rel_gap = 1e-7;
	bool oom = false;
	build_islands(in, &oom);
	if (!oom)
		build_accels(in, &oom);
	if (!oom)
		build_tasks(in, &oom);
	if (!oom)
		oom = opt_symmetry_build(in) != 0;
	if (oom) {
		opt_inst_free(in);
		return pd_err_set(e, PD_EXIT_ENV, "out of memory building the optimisation model");
	}
	return 0;
}

void opt_inst_free(struct opt_inst *in)
{
	free(in->isl_nopp);
	free(in->isl_ncores);
	free(in->isl_core0);
	free(in->core_isl);
	free(in->wcet_off);
	free(in->isl_prev_twin);
	free2(in->idle_w, in->n_isl);
	free2(in->busy_w, in->n_isl);
	free2(in->isl_const_w, in->n_isl);
	free(in->acc_nopp);
	free2(in->acc_idle_w, in->n_acc);
	free2(in->acc_busy_w, in->n_acc);
	free(in->srv);
	free(in->task_dag);
	free(in->T_ns);
	free(in->D_ns);
	free(in->runtime);
	free(in->demand);
	free(in->impl);
	free(in->fpga_pw);
	free(in->bits);
	free(in->lat_top);
	free(in->fast_ns);
	free(in->hi_ns);
	memset(in, 0, sizeof(*in));
}

int64_t opt_latency(const struct opt_inst *in, size_t i, size_t v, size_t m)
{
	const struct pd_accelerator *A = pd_platform_accel(in->plat, in->srv[v].accel);
	return pd_platform_latency_at(A, in->lat_top[i * in->n_srv + v], m);
}

/* ---------------------------------------------------------------- solutions */

int opt_sol_init(struct opt_sol *s, const struct opt_inst *in)
{
	memset(s, 0, sizeof(*s));
	size_t n = in->n_tasks ? in->n_tasks : 1;
	s->isl_opp = calloc(in->n_isl ? in->n_isl : 1, sizeof(size_t));
	s->acc_opp = calloc(in->n_acc ? in->n_acc : 1, sizeof(size_t));
	s->where = calloc(n, sizeof(int));
	s->d_ns = calloc(n, sizeof(double));
	s->dl_ns = calloc(n, sizeof(int64_t));
	if (!s->isl_opp || !s->acc_opp || !s->where || !s->d_ns || !s->dl_ns) {
		opt_sol_free(s);
		return -1;
	}
	s->power_w = INFINITY;
	s->slack = -INFINITY;
	return 0;
}

void opt_sol_free(struct opt_sol *s)
{
	free(s->isl_opp);
	free(s->acc_opp);
	free(s->where);
	free(s->d_ns);
	free(s->dl_ns);
	memset(s, 0, sizeof(*s));
}

void opt_sol_copy(struct opt_sol *dst, const struct opt_sol *src, const struct opt_inst *in)
{
	memcpy(dst->isl_opp, src->isl_opp, in->n_isl * sizeof(size_t));
	memcpy(dst->acc_opp, src->acc_opp, in->n_acc * sizeof(size_t));
	memcpy(dst->where, src->where, in->n_tasks * sizeof(int));
	memcpy(dst->d_ns, src->d_ns, in->n_tasks * sizeof(double));
	memcpy(dst->dl_ns, src->dl_ns, in->n_tasks * sizeof(int64_t));
	dst->power_w = src->power_w;
	dst->slack = src->slack;
	dst->ok = src->ok;
	if (dst->publish)
		opt_pub_sol(in, dst);
}

int64_t opt_exec_ns(const struct opt_inst *in, const struct opt_sol *s, size_t i)
{
	int w = s->where[i];
	if (w >= 0) {
		size_t k = in->core_isl[w];
		return runtime_at(in, i, k, s->isl_opp[k]);
	}
	size_t v = opt_where_server_of(w);
	return opt_latency(in, i, v, s->acc_opp[in->srv[v].accel]);
}

double opt_task_busy_w(const struct opt_inst *in, const struct opt_sol *s, size_t i, int where)
{
	double T = (double)in->T_ns[i];
	if (where >= 0) {
		size_t k = in->core_isl[where], m = s->isl_opp[k];
		return (in->busy_w[k][m] - in->idle_w[k][m]) * (double)demand_at(in, i, k, m) / T;
	}
	size_t v = opt_where_server_of(where), a = in->srv[v].accel, m = s->acc_opp[a];
	double L = (double)opt_latency(in, i, v, m);
	if (in->srv[v].kind == PD_ACCEL_FPGA)
		return in->fpga_pw[i * in->n_srv + v] * L / T;
	return (in->acc_busy_w[a][m] - in->acc_idle_w[a][m]) * L / T;
}

double opt_power_w(const struct opt_inst *in, const struct opt_sol *s)
{
	double p = in->base_w;
	for (size_t k = 0; k < in->n_isl; k++)
		p += in->isl_const_w[k][s->isl_opp[k]];
	for (size_t a = 0; a < in->n_acc; a++)
		p += in->acc_idle_w[a][s->acc_opp[a]];
	for (size_t i = 0; i < in->n_tasks; i++)
		p += opt_task_busy_w(in, s, i, s->where[i]);
	return p;
}

int64_t opt_pair_reconfig_ns(const struct opt_inst *in, size_t i, size_t j, size_t v)
{
	if (in->srv[v].kind != PD_ACCEL_FPGA || strcmp(in->bits[i * in->n_srv + v], in->bits[j * in->n_srv + v]) == 0)
		return 0;
	return pd_platform_accel(in->plat, in->srv[v].accel)->reconfig_ns;
}

/* Distinct bitstreams on server v (> 1) means every request may need a reconfiguration first: the
 * slot's rho, else 0. */
static int64_t server_reconfig_ns(const struct opt_inst *in, const struct opt_sol *s, size_t v)
{
	size_t first = SIZE_MAX;
	for (size_t i = 0; i < in->n_tasks; i++) {
		if (s->where[i] != opt_where_server(v))
			continue;
		if (first == SIZE_MAX)
			first = i;
		else if (opt_pair_reconfig_ns(in, first, i, v) > 0)
			return opt_pair_reconfig_ns(in, first, i, v);
	}
	return 0;
}

double opt_fifo_response(const struct opt_inst *in, const struct opt_sol *s, int64_t *r_ns)
{
	double umax = 0;
	for (size_t i = 0; i < in->n_tasks; i++)
		r_ns[i] = 0;
	for (size_t v = 0; v < in->n_srv; v++) {
		int64_t reconf = server_reconfig_ns(in, s, v);
		int64_t load = 0;
		double u = 0;
		for (size_t i = 0; i < in->n_tasks; i++) {
			if (s->where[i] != opt_where_server(v))
				continue;
			int64_t L = opt_exec_ns(in, s, i) + reconf;
			load += L;
			u += (double)L / (double)in->T_ns[i];
		}
		for (size_t i = 0; i < in->n_tasks; i++)
			if (s->where[i] == opt_where_server(v))
				r_ns[i] = load;
		umax = fmax(umax, u);
	}
	return umax;
}

size_t opt_vector_count(const struct opt_inst *in)
{
	size_t n = 1;
	for (size_t k = 0; k < in->n_isl; k++)
		n = n > SIZE_MAX / 64 ? SIZE_MAX / 64 : n * in->isl_nopp[k];
	for (size_t a = 0; a < in->n_acc; a++)
		n = n > SIZE_MAX / 64 ? SIZE_MAX / 64 : n * in->acc_nopp[a];
	return n;
}

void opt_vector_decode(const struct opt_inst *in, struct opt_sol *s, size_t id)
{
	for (size_t k = 0; k < in->n_isl; k++) {
		s->isl_opp[k] = id % in->isl_nopp[k];
		id /= in->isl_nopp[k];
	}
	for (size_t a = 0; a < in->n_acc; a++) {
		s->acc_opp[a] = id % in->acc_nopp[a];
		id /= in->acc_nopp[a];
	}
}

double opt_vector_idle_w(const struct opt_inst *in, const struct opt_sol *s)
{
	double p = in->base_w;
	for (size_t k = 0; k < in->n_isl; k++)
		p += in->isl_const_w[k][s->isl_opp[k]];
	for (size_t a = 0; a < in->n_acc; a++)
		p += in->acc_idle_w[a][s->acc_opp[a]];
	return p;
}

bool opt_option_fits(const struct opt_inst *in, const struct opt_sol *s, size_t i, size_t o, double slack_frac)
{
	if (o < in->n_isl)
		return opt_core_fits(in, i, (double)runtime_at(in, i, o, s->isl_opp[o]), slack_frac);
	size_t v = o - in->n_isl;
	if (in->impl[i * in->n_srv + v] < 0)
		return false;
	return (double)opt_latency(in, i, v, s->acc_opp[in->srv[v].accel]) <= opt_longest_d(in, i) * (1.0 - slack_frac);
}

/* With every task on its fastest option at the OPPs of s (accelerators counted alone, a lower bound on
 * any FIFO response), does every path fit (1 - slack) D? If not, no plan at these OPPs exists. */
bool opt_vector_paths_ok(const struct opt_inst *in, const struct opt_sol *s, double slack_frac, double *tmp)
{
	for (size_t i = 0; i < in->n_tasks; i++) {
		double f = INFINITY;
		for (size_t k = 0; k < in->n_isl; k++)
			f = fmin(f, (double)runtime_at(in, i, k, s->isl_opp[k]));
		for (size_t v = 0; v < in->n_srv; v++)
			if (in->impl[i * in->n_srv + v] >= 0)
				f = fmin(f, (double)opt_latency(in, i, v, s->acc_opp[in->srv[v].accel]));
		tmp[i] = f;
	}
	for (size_t g = 0; g < in->n_dags; g++) {
		const struct pd_dag *G = pd_dags_dag(in->dags, g);
		if (pd_dags_longest_path_d(in->dags, g, tmp, NULL, NULL) > (double)G->deadline_ns * (1.0 - slack_frac))
			return false;
	}
	return true;
}

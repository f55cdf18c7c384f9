/* SPDX-License-Identifier: MIT */
/* Graphviz output: every task and edge appears, styles and legend are applied, and `dot -Tsvg`
 * accepts the text (graphviz is a build dependency of the test suite). */
#include "helper_dags.h"
#include "pd_test.h"

#include <stdlib.h>
#include <string.h>

static pd_dagset *load(const char *rel)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = pd_dags_load_file(pd_test_src(rel), &d);
	ck_assert_ptr_nonnull(s);
	pd_diags_free(&d);
	return s;
}

/* Renders text with dot -Tsvg; returns the exit status and the SVG in svg. */
static int render(const char *text, char *svg, size_t n)
{
	const char *dir = pd_test_tmpdir();
	const char *path = pd_test_write(dir, "g.dot", text);
	return pd_test_run(svg, n, "dot -Tsvg '%s' 2>&1", path);
}

START_TEST(plain_graph)
{
	pd_dagset *s = load("dags/examples/automotive.yaml");
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(pd_dags_to_dot(s, NULL, NULL, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.data, "digraph powerdag {"));
	ck_assert_ptr_nonnull(strstr(b.data, "subgraph \"cluster_control\""));
	ck_assert_ptr_nonnull(strstr(b.data, "label=\"control  T=10ms D=8ms\""));
	ck_assert_ptr_nonnull(strstr(b.data, "\"perception/detect\" [label=\"detect\\nC=12ms\\ngpu,fpga\""));
	for (size_t g = 0; g < pd_dags_count(s); g++) {
		const struct pd_dag *G = pd_dags_dag(s, g);
		for (size_t e = 0; e < G->n_edges; e++) {
			char edge[256];
			snprintf(edge, sizeof(edge), "\"%s/%s\" -> \"%s/%s\";", G->name, pd_dags_task(s, G->edges[e].from)->name,
				 G->name, pd_dags_task(s, G->edges[e].to)->name);
			ck_assert_msg(strstr(b.data, edge) != NULL, "missing %s", edge);
		}
	}
	static char svg[1 << 17];
	ck_assert_int_eq(render(b.data, svg, sizeof(svg)), 0);
	ck_assert_ptr_nonnull(strstr(svg, "<svg"));
	ck_assert_ptr_nonnull(strstr(svg, "lidar_in"));
	pd_buf_free(&b);
	pd_dags_free(s);
}
END_TEST

START_TEST(styled_graph_with_legend)
{
	pd_dagset *s = load("dags/examples/camera.yaml");
	size_t n = pd_dags_task_count(s);
	struct pd_dot_style *st = calloc(n, sizeof(*st));
	for (size_t i = 0; i < n; i++) {
		st[i].fill = i % 2 ? "#a6cee3" : "orange";
		st[i].note = i % 2 ? "cpu:1" : "fpga:pl/0";
	}
	const char *legend[] = {"#a6cee3", "cpu:1", "orange", "fpga:pl/0", NULL};
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(pd_dags_to_dot(s, st, legend, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.data, "\"camera/sobel\" [label=\"sobel\\nC=4ms\\nfpga,gpu\\nfpga:pl/0\", fillcolor=\"orange\""));
	ck_assert_ptr_nonnull(strstr(b.data, "cluster_legend"));
	ck_assert_ptr_nonnull(strstr(b.data, "legend1 [label=\"fpga:pl/0\", fillcolor=\"orange\"]"));
	static char svg[1 << 17];
	ck_assert_int_eq(render(b.data, svg, sizeof(svg)), 0);
	ck_assert_ptr_nonnull(strstr(svg, "fpga:pl/0"));
	/* a note with quotes cannot break out of its attribute */
	st[0].note = "x\"] evil [label=\"";
	pd_buf_free(&b);
	pd_buf_init(&b);
	ck_assert_int_eq(pd_dags_to_dot(s, st, NULL, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.data, "x\\\"] evil [label=\\\""));
	ck_assert_int_eq(render(b.data, svg, sizeof(svg)), 0);
	free(st);
	pd_buf_free(&b);
	pd_dags_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dags_dot");
	TCase *tc = tcase_create("dot");
	tcase_add_test(tc, plain_graph);
	tcase_add_test(tc, styled_graph_with_legend);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}

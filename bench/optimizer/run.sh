#!/bin/bash
# Optimizer benchmark: a fixed, seeded suite of random DAG sets (powerdag gen) on the ODROID-XU4
# (big.LITTLE, 13 x 19 OPPs) and the ZCU102 (4 x A53 + FPGA), solved by the exact mode (GLPK, and CBC
# unless --no-cbc) and the heuristic; prints one table row per (instance, solver):
#   platform tasks solver status power_W lower_bound_W gap_% time_s
#
# usage: bench/optimizer/run.sh [--quick] [--time-limit S] [--sizes "5 10 20"] [--no-cbc]
#                                [--platforms "odroid-xu4 zcu102"] [--solvers "exact:glpk heuristic:glpk"]
#                                [--powerdag PATH] [--seeds N | --seed-list "S1 S2 ..."] [--independent]
#   --quick   sizes 5 10 20 30 50 with a 10 s limit (a few minutes); default: all sizes, 60 s
#   --solvers runs as solver:backend (default exact:glpk exact:cbc heuristic:glpk)
#   --seeds N fresh sets: N seeds drawn from /dev/urandom (printed, so a run can be repeated with
#             --seed-list), three boards (odroid-xu4 zcu102 xavier-agx unless --platforms), sizes
#             10 20 30 50 80 120 unless --sizes, solvers auto:auto and heuristic:glpk unless
#             --solvers; one row per run (with the process's wall time), then per (board, size,
#             solver) the median and worst over the seeds of the gap, the solve time and the wall time
#             minus the limit, aborts (exit other than 0/1), per (board, size) the worst excess
#             of the exact plan over the heuristic's (power_exact / power_heuristic - 1, <= 0 wanted),
#             and per board the heuristic's solve time at 120 tasks against its target
#   --independent  with --seeds/--seed-list: sets of independent one-task DAGs (D = T, the case a
#             user writes first) instead of the layered DAGs: N tasks of total utilisation 0.05 N
# Targets (docs/MODEL.md): <= 30 tasks proven optimal (gap <= 1e-4) in 60 s; certified gap <= 1 % at
# 50 tasks and <= 3 % at 120 tasks in 60 s; heuristic < 1 s at 120 tasks.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PD=${POWERDAG:-}
TL=60
SIZES="5 10 20 30 50 80 120"
CBC=1
PLATS="odroid-xu4 zcu102"
RUNS=""
NSEEDS=0
SEEDLIST=""
INDEP=0
while [ $# -gt 0 ]; do
	case $1 in
	--quick) TL=10; SIZES="5 10 20 30 50" ;;
	--time-limit) TL=$2; shift ;;
	--sizes) SIZES=$2; shift ;;
	--no-cbc) CBC=0 ;;
	--platforms) PLATS=$2; shift ;;
	--solvers) RUNS=$2; shift ;;
	--powerdag) PD=$2; shift ;;
	--seeds) NSEEDS=$2; shift ;;
	--seed-list) SEEDLIST=$2; shift ;;
	--independent) INDEP=1 ;;
	-h|--help) sed -n '2,23p' "$0"; exit 0 ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
if [ -z "$PD" ]; then
	for c in "$ROOT"/build*/powerdag; do [ -x "$c" ] && PD=$c && break; done
fi
[ -x "$PD" ] || { echo "no powerdag binary (build it, or pass --powerdag PATH)" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq is needed" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# instance shape per size: DAGs x tasks per DAG, utilisation per DAG on each board
shape() {
	case $1 in
	5) echo "1 5" ;; 10) echo "2 5" ;; 20) echo "2 10" ;; 30) echo "3 10" ;;
	50) echo "5 10" ;; 80) echo "8 10" ;; 120) echo "10 12" ;; *) echo "$(( ($1 + 9) / 10 )) 10" ;;
	esac
}

# ---------------------------------------------------------------- fresh seeds (--seeds / --seed-list)
if [ "$NSEEDS" -gt 0 ] || [ -n "$SEEDLIST" ]; then
	if [ -z "$SEEDLIST" ]; then
		SEEDLIST=$(for _ in $(seq "$NSEEDS"); do od -An -N3 -tu4 /dev/urandom | tr -d ' '; done | tr '\n' ' ')
	fi
	[ "$PLATS" = "odroid-xu4 zcu102" ] && PLATS="odroid-xu4 zcu102 xavier-agx"
	[ "$SIZES" = "5 10 20 30 50 80 120" ] && SIZES="10 20 30 50 80 120"
	[ -z "$RUNS" ] && RUNS="auto:auto heuristic:glpk"
	echo "# seeds: $SEEDLIST"
	echo "# limit ${TL} s; boards: $PLATS; sizes: $SIZES; $([ "$INDEP" = 1 ] && echo "independent tasks; ")runs: $RUNS; $(nproc) CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
	printf "%-10s %5s %8s %-16s %-10s %9s %9s %8s %7s %7s %3s\n" platform tasks seed solver status power_W bound_W gap_% time_s wall_s rc
	for plat in $PLATS; do
		for n in $SIZES; do
			read -r nd per <<<"$(shape "$n")"
			util=$(awk -v d="$nd" 'BEGIN { printf "%.3f", 0.06 * d }')
			case $plat in zcu102) acc=0.2 ;; xavier-agx) acc=0.1 ;; *) acc=0 ;; esac
			for seed in $SEEDLIST; do
				inst="$T/$plat-$n-$seed.yaml"
				if [ "$INDEP" = 1 ]; then
					"$PD" gen --dags "$n" --tasks 1 --util "$(awk -v n="$n" 'BEGIN { printf "%.3f", 0.05 * n }')" \
						--accel-ratio "$acc" --seed "$seed" --min-wcet 20us -o "$inst"
				else
					"$PD" gen --dags "$nd" --tasks "$per:$per" --util "$util" --accel-ratio "$acc" --seed "$seed" \
						--min-wcet 20us --layers 5:8 -o "$inst"
				fi || { echo "gen failed for $plat $n $seed" >&2; continue; }
				for r in $RUNS; do
					solver=${r%%:*}
					backend=${r#*:}
					t0=$(date +%s.%N)
					"$PD" optimize "$inst" "$ROOT/platforms/$plat.yaml" --solver "$solver" --backend "$backend" \
						--time-limit "$TL" --json >"$T/out" 2>"$T/err"
					rc=$?
					wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
					label="$solver/$backend"
					if [ "$rc" -le 1 ] && [ -s "$T/out" ]; then
						jq -r --arg p "$plat" --arg n "$n" --arg s "$seed" --arg l "$label" --arg w "$wall" --arg rc "$rc" \
							'[$p, $n, $s, $l, .status, (.power_w // "-"), (.lower_bound_w // "-"),
							  (if .gap == null then "-" else (.gap * 100 | tostring) end), .solve_time_s, $w, $rc] | @tsv' "$T/out"
					else
						printf "%s\t%s\t%s\t%s\tABORT\t-\t-\t-\t-\t%s\t%s\n" "$plat" "$n" "$seed" "$label" "$wall" "$rc"
					fi |
						awk -F'\t' '{ p = ($6 == "-") ? "-" : sprintf("%.4f", $6); b = ($7 == "-") ? "-" : sprintf("%.4f", $7);
							 g = ($8 == "-") ? "-" : sprintf("%.3f", $8); t = ($9 == "-") ? "-" : sprintf("%.2f", $9);
							 printf "%-10s %5s %8s %-16s %-10s %9s %9s %8s %7s %7s %3s\n", $1, $2, $3, $4, $5, p, b, g, t, $10, $11 }' |
						tee -a "$T/rows"
				done
			done
		done
	done
	echo
	echo "# per board, size and solver over the seeds: median / worst"
	awk -v tl="$TL" '
	function sortv(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
	function med(a, n) { sortv(a, n); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	function worst(a, n,   i, m) { m = a[1]; for (i = 2; i <= n; i++) if (a[i] > m) m = a[i]; return m }
	{ k = $1 " " $2 " " $4; if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
	  cnt[k]++; if ($5 == "ABORT") ab[k]++; if ($5 == "optimal") opt[k]++
	  if ($8 != "-") { ng[k]++; G[k, ng[k]] = $8 }
	  if ($9 != "-") { nt[k]++; S[k, nt[k]] = $9 }
	  nw[k]++; W[k, nw[k]] = $10 - tl
	  if ($6 != "-") P[$1 " " $2 " " $3 " " $4] = $6 }
	END {
	  printf "%-10s %5s %-16s %5s %7s %6s %15s %15s %17s\n", "platform", "tasks", "solver", "runs", "optimal", "aborts", "gap_% med/worst", "time_s med/worst", "wall-limit med/worst"
	  for (q = 1; q <= nk; q++) { k = order[q]; split(k, f, " ")
	    delete g; delete t; delete w
	    for (i = 1; i <= ng[k]; i++) g[i] = G[k, i]; for (i = 1; i <= nt[k]; i++) t[i] = S[k, i]; for (i = 1; i <= nw[k]; i++) w[i] = W[k, i]
	    gs = ng[k] ? sprintf("%.3f/%.3f", med(g, ng[k]), worst(g, ng[k])) : "-"
	    ts = nt[k] ? sprintf("%.2f/%.2f", med(t, nt[k]), worst(t, nt[k])) : "-"
	    ws = sprintf("%+.3f/%+.3f", med(w, nw[k]), worst(w, nw[k]))
	    printf "%-10s %5s %-16s %5d %7d %6d %15s %15s %17s\n", f[1], f[2], f[3], cnt[k], opt[k], ab[k], gs, ts, ws }
	  print ""
	  print "# exact (non-heuristic runs) against heuristic/glpk, same set: worst power_exact / power_heuristic - 1"
	  for (x in P) { split(x, f, " "); if (f[4] == "heuristic/glpk") continue
	    h = f[1] " " f[2] " " f[3] " heuristic/glpk"; if (!(h in P)) continue
	    e = P[x] / P[h] - 1; b = f[1] " " f[2] " " f[4]; if (!(b in ex) || e > ex[b]) ex[b] = e }
	  for (b in ex) printf "%s %+.5f %%\n", b, 100 * ex[b]
	  print ""
	  print "# heuristic solve time (time_s) at 120 tasks against the target (< 1 s): median / worst over the seeds"
	  for (q = 1; q <= nk; q++) { k = order[q]; split(k, f, " ")
	    if (f[2] != 120 || f[3] !~ /^heuristic\// || !nt[k]) continue
	    delete t; for (i = 1; i <= nt[k]; i++) t[i] = S[k, i]
	    wt = worst(t, nt[k])
	    printf "%-10s %-16s %.2f / %.2f s %s\n", f[1], f[3], med(t, nt[k]), wt, wt < 1 ? "met" : "NOT met" } }' "$T/rows"
	exit 0
fi

printf "%-10s %5s %-12s %-10s %9s %9s %8s %7s\n" platform tasks solver status power_W bound_W gap_% time_s
for plat in $PLATS; do
	for n in $SIZES; do
		read -r nd per <<<"$(shape "$n")"
		# Under the density test every task on a path of L layers needs about C L / D of a core, so
		# the suite keeps DAGs deep (5-8 layers), tasks small (>= 20 us) and the load moderate.
		if [ "$plat" = zcu102 ]; then
			util=$(awk -v d="$nd" 'BEGIN { printf "%.3f", 0.06 * d }'); acc=0.2
		else
			util=$(awk -v d="$nd" 'BEGIN { printf "%.3f", 0.06 * d }'); acc=0
		fi
		inst="$T/$plat-$n.yaml"
		"$PD" gen --dags "$nd" --tasks "$per:$per" --util "$util" --accel-ratio "$acc" --seed "$n" \
			--min-wcet 20us --layers 5:8 -o "$inst" ||
			{ echo "gen failed for $plat $n" >&2; continue; }
		runs="exact:glpk heuristic:glpk"
		[ "$CBC" = 1 ] && runs="exact:glpk exact:cbc heuristic:glpk"
		[ -n "$RUNS" ] && runs=$RUNS
		for r in $runs; do
			solver=${r%%:*}
			backend=${r#*:}
			"$PD" optimize "$inst" "$ROOT/platforms/$plat.yaml" --solver "$solver" --backend "$backend" \
				--time-limit "$TL" --json >"$T/out" 2>/dev/null
			label=$solver
			[ "$solver" = exact ] && label="exact/$backend"
			jq -r --arg p "$plat" --arg n "$n" --arg l "$label" \
				'[$p, $n, $l, .status, (.power_w // "-"), (.lower_bound_w // "-"),
				  (if .gap == null then "-" else (.gap * 100 | tostring) end), .solve_time_s] | @tsv' "$T/out" |
				awk -F'\t' '{ p = ($5 == "-") ? "-" : sprintf("%.4f", $5); b = ($6 == "-") ? "-" : sprintf("%.4f", $6);
					 g = ($7 == "-") ? "-" : sprintf("%.3f", $7);
					 printf "%-10s %5s %-12s %-10s %9s %9s %8s %7.2f\n", $1, $2, $3, $4, p, b, g, $8 }'
		done
	done
done

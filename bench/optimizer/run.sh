#!/bin/bash
# Optimizer benchmark: a fixed, seeded suite of random DAG sets (powerdag gen) on the ODROID-XU4
# (big.LITTLE, 13 x 19 OPPs) and the ZCU102 (4 x A53 + FPGA), solved by the exact mode (GLPK, and CBC
# unless --no-cbc) and the heuristic; prints one table row per (instance, solver):
#   platform tasks solver status power_W lower_bound_W gap_% time_s
#
# usage: bench/optimizer/run.sh [--quick] [--time-limit S] [--sizes "5 10 20"] [--no-cbc]
#                                [--platforms "odroid-xu4 zcu102"] [--solvers "exact:glpk heuristic:glpk"]
#                                [--powerdag PATH]
#   --quick   sizes 5 10 20 30 50 with a 10 s limit (a few minutes); default: all sizes, 60 s
#   --solvers runs as solver:backend (default exact:glpk exact:cbc heuristic:glpk)
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
while [ $# -gt 0 ]; do
	case $1 in
	--quick) TL=10; SIZES="5 10 20 30 50" ;;
	--time-limit) TL=$2; shift ;;
	--sizes) SIZES=$2; shift ;;
	--no-cbc) CBC=0 ;;
	--platforms) PLATS=$2; shift ;;
	--solvers) RUNS=$2; shift ;;
	--powerdag) PD=$2; shift ;;
	-h|--help) sed -n '2,14p' "$0"; exit 0 ;;
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

#!/usr/bin/env bash
# Regenerates docs/powerdag.1 from the commands' own --help texts, so the man page never drifts from
# the binary. Usage: scripts/gen-man.sh build/powerdag > docs/powerdag.1
set -euo pipefail
bin=${1:?usage: gen-man.sh PATH/TO/powerdag}
esc() { sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\&'/"; }
cat <<'HDR'
.TH POWERDAG 1 "2026" "powerdag" "User Commands"
.SH NAME
powerdag \- power-aware deployer of real-time DAGs (optimise, simulate, deploy, report)
.SH SYNOPSIS
.B powerdag
.I COMMAND
.RI [ ARGS ]
.SH DESCRIPTION
powerdag reads a DAG set and a board description, computes a deployment plan with a MILP (GLPK): the
placement of every task on a core, a GPU or an FPGA slot, one frequency per CPU island and a
SCHED_DEADLINE reservation per task, minimising average power or maximising slack under a power cap.
It checks the plan independently, simulates it, deploys it to a board over SSH (or to the board twin,
an emulated board on this machine), runs it with powerdag-agent and reports measured power and
deadline misses next to the predictions.
.SH EXIT STATUS
0 success; 1 the checked property does not hold (infeasible, unschedulable, misses with
\-\-fail\-on\-miss); 2 bad usage or bad input (nothing written); 3 environment problem (board
unreachable, permission denied, missing kernel feature, admission refused).
.SH COMMANDS
HDR
for c in $("$bin" --help | awk '/^commands:/{f=1;next} /^$/{f=0} f{print $1}'); do
  echo ".SS $c"
  echo ".nf"
  "$bin" "$c" --help | esc
  echo ".fi"
done
cat <<'FTR'
.SH FILES
.TP
.I platforms/*.yaml
shipped board descriptions (ZCU102, Jetson Xavier AGX, ODROID-XU4)
.TP
.I dags/examples/*.yaml
example DAG sets
.TP
.I /run/powerdag-twin
state of the board twin (platform.yaml, identity key, known_hosts)
.SH SEE ALSO
docs/FORMATS.md, docs/MODEL.md, docs/DEPLOY.md, docs/TWIN.md, docs/RUNLOG.md, docs/REPORTS.md,
.BR powerdag-agent ,
.BR sched (7),
.BR iiod (8)
FTR

#!/bin/bash
# capture.sh OUTDIR: build probe.cu with line info and capture compute-sanitizer text and XML
# output for the cases bugs.cu does not cover. Each .txt starts with "+ command" and ends with
# "exit=N" (the sanitizer's exit code).
set -u
out=${1:?outdir}; mkdir -p "$out"; here=$(cd "$(dirname "$0")" && pwd)
cd "$out"
nvcc -arch=sm_90 -lineinfo -o probe "$here/probe.cu" > build.txt 2>&1 || { cat build.txt; exit 1; }
cs() { # cs NAME ARGS...: text to NAME.txt
  local name=$1; shift
  { echo "+ compute-sanitizer $*"; timeout -s KILL 60 compute-sanitizer "$@" 2>&1; echo "exit=$?"; } > "$name.txt"
}
csx() { # csx NAME ARGS...: also --xml --save NAME.xml
  local name=$1; shift
  cs "$name" --xml --save "$name.xml" "$@"
}
E="--error-exitcode 86"
for c in misaligned badaddr smem assert apierr doublefree nolaunch nocuda exit3 abort segv fine leak; do
  csx mc_$c --tool memcheck $E --leak-check full ./probe $c
done
csx mc_tmpl --tool memcheck $E --padding 4096 ./probe tmpl
csx mc_ns --tool memcheck $E --padding 4096 ./probe ns
csx mc_tmpl_demangle_no --tool memcheck $E --padding 4096 --demangle no ./probe tmpl
csx mc_fine_session --tool memcheck $E --save-session-details --print-session-details ./probe fine
csx mc_nolaunch_session --tool memcheck $E --save-session-details --print-session-details ./probe nolaunch
cs mc_tmpl_apiall --tool memcheck $E --padding 4096 --print-limit 10000 --leak-check full --report-api-errors all ./probe tmpl
for c in samevalue war; do
  for m in analysis hazard all; do csx rc_${c}_$m --tool racecheck $E --racecheck-report $m ./probe $c; done
done
csx rc_nolaunch --tool racecheck $E ./probe nolaunch
csx sc_syncwarp --tool synccheck $E ./probe syncwarp
csx sc_nolaunch --tool synccheck $E ./probe nolaunch
csx ic_uninitcopy --tool initcheck $E ./probe uninitcopy
csx ic_unused --tool initcheck $E --track-unused-memory ./probe unused
csx ic_nolaunch --tool initcheck $E ./probe nolaunch
cs cs_badtool --tool bogus ./probe fine
cs cs_missing_target --tool memcheck ./no-such-program
cs cs_xml_nosave --tool memcheck --xml ./probe fine
# A hung kernel under the sanitizer: kill only the sanitizer, then see whether the target survives.
setsid compute-sanitizer --tool memcheck ./probe hang > hang_run.txt 2>&1 &
pid=$!; sleep 10
{ echo "+ ps before"; ps -o pid,pgid,ppid,stat,etime,args -g "$(ps -o pgid= -p $pid | tr -d ' ')" ;
  kill -KILL $pid; sleep 2; echo "+ ps after killing only the sanitizer (pid $pid)"; ps -eo pid,pgid,ppid,stat,etime,args | grep -E 'probe hang|TreeLauncher' | grep -v grep;
  pg=$(ps -eo pgid,args | awk '/probe hang/ && !/awk/ {print $1; exit}'); [ -n "$pg" ] && kill -KILL -- -$pg; sleep 1;
  echo "+ after group kill"; ps -eo pid,args | grep -E 'probe hang' | grep -v grep; echo end; } > hang_kill.txt 2>&1
compute-sanitizer --version > version.txt 2>&1; nvidia-smi --query-gpu=name,driver_version --format=csv >> version.txt 2>&1; nvcc --version >> version.txt

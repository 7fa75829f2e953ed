#!/usr/bin/env bash
# exports.sh libjinst.so: the dynamic symbols it defines are the JVMTI agent
# entry points and JNI functions, nothing of the libraries linked into it.
set -euo pipefail
syms=$(nm -D --defined-only "$1" | awk '{print $3}' | sort)
echo "$syms"
for s in Agent_OnLoad Agent_OnAttach Agent_OnUnload; do
	grep -qx "$s" <<<"$syms" || { echo "FAIL: $s is not exported"; exit 1; }
done
bad=$(grep -vE '^(Agent_OnLoad|Agent_OnAttach|Agent_OnUnload|JNI_OnLoad|JNI_OnUnload|Java_.*)$' <<<"$syms" || true)
[[ -z $bad ]] || { echo "FAIL: exported besides the entry points:"; echo "$bad"; exit 1; }
echo "exports: ok"

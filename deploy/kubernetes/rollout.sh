#!/usr/bin/env bash
# First deploy and every upgrade of Sunrise on Kubernetes: migrations first, then the rollout.
#
#   deploy/kubernetes/rollout.sh deploy/kubernetes/overlays/production
#
# 1. the namespace, ConfigMap and data volume;
# 2. checks that the Secret sunrise-secrets exists (it is never in git);
# 3. re-runs the migrate Job with the new image (a Job's pod template cannot change in
#    place, so the last run is deleted first) and waits for it to complete;
# 4. applies everything else (api, worker, beat, autoscalers) and waits for each rollout.
# A failed migration stops here, before any pod runs the new code.
# KUBECTL overrides the kubectl command (e.g. "kubectl --context prod").
set -euo pipefail

overlay="${1:?usage: $0 OVERLAY_DIR (e.g. deploy/kubernetes/overlays/production)}"
read -r -a kubectl <<<"${KUBECTL:-kubectl}"
namespace="$(sed -n 's/^namespace: *//p' "$overlay/kustomization.yaml")"
[ -n "$namespace" ] || { echo "$overlay/kustomization.yaml sets no namespace" >&2; exit 2; }
timeout="${ROLLOUT_TIMEOUT:-15m}"

echo "== settings and storage ($namespace)"
"${kubectl[@]}" apply -k "$overlay" -l 'app.kubernetes.io/component in (config,storage)'

if ! "${kubectl[@]}" -n "$namespace" get secret sunrise-secrets >/dev/null; then
  echo "the Secret sunrise-secrets is missing in $namespace: create it as" \
       "deploy/kubernetes/secret.example.yaml shows, then run this again" >&2
  exit 1
fi

echo "== migrations"
"${kubectl[@]}" -n "$namespace" delete job sunrise-migrate --ignore-not-found --wait=true
"${kubectl[@]}" apply -k "$overlay" -l app.kubernetes.io/component=migrate
if ! "${kubectl[@]}" -n "$namespace" wait --for=condition=complete job/sunrise-migrate \
    --timeout="$timeout"; then
  "${kubectl[@]}" -n "$namespace" logs job/sunrise-migrate --tail=50 >&2 || true
  echo "migrations did not complete: nothing else was changed" >&2
  exit 1
fi

echo "== rollout"
"${kubectl[@]}" apply -k "$overlay"
for deployment in sunrise-api sunrise-worker sunrise-beat; do
  "${kubectl[@]}" -n "$namespace" rollout status "deployment/$deployment" --timeout="$timeout"
done

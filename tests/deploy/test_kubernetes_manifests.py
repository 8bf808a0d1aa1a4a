"""deploy/kubernetes: every overlay renders (tests/deploy/kustomize.py), every object is
valid for Kubernetes (kubernetes-validate's offline schemas, strict, oldest and newest
supported versions) or for KEDA (its vendored CRD schemas), and the objects say what
docs/deployment.md promises: probes, non-root pods, scaling rules tied to the settings
they depend on, one beat, a grace period longer than a job can run."""
from __future__ import annotations

import copy
import re
from pathlib import Path
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml

from api.fleet_metrics import KOMBU_UNACKED_KEY
from shared.config import Settings
from tests.deploy.crd_schema import CrdValidator
from tests.deploy.kustomize import KustomizeError, load_documents, pod_templates, render

ROOT = Path(__file__).resolve().parents[2]
KUBE = ROOT / "deploy" / "kubernetes"
OVERLAYS = sorted(p.parent.name for p in (KUBE / "overlays").glob("*/kustomization.yaml"))
# The oldest Kubernetes the manifests claim (docs/deployment.md), and the newest schemas.
K8S_VERSIONS = ("1.29.0", kubernetes_validate.latest_version())
SECRET_EXAMPLE = load_documents(KUBE / "secret.example.yaml")
IMAGE_UID = int(re.search(r"^USER (\d+)", (ROOT / "Dockerfile").read_text(), re.M)[1])
# Keys KEDA's redis scaler reads from trigger metadata (pkg/scalers/redis_scaler.go,
# v2.20.2); a "<key>FromEnv" variant reads the value from the target's environment.
REDIS_TRIGGER_KEYS = {"address", "addresses", "host", "hosts", "port", "ports", "username",
                      "password", "sentinelUsername", "sentinelPassword", "sentinelMaster",
                      "unsafeSsl", "listLength", "activationListLength", "listName",
                      "databaseIndex", "enableTLS"}
CRDS = CrdValidator()


def rendered(overlay: str) -> list[dict]:
    return render(KUBE / "overlays" / overlay)


def one(objects: list[dict], kind: str, name: str) -> dict:
    (found,) = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def config(objects: list[dict]) -> dict[str, str]:
    return one(objects, "ConfigMap", "sunrise-config")["data"]


def container(objects: list[dict], name: str) -> dict:
    kind = "Job" if name == "sunrise-migrate" else "Deployment"
    template = pod_templates([one(objects, kind, name)])[0]
    (first,) = template["spec"]["containers"]
    return first


@pytest.fixture(scope="module", params=OVERLAYS)
def objects(request) -> list[dict]:
    return rendered(request.param)


def test_there_are_overlays_for_a_cluster_and_a_single_node():
    assert set(OVERLAYS) == {"production", "single-node"}


def test_every_object_validates(objects):
    """Built-in kinds against Kubernetes' schemas (strict: unknown fields are errors),
    KEDA's against its CRDs; nothing falls between the two."""
    for obj in [*objects, *SECRET_EXAMPLE]:
        if (obj["apiVersion"], obj["kind"]) in CRDS.kinds():
            assert CRDS.errors(obj) == [], obj["metadata"]["name"]
            continue
        # A built-in group (core, apps, batch, ...) has no dot; a CRD's always has one.
        assert "." not in obj["apiVersion"].rpartition("/")[0], obj["apiVersion"]
        for version in K8S_VERSIONS:
            kubernetes_validate.validate(obj, version, strict=True)


def test_validators_reject_what_the_api_server_would():
    objects = rendered("production")
    typo = copy.deepcopy(one(objects, "Deployment", "sunrise-api"))
    typo["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(typo, K8S_VERSIONS[0], strict=True)
    scaled = copy.deepcopy(one(objects, "ScaledObject", "sunrise-worker"))
    scaled["spec"]["minReplicaCount"] = scaled["spec"]["maxReplicaCount"] + 1
    scaled["spec"]["triggers"][0]["authRef"] = {"name": "x"}
    errors = CRDS.errors(scaled)
    assert "minReplicaCount must be less than or equal to maxReplicaCount" in errors
    assert any("'authRef' was unexpected" in e for e in errors)
    del scaled["spec"]["triggers"]
    assert any("'triggers' is a required property" in e for e in CRDS.errors(scaled))


def test_the_renderer_refuses_what_it_cannot_render(tmp_path):
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [../base]\ncommonLabels: {team: x}\n")
    with pytest.raises(KustomizeError, match="commonLabels"):
        render(tmp_path)
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump({
        "resources": [str(KUBE / "base")],
        "patches": [{"target": {"kind": "Deployment", "name": "nope"}, "patch": "[]"}]}))
    with pytest.raises(KustomizeError, match="matches 0"):
        render(tmp_path)


def test_overlays_set_namespace_and_image_on_everything(objects):
    namespace = one(objects, "Namespace", "sunrise")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    for obj in objects:
        if obj["kind"] != "Namespace":
            assert obj["metadata"]["namespace"] == "sunrise", obj["metadata"]["name"]
    images = {c["image"] for t in pod_templates(objects) for c in t["spec"]["containers"]}
    assert len(images) == 1 and re.fullmatch(r"\S+:[\w.-]+", images.pop())


def test_pods_are_non_root_read_only_and_write_only_where_declared(objects):
    for template in pod_templates(objects):
        pod = template["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] == IMAGE_UID
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert pod["automountServiceAccountToken"] is False
        volumes = {v["name"]: v for v in pod["volumes"]}
        for c in pod["containers"]:
            assert c["securityContext"] == {"allowPrivilegeEscalation": False,
                                            "readOnlyRootFilesystem": True,
                                            "capabilities": {"drop": ["ALL"]}}
            mounts = {m["mountPath"]: volumes[m["name"]] for m in c["volumeMounts"]}
            assert "/tmp" in mounts and "emptyDir" in mounts["/tmp"]
            assert set(mounts) <= {"/tmp", "/data"}
            if "/data" in mounts:
                claim = mounts["/data"]["persistentVolumeClaim"]["claimName"]
                one(objects, "PersistentVolumeClaim", claim)
            assert c["resources"]["requests"] and c["resources"]["limits"]["memory"]


def test_every_pod_reads_the_settings_and_the_secret(objects):
    secret_keys = set(SECRET_EXAMPLE[0]["stringData"])
    for template in pod_templates(objects):
        (c,) = template["spec"]["containers"]
        assert c["envFrom"] == [{"configMapRef": {"name": "sunrise-config"}},
                                {"secretRef": {"name": "sunrise-secrets"}}]
    auth = one(objects, "TriggerAuthentication", "sunrise-redis")
    for ref in auth["spec"]["secretTargetRef"]:
        assert ref["name"] == "sunrise-secrets" and ref["key"] in secret_keys


def test_settings_in_configmap_and_secret_are_real_settings(monkeypatch, objects):
    env = {**config(objects), **SECRET_EXAMPLE[0]["stringData"]}
    fields = {f"SUNRISE_{name.upper()}" for name in Settings.model_fields}
    unknown = {k for k in env if k.startswith("SUNRISE_")} - fields
    assert unknown == set(), "not a Settings field (shared/config.py)"
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    settings = Settings()
    assert settings.env == "production" and settings.job_deadline_s == 300
    assert settings.data_dir == "/data" and settings.duckdb_path.startswith("/data/")
    assert settings.worker_concurrency == int(env["SUNRISE_WORKER_CONCURRENCY"])


def test_probes_hit_what_each_process_serves(objects):
    api = container(objects, "sunrise-api")
    assert api["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert api["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert {p["name"]: p["containerPort"] for p in api["ports"]} == {
        "http": int(api["command"][api["command"].index("--port") + 1])}
    worker = container(objects, "sunrise-worker")
    port = {p["name"]: p["containerPort"] for p in worker["ports"]}["metrics"]
    assert port == int(config(objects)["SUNRISE_WORKER_METRICS_PORT"])
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert worker[probe]["httpGet"] == {"path": "/metrics", "port": "metrics"}
    service = one(objects, "Service", "sunrise-api")
    api_pod = one(objects, "Deployment", "sunrise-api")["spec"]["template"]
    assert service["spec"]["selector"].items() <= api_pod["metadata"]["labels"].items()


def test_worker_grace_period_covers_the_job_deadline(objects):
    pod = one(objects, "Deployment", "sunrise-worker")["spec"]["template"]["spec"]
    deadline = float(config(objects)["SUNRISE_JOB_DEADLINE_S"])
    assert pod["terminationGracePeriodSeconds"] >= deadline + 30
    assert container(objects, "sunrise-worker")["command"][:2] == ["sunrise", "worker"]


def test_api_and_workers_autoscale_and_keep_no_fixed_replica_count(objects):
    for name in ("sunrise-api", "sunrise-worker"):
        deployment = one(objects, "Deployment", name)
        assert "replicas" not in deployment["spec"], f"{name}: the autoscaler owns replicas"
        assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
        pdb = one(objects, "PodDisruptionBudget", name)
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    hpa = one(objects, "HorizontalPodAutoscaler", "sunrise-api")
    assert hpa["spec"]["scaleTargetRef"]["name"] == "sunrise-api"
    assert [m["resource"]["name"] for m in hpa["spec"]["metrics"]] == ["cpu"]
    assert one(objects, "ScaledObject", "sunrise-worker")["spec"]["scaleTargetRef"] == {
        "name": "sunrise-worker"}


def test_beat_is_exactly_one(objects):
    beat = one(objects, "Deployment", "sunrise-beat")
    assert beat["spec"]["replicas"] == 1 and beat["spec"]["strategy"] == {"type": "Recreate"}
    targets = [o["spec"]["scaleTargetRef"]["name"] for o in objects
               if o["kind"] in ("HorizontalPodAutoscaler", "ScaledObject")]
    assert "sunrise-beat" not in targets
    assert not [o for o in objects if o["kind"] == "PodDisruptionBudget"
                and o["spec"]["selector"]["matchLabels"].get(
                    "app.kubernetes.io/component") == "beat"]


def test_migrations_run_as_a_job_that_upgrades_then_builds_the_sample(objects):
    job = one(objects, "Job", "sunrise-migrate")
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert container(objects, "sunrise-migrate")["command"][-1] == (
        "sunrise db upgrade && sunrise sample-data")


def test_dataset_volume_is_shared_or_the_overlay_says_single_node(objects):
    claim = one(objects, "PersistentVolumeClaim", "sunrise-data")
    modes = claim["spec"]["accessModes"]
    single_node = one(objects, "ScaledObject", "sunrise-worker")["spec"]["maxReplicaCount"] <= 4
    assert modes == (["ReadWriteOnce"] if single_node else ["ReadWriteMany"])


# -- the worker autoscaler: KEDA's redis scaler over the Celery queues -----------------

def triggers(objects: list[dict]) -> dict[str, dict]:
    scaled = one(objects, "ScaledObject", "sunrise-worker")
    return {t["metadata"]["listName"]: t for t in scaled["spec"]["triggers"]}


def test_triggers_use_only_keys_the_redis_scaler_reads(objects):
    for trigger in triggers(objects).values():
        assert trigger["type"] == "redis"
        keys = {k.removesuffix("FromEnv") for k in trigger["metadata"]}
        assert keys <= REDIS_TRIGGER_KEYS, keys - REDIS_TRIGGER_KEYS
        assert int(trigger["metadata"]["listLength"]) > 0
        assert trigger["authenticationRef"] == {"name": "sunrise-redis"}


def test_triggers_watch_the_broker_the_pods_use(objects):
    url = urlsplit(config(objects)["SUNRISE_REDIS_URL"])
    for name, trigger in triggers(objects).items():
        assert trigger["metadata"]["address"] == f"{url.hostname}:{url.port or 6379}", name
        assert trigger["metadata"]["databaseIndex"] == (url.path.strip("/") or "0"), name


def test_every_worker_queue_has_a_backlog_trigger_and_in_flight_is_counted(objects):
    command = container(objects, "sunrise-worker")["command"]
    queues = set(command[command.index("--queues") + 1].split(","))
    assert set(triggers(objects)) == queues | {KOMBU_UNACKED_KEY}
    assert {"chat", "reports", "datasets"} <= queues


def test_targets_follow_the_worker_concurrency(objects):
    """In flight: 3/4 of a worker's threads (docs/deployment.md, "Scaling workers on queue
    depth"); a backlog: one worker per `concurrency` waiting messages."""
    concurrency = int(config(objects)["SUNRISE_WORKER_CONCURRENCY"])
    found = {name: int(t["metadata"]["listLength"]) for name, t in triggers(objects).items()}
    assert found.pop(KOMBU_UNACKED_KEY) == concurrency * 3 // 4
    assert set(found.values()) == {concurrency}

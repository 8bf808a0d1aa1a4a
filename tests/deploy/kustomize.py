"""Render a kustomization as `kubectl kustomize` does, for the subset deploy/kubernetes uses.

No kustomize binary installs from PyPI or Debian, so the suite renders the overlays
itself. To stay exact it accepts only these kustomization fields and refuses any other
(so an overlay cannot quietly grow a feature this renderer would get wrong):

- ``resources``: YAML files, or directories holding a kustomization (rendered first);
- ``namespace``: set on every namespaced object;
- ``images``: ``name`` → ``newName`` / ``newTag`` on the containers of pod templates;
- ``patches``: inline JSON 6902 operations (applied with ``jsonpatch``) on the one
  object named by ``target.kind`` + ``target.name``.

The order is kustomize's: resources, patches, namespace, images. The result was
compared with `kubectl kustomize` (v5.5) for both overlays when this was written.
"""
from __future__ import annotations

import copy
from pathlib import Path

import jsonpatch
import yaml

FIELDS = {"apiVersion", "kind", "resources", "namespace", "images", "patches"}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
                  "PersistentVolume", "StorageClass", "PriorityClass",
                  "ClusterTriggerAuthentication"}
POD_TEMPLATE_PATHS = {"Deployment": ("spec", "template"), "StatefulSet": ("spec", "template"),
                      "DaemonSet": ("spec", "template"), "Job": ("spec", "template"),
                      "CronJob": ("spec", "jobTemplate", "spec", "template")}


class KustomizeError(ValueError):
    """The kustomization uses something outside the supported subset, or is wrong."""


def load_documents(path: Path) -> list[dict]:
    with path.open() as f:
        return [doc for doc in yaml.safe_load_all(f) if doc]


def render(directory: Path) -> list[dict]:
    """Every object the kustomization in ``directory`` produces, in resource order."""
    spec = yaml.safe_load((directory / "kustomization.yaml").read_text())
    unknown = set(spec) - FIELDS
    if unknown:
        raise KustomizeError(f"{directory}: unsupported kustomization fields {sorted(unknown)}")
    objects: list[dict] = []
    for entry in spec.get("resources", []):
        target = (directory / entry).resolve()
        objects += render(target) if target.is_dir() else load_documents(target)
    for patch in spec.get("patches", []):
        _apply_patch(objects, patch, directory)
    if "namespace" in spec:
        for obj in objects:
            if obj["kind"] not in CLUSTER_SCOPED:
                obj.setdefault("metadata", {})["namespace"] = spec["namespace"]
    for image in spec.get("images", []):
        _set_image(objects, image)
    return objects


def _apply_patch(objects: list[dict], patch: dict, directory: Path) -> None:
    if set(patch) != {"target", "patch"} or set(patch["target"]) != {"kind", "name"}:
        raise KustomizeError(f"{directory}: a patch needs exactly target.kind, target.name "
                             f"and an inline JSON 6902 patch: {patch}")
    operations = yaml.safe_load(patch["patch"])
    if not isinstance(operations, list):
        raise KustomizeError(f"{directory}: only JSON 6902 patches (a list of operations)")
    kind, name = patch["target"]["kind"], patch["target"]["name"]
    matches = [i for i, obj in enumerate(objects)
               if obj["kind"] == kind and obj["metadata"]["name"] == name]
    if len(matches) != 1:
        raise KustomizeError(f"{directory}: patch target {kind}/{name} matches {len(matches)}")
    (index,) = matches
    try:
        objects[index] = jsonpatch.apply_patch(copy.deepcopy(objects[index]), operations)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
        raise KustomizeError(f"{directory}: patch on {kind}/{name} fails: {exc}") from exc


def _set_image(objects: list[dict], image: dict) -> None:
    for template in pod_templates(objects):
        spec = template["spec"]
        for container in spec.get("containers", []) + spec.get("initContainers", []):
            name, _, tag = container["image"].partition(":")
            if name == image["name"]:
                tag = image.get("newTag", tag)
                container["image"] = image.get("newName", name) + (f":{tag}" if tag else "")


def pod_templates(objects: list[dict]) -> list[dict]:
    """The pod template of every workload object (Deployment, Job, ...)."""
    templates = []
    for obj in objects:
        path = POD_TEMPLATE_PATHS.get(obj["kind"])
        if path:
            node = obj
            for key in path:
                node = node[key]
            templates.append(node)
    return templates

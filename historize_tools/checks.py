"""The dbt-checkpoint checks, run from packages this machine can install.

dbt-checkpoint installs from its git repository only; dbt-gloss (PyPI) is a
fork with the same hook ids. On dbt 1.11 manifests its description checks work;
its check-model-has-meta-keys demands exactly the listed keys (no others), so
the meta-key check here is this project's equivalent of dbt-checkpoint's
`check-model-has-meta-keys --allow-extra-keys`.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from historize_tools import dbt_runner as dbt
from historize_tools.demo import DEMO_VARS

HISTORY_MATERIALIZATIONS = {"scd2_hist", "scd_type6", "fivetran_history"}
MODEL_META_KEYS = ("lineage",)
HISTORY_META_KEYS = ("lineage", "former_names")
GLOSS_HOOKS = ("check-model-has-description", "check-model-columns-have-desc", "check-model-has-properties-file")


def model_nodes(manifest: dict, project: str) -> list[dict]:
    return [n for n in manifest["nodes"].values() if n["resource_type"] == "model" and n["package_name"] == project]


def project_name(project_dir: Path) -> str:
    import yaml

    return yaml.safe_load((project_dir / "dbt_project.yml").read_text())["name"]


def missing_meta_keys(node: dict) -> list[str]:
    required = HISTORY_META_KEYS if node["config"]["materialized"] in HISTORY_MATERIALIZATIONS else MODEL_META_KEYS
    meta = node["config"].get("meta") or node.get("meta") or {}
    return [key for key in required if key not in meta]


def check_meta_keys(nodes: list[dict]) -> list[str]:
    return [
        f"{node['original_file_path']}: meta lacks {', '.join(missing)}"
        for node in nodes
        if (missing := missing_meta_keys(node))
    ]


def run_gloss(hook: str, manifest_path: Path, files: list[str], cwd: Path) -> int:
    bin_dir = Path(sys.executable).parent
    return subprocess.run([str(bin_dir / hook), "--manifest", str(manifest_path), *files], cwd=cwd).returncode


def main(project_dir: Path = dbt.ROOT) -> int:
    dbt.environment()
    dbt.run(["parse", "--quiet"], project_dir=project_dir, variables=DEMO_VARS)
    manifest_path = project_dir / "target" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    nodes = model_nodes(manifest, project_name(project_dir))
    files = sorted(n["original_file_path"] for n in nodes)
    failed = 0
    for hook in GLOSS_HOOKS:
        code = run_gloss(hook, manifest_path, files, project_dir)
        print(f"{hook}: {'ok' if code == 0 else 'FAILED'}")
        failed |= code
    problems = check_meta_keys(nodes)
    for problem in problems:
        print(problem)
    print(f"check-model-has-meta-keys: {'FAILED' if problems else 'ok'} ({len(nodes)} models)")
    return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else dbt.ROOT))

"""The README's quickstart, followed as a user follows it: its files and commands
taken from the README's code blocks as written, in a fresh dbt project, with the
quickstart's own profile (an embedded Spark that fetches Delta's jars), in a process
of its own. historize is installed as a team installs it: from a git repository at
the release tag packages.yml names (a repository of this working tree, made here and
tagged with the version dbt_project.yml and CHANGELOG.md give; its URL stands in for
the README's). The two tables the README shows must be the ones `dbt show` prints,
and installing historize must add nothing to the project."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import shutil
import tomllib
from pathlib import Path

import yaml

from historize_tools import dbt_runner as dbt

RUNNER = Path(__file__).resolve().parent / "quickstart_runner.py"
FILE_NAME = re.compile(r"`((?:[\w.-]+/)*[\w.-]+\.(?:yml|csv|sql))`")


def quickstart_blocks() -> list[tuple[str, str, str]]:
    """The quickstart's code blocks in order: (language, text, the file the text before it names)."""
    readme = (dbt.ROOT / "README.md").read_text()
    section = readme.split("\n## Quickstart", 1)[1].split("\n## ", 1)[0]
    blocks, position = [], 0
    for found in re.finditer(r"```(\w*)\n(.*?)```", section, flags=re.S):
        before = section[position:found.start()].strip().split("\n\n")[-1]
        names = FILE_NAME.findall(before)
        blocks.append((found.group(1), found.group(2), names[-1] if names else ""))
        position = found.end()
    return blocks


def pinned(requirement: str) -> str:
    """The version pyproject.toml pins for a package."""
    for line in tomllib.loads((dbt.ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        name, _, version = line.partition("==")
        if re.sub(r"\[.*\]", "", name) == requirement:
            return version
    raise AssertionError(f"pyproject.toml pins no {requirement}")


def release() -> str:
    """The version dbt_project.yml gives, which CHANGELOG.md's newest release must name (the
    changes since it stand under `## Unreleased`)."""
    version = yaml.safe_load((dbt.ROOT / "dbt_project.yml").read_text())["version"]
    newest = re.search(r"^## (?!Unreleased$)(\S+)", (dbt.ROOT / "CHANGELOG.md").read_text(), flags=re.M).group(1)
    assert newest == version, (newest, version)
    return version


def tagged_repository(path: Path, tag: str) -> str:
    """A git repository of this working tree (its files git tracks or would track),
    committed and tagged `tag`: its file:// URL."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=dbt.ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (dbt.ROOT / name).is_file():
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(dbt.ROOT / name, path / name)
    identity = ["-c", "user.name=historize", "-c", "user.email=historize@localhost"]
    for command in (["init", "--quiet"], ["add", "--all"], [*identity, "commit", "--quiet", "-m", f"historize {tag}"],
                    [*identity, "tag", "-a", tag, "-m", f"historize {tag}"]):
        subprocess.run(["git", *command], cwd=path, check=True, capture_output=True)
    return path.as_uri()


def test_the_readme_quickstart_as_a_user_follows_it(tmp_path):
    blocks = quickstart_blocks()
    project = tmp_path / "my_project"
    project.mkdir()
    (tmp_path / "historize").mkdir()
    repository = tagged_repository(tmp_path / "historize", release())
    steps: list[list] = []
    expected_tables: list[str] = []
    for language, text, file_name in blocks:
        if language == "bash":
            for line in text.splitlines():
                args = shlex.split(line, comments=True)
                if args[:2] == ["pip", "install"]:
                    installs = dict(re.sub(r"\[.*\]", "", arg).split("==") for arg in args[2:])
                    assert installs == {name: pinned(name) for name in installs}, installs
                    assert set(installs) == {"dbt-core", "dbt-spark", "pyspark"}, installs
                elif args:
                    assert args[0] == "dbt", line
                    steps.append(["dbt", args[1:]])
                    if args[1] == "deps":  # the fresh project lists only its own resources
                        steps.append(["dbt", ["ls", "--resource-type", "all"]])
        elif language:
            assert file_name, f"no file named before the {language} block:\n{text}"
            if file_name == "packages.yml":  # the release tag, from the repository made above
                [package] = yaml.safe_load(text)["packages"]
                assert package["revision"] == release(), package
                text = text.replace(package["git"], repository)
            steps.append(["write", file_name, text])
        else:
            expected_tables.append(text)
    assert [s[1] for s in steps if s[0] == "write"] == [
        "packages.yml", "profiles.yml", "dbt_project.yml", "seeds/customers.csv", "models/customers_hist.sql",
        "models/customers_hist.yml", "seeds/customers.csv"]
    (tmp_path / "steps.json").write_text(json.dumps(steps))

    # as a user's shell has it: no historize variables, dbt's profile from the project folder
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("HISTORIZE_", "DBT_")) and name != "PYTHONPATH"}
    environment["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
    # The tests' Spark settings for tables of a few rows (dbt_runner.small_tables), given to the JVM
    # at its launch: the profile stays the README's, its own settings winning; a quarter less CPU.
    environment["PYSPARK_SUBMIT_ARGS"] = (
        "--conf spark.sql.adaptive.enabled=false --conf spark.sql.codegen.wholeStage=false "
        "--conf spark.sql.codegen.factoryMode=NO_CODEGEN --driver-java-options -XX:+UseParallelGC pyspark-shell")
    run = subprocess.run([sys.executable, str(RUNNER), str(tmp_path / "steps.json"), str(tmp_path / "out.json")],
                         cwd=project, env=environment, capture_output=True, text=True, timeout=900)
    results = json.loads((tmp_path / "out.json").read_text()) if (tmp_path / "out.json").exists() else []
    failed = [r for r in results if not r["success"]]
    assert run.returncode == 0 and not failed, (failed, run.stdout[-3000:], run.stderr[-3000:])

    listed = next(r["listed"] for r in results if r["args"][0] == "ls")
    assert sorted(listed) == ["my_project.customers", "my_project.customers_hist",
                              *sorted(f"my_project.historize_{test}_customers_hist_" for test in (
                                  "no_gaps", "no_overlapping_versions", "one_open_version",
                                  "open_version_unbounded"))], listed
    builds = [r for r in results if r["args"][0] == "build"]
    assert len(builds) == 2
    shown = [r["printed"][0] for r in results if r["args"][0] == "show"]
    assert [table.strip() for table in shown] == [table.strip() for table in expected_tables]

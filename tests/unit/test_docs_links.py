"""Every link of the README and the docs reaches a file of this repository, and a
heading of that page where it names one."""
import re

from historize_tools import dbt_runner as dbt

PAGES = [dbt.ROOT / "README.md", *sorted((dbt.ROOT / "docs").glob("*.md"))]


def anchors(page) -> set[str]:
    """GitHub's anchors of a page's headings."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", page.read_text(), flags=re.S), flags=re.M):
        found.add(re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-"))
    return found


def test_every_link_resolves():
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if re.match(r"[a-z]+://", target):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in anchors(linked)):
                broken.append(f"{page.relative_to(dbt.ROOT)}: {target}")
    assert broken == []

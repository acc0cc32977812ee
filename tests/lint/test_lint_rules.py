"""Each lint rule fires on a purpose-built bad skill and stays silent on a good one."""

from __future__ import annotations

import itertools
import os
import random
from pathlib import Path

import pytest

from skillshelf.errors import SkillNotFoundError, UsageError
from skillshelf.lint import (
    RULES,
    LintReport,
    LintSubject,
    lint_repository,
    lint_subjects,
    rule_filter,
)
from skillshelf.lint._similar import (
    MIN_SIMILAR_NAME_LENGTH,
    description_clusters,
    description_tokens,
    one_edit_apart,
    similar_descriptions,
    similar_name_groups,
)
from skillshelf.repository import Repository
from skillshelf.testing import make_skill

GOOD = (
    "Extracts tables and text from PDF files into CSV or Markdown. Use when the user shares a "
    "PDF and asks for its tables, text or figures."
)


def subject(name: str = "extracting-pdfs", description: str = GOOD, **kw: object) -> LintSubject:
    return LintSubject(name, description, **kw)  # type: ignore[arg-type]


def codes(report: LintReport) -> list[str]:
    return [f.code for f in report.findings]


def lint_dir(root: Path, **kw: object) -> LintReport:
    return lint_repository(Repository([root], cache_dir=False), **kw)  # type: ignore[arg-type]


# -- descriptions --------------------------------------------------------------------------


def test_good_description_and_name_have_no_findings() -> None:
    assert codes(lint_subjects([subject(body="# Steps\n\nDo it.\n")])) == []


@pytest.mark.parametrize(
    "description",
    [
        "Use when the user asks to merge PDF files into one document with bookmarks.",
        "Merges PDF files into one. Use for combining scanned pages into a single document.",
        "Merges PDF files into one document; whenever someone sends several PDFs, offer it.",
        "Guidance for merging PDF documents when building a report out of many scans.",
        "Merges PDF files into one document with bookmarks. Triggers: merge, combine, join.",
        "Merges PDF files into one document. Invoke it before sending a report bundle.",
    ],
)
def test_trigger_wording_passes(description: str) -> None:
    assert "description.no_trigger" not in codes(lint_subjects([subject(description=description)]))


@pytest.mark.parametrize(
    "description",
    [
        "Toolkit for styling artifacts with a theme: ten preset color and font themes.",
        "Merges PDF files into one document with bookmarks and a generated table of contents.",
    ],
)
def test_description_without_when_reports_no_trigger(description: str) -> None:
    report = lint_subjects([subject(description=description, description_line=3)])
    [finding] = [f for f in report.findings if f.code == "description.no_trigger"]
    assert finding.severity == "warning"
    assert finding.line == 3
    assert "Use when" in finding.hint


def test_when_to_use_field_counts_as_trigger_wording() -> None:
    described = subject(
        description="Merges PDF files into one document with bookmarks and contents.",
        when_to_use="When the user sends several PDFs that belong together.",
    )
    assert codes(lint_subjects([described])) == []


def test_short_description_reports_too_short() -> None:
    report = lint_subjects([subject(description="Use for PDFs.")])
    assert codes(report) == ["description.too_short"]
    assert "3 words" in report.findings[0].message


def test_description_over_700_chars_reports_too_long() -> None:
    long = GOOD + " It handles scanned pages too." * 20
    assert len(long) > 700
    assert codes(lint_subjects([subject(description=long)])) == ["description.too_long"]
    assert codes(lint_subjects([subject(description=long[:700])])) == []


@pytest.mark.parametrize("phrase", ["I can merge", "You can use it to merge", "helps me merge"])
def test_first_or_second_person_is_info(phrase: str) -> None:
    report = lint_subjects([subject(description=f"{GOOD} {phrase} files.")])
    assert [(f.code, f.severity) for f in report.findings] == [("description.person", "info")]


def test_quoted_user_request_is_not_first_person() -> None:
    text = f'{GOOD} Requests look like "make me a table from this PDF".'
    assert codes(lint_subjects([subject(description=text)])) == []


# -- names ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["helper", "utils", "data-tools", "misc", "pdf-tools", "general"])
def test_generic_names_report_name_abstract(name: str) -> None:
    [finding] = lint_subjects([subject(name=name)]).findings
    assert finding.code == "name.abstract"
    assert "processing-" in finding.hint


@pytest.mark.parametrize("name", ["processing-pdfs", "pdf-editing", "linear", "mcp-builder"])
def test_action_object_names_pass(name: str) -> None:
    assert codes(lint_subjects([subject(name=name)])) == []


def test_pdf_tools_hint_keeps_the_object() -> None:
    [finding] = lint_subjects([subject(name="pdf-tools")]).findings
    assert "processing-pdf" in finding.hint and "pdf-editing" in finding.hint


# -- near duplicates -----------------------------------------------------------------------

TWIN = (
    "Extracts tables and text from PDF files into CSV or Markdown. Use when the user shares a "
    "PDF and asks for its tables or text."
)
OTHER = "Drafts release notes from git history. Use when the user asks for a changelog entry."


def test_near_duplicate_descriptions_are_one_finding_naming_both() -> None:
    report = lint_subjects(
        [subject("pdf-tables", GOOD), subject("pdf-extracting", TWIN), subject("notes", OTHER)]
    )
    dupes = [(f.skill, f.related) for f in report.findings if f.code == "description.duplicate"]
    assert dupes == [("pdf-extracting", ("pdf-tables",))]
    assert "%" in report.findings[0].message


def test_named_skill_of_a_group_carries_its_finding() -> None:
    pair = [subject("pdf-tables", GOOD), subject("pdf-extracting", TWIN)]
    report = lint_subjects(pair, only={"pdf-tables"}, select=["description.duplicate"])
    assert [(f.skill, f.related) for f in report.findings] == [("pdf-tables", ("pdf-extracting",))]


def _composio(app: str) -> str:
    return (
        f"Automate {app} tasks via Rube MCP (Composio): manage records, sync contacts and run "
        f"workflows in {app}. Use when the user asks to automate {app}."
    )


APPS = ("Gmail", "Slack", "Notion", "Airtable", "Hubspot", "Zendesk")


def test_template_family_is_one_group_naming_what_varies() -> None:
    family = [subject(f"{a.lower()}-automation", _composio(a)) for a in APPS]
    report = lint_subjects([*family, subject("notes", OTHER)], select=["description.duplicate"])
    [group] = report.findings
    assert group.skill == "airtable-automation"
    assert set(group.related) == {f"{a.lower()}-automation" for a in APPS} - {group.skill}
    assert '"Automate … tasks via Rube MCP (Composio)' in group.message
    assert "gmail-automation (Gmail)" in group.message
    assert "slack-automation (Slack)" in group.message


def test_a_thousand_near_copies_are_one_finding_per_group() -> None:
    rng = random.Random(3)
    apps = sorted({"".join(rng.choices("bcdfgklmnprstvz", k=7)).title() for _ in range(1100)})
    apps = apps[:1000]
    half = len(apps) // 2
    family = [subject(f"{a.lower()}-automation", _composio(a)) for a in apps[:half]]
    family += [
        subject(
            f"{a.lower()}-reports",
            f"Builds weekly {a} reports as PDF with charts and a summary table. Use when the "
            f"user wants a {a} report.",
        )
        for a in apps[half:]
    ]
    report = lint_subjects(family, select=["description", "name.similar"])
    groups = [f for f in report.findings if f.code == "description.duplicate"]
    assert len(groups) == 2
    assert sorted(len(g.related) + 1 for g in groups) == [half, len(apps) - half]
    assert all("and " in g.message and " more" in g.message for g in groups)
    assert len(report.findings) < 20
    assert not report.notes


def test_identical_descriptions_say_so() -> None:
    report = lint_subjects(
        [subject("pdf-tables", GOOD), subject("pdf-extracting", GOOD)],
        select=["description.duplicate"],
    )
    assert "pdf-extracting (identical)" in report.findings[0].message


def test_similarity_threshold_decides_what_is_a_duplicate() -> None:
    pair = [subject("pdf-tables", GOOD), subject("pdf-extracting", TWIN)]
    assert "description.duplicate" in codes(lint_subjects(pair, similarity=0.6))
    assert "description.duplicate" not in codes(lint_subjects(pair, similarity=0.99))


@pytest.mark.parametrize("value", [0.0, -0.1, 1.5])
def test_similarity_outside_zero_one_is_a_usage_error(value: float) -> None:
    with pytest.raises(UsageError, match="similarity"):
        lint_subjects([subject()], similarity=value)


def test_duplicate_check_reports_when_its_budget_runs_out() -> None:
    many = [subject(f"pdf-extracting-{i}", f"{GOOD} Variant {i}.") for i in range(30)]
    report = lint_subjects(many, select=["description.duplicate"], budget=5)
    assert report.notes and "stopped after 5" in report.notes[0]


def test_look_alike_names_are_info() -> None:
    report = lint_subjects([subject("csv-reports"), subject("csv-report", OTHER)])
    similar = [(f.skill, f.severity, f.related) for f in report.findings]
    assert similar == [("csv-report", "info", ("csv-reports",))]


def test_a_chain_of_look_alike_names_is_one_finding() -> None:
    names = [f"sales-report-{i}" for i in range(9)]
    report = lint_subjects([subject(n, f"{GOOD} {n}") for n in names], select=["name.similar"])
    [group] = report.findings
    assert (group.skill, len(group.related)) == ("sales-report-0", 8)
    assert "and 0 more" not in group.message
    assert "one edit away" in report.findings[0].message


def test_short_or_distinct_names_are_not_look_alikes() -> None:
    names = ["pdf", "pptx", "docx", "xlsx", "writing-plans", "writing-skills"]
    report = lint_subjects([subject(n, f"{GOOD} {n}") for n in names], select=["name.similar"])
    assert codes(report) == []


# -- body size -----------------------------------------------------------------------------


def test_body_over_500_lines_reports_with_the_line_past_the_limit() -> None:
    body = "\n".join(f"step {i}" for i in range(501)) + "\n"
    [finding] = lint_subjects([subject(body=body, body_line=5)]).findings
    assert (finding.code, finding.line) == ("body.too_many_lines", 505)
    assert "501 lines" in finding.message


def test_body_over_5000_tokens_is_an_estimate() -> None:
    body = "word " * 4100  # 20,500 characters, about 5,125 tokens
    [finding] = lint_subjects([subject(body=body)]).findings
    assert finding.code == "body.too_many_tokens"
    assert "about 5,125 tokens" in finding.message
    assert codes(lint_subjects([subject(body="word " * 3900)])) == []


# -- links, references and mentioned files (on disk) -----------------------------------------


def test_links_to_missing_files_and_outside_the_skill(tmp_path: Path) -> None:
    body = (
        "# Steps\n"
        "See [the guide](references/guide.md#setup) and ![logo](assets/logo.png).\n"
        "Also [gone](references/missing.md), [up](../other/SKILL.md), [abs](/etc/passwd).\n"
        "Ignore [web](https://example.com/x.md), [anchor](#steps), [mail](mailto:a@b.c).\n"
        "`[in code](nowhere.md)`\n"
        "```markdown\n[in a fence](nowhere.md)\n```\n"
    )
    make_skill(
        tmp_path,
        "linking-docs",
        GOOD,
        body=body,
        files={"references/guide.md": "# Guide\n", "assets/logo.png": b"\x89PNG"},
    )
    report = lint_dir(tmp_path)
    found = [(f.code, f.line, f.message.split("'")[1]) for f in report.findings]
    assert found == [
        ("link.broken", 7, "references/missing.md"),
        ("link.outside", 7, "../other/SKILL.md"),
        ("link.outside", 7, "/etc/passwd"),
    ]
    assert all(f.severity == "error" for f in report.findings)
    assert report.findings[0].path == str(tmp_path / "linking-docs" / "SKILL.md")


def test_link_through_a_symlink_leading_out_is_outside(tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("secret")
    skill = make_skill(tmp_path / "root", "linking-docs", GOOD, body="[s](notes.md)\n")
    (skill / "notes.md").symlink_to(outside)
    assert codes(lint_dir(tmp_path / "root")) == ["link.outside"]


def test_a_linked_document_that_is_a_link_inside_the_skill_is_read_at_its_target(
    tmp_path: Path,
) -> None:
    skill = make_skill(
        tmp_path,
        "linking-docs",
        GOOD,
        body="Read [the guide](guide.md) and [the folder](refs).\n",
        files={"references/real.md": "# Real\n\nSee [gone](gone.md).\n"},
    )
    (skill / "guide.md").symlink_to("references/real.md")
    (skill / "refs").symlink_to("references")  # a folder: linked, never read as a document
    found = [(f.code, f.path, f.message.split("'")[1]) for f in lint_dir(tmp_path).findings]
    assert found == [("link.broken", str(skill / "guide.md"), "gone.md")]


def test_a_linked_fifo_is_listed_but_never_opened(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, "linking-docs", GOOD, body="Read [the notes](notes.md).\n")
    os.mkfifo(skill / "notes.md")  # opening it to read would wait for a writer forever
    assert codes(lint_dir(tmp_path)) == []


def test_links_in_a_reference_resolve_from_its_folder_and_nesting_is_reported(
    tmp_path: Path,
) -> None:
    make_skill(
        tmp_path,
        "nested-docs",
        GOOD,
        body="Read [a](references/a.md) and [c](references/c.md).\n",
        files={
            "references/a.md": "# A\n\nSee [b](b.md), [c](c.md) and [gone](gone.md).\n",
            "references/b.md": "# B\n",
            "references/c.md": "# C\n",
        },
    )
    report = lint_dir(tmp_path)
    found = [(f.code, f.path, f.line) for f in report.findings]
    a_md = str(tmp_path / "nested-docs" / "references" / "a.md")
    assert found == [("link.broken", a_md, 3), ("references.too_deep", a_md, 3)]
    assert "references/b.md" in report.findings[1].message


def test_mentioned_scripts_and_files_must_exist(tmp_path: Path) -> None:
    body = (
        "Run `python scripts/convert.py in.pdf` then `./bin/run.sh`.\n"
        "```bash\npython3 tools/extract.py --all\nbash scripts/present.sh\n```\n"
        "Checklist in `references/checklist.md`, layout in references/layout.md.\n"
        "For example `scripts/hypothetical.py` would help; write path/to/your_script.py.\n"
        "Run `python <skill-dir>/scripts/present.sh`.\n"
    )
    make_skill(tmp_path, "running-scripts", GOOD, body=body, files={"scripts/present.sh": "x"})
    report = lint_dir(tmp_path)
    found = [(f.code, f.line, f.message.split("'")[1]) for f in report.findings]
    assert found == [
        ("script.missing", 5, "scripts/convert.py"),
        ("script.unverified", 5, "bin/run.sh"),
        ("script.unverified", 7, "tools/extract.py"),
        ("file.missing", 10, "references/checklist.md"),
        ("file.missing", 10, "references/layout.md"),
    ]


def _script_codes(body: str, files: dict[str, str] | None = None) -> list[tuple[str, str]]:
    report = lint_subjects(
        [subject(body=body, files=frozenset(files or {}))],
        select=["script", "file.missing"],
    )
    return [(f.code, f.message.split("'")[1]) for f in report.findings]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # run from the working folder: the user's tool or project, not the skill's file
        ("```bash\nchmod +x LinEnum.sh\n./LinEnum.sh -t\n```\n", "script.unverified"),
        ("```bash\n./scripts/deploy.sh prod\n```\n", "script.unverified"),
        ("```bash\nnpx tsx src/index.ts\n```\n", "script.unverified"),
        ("```bash\nuv run python src/app/main.py\n```\n", "script.unverified"),
        # under another tree's root variable, not the skill's
        ('Run `uv run "${PLUGIN_ROOT}/scripts/check.py"`.\n', "script.unverified"),
        ("Run `python <project>/scripts/build.py`.\n", "script.unverified"),
        # in a repository the body clones, or after a cd
        (
            "```bash\ngit clone https://github.com/x/fw.git\n```\n"
            "Then:\n```bash\n./scripts/getArch.sh img.tar.gz\n```\n",
            "script.unverified",
        ),
        ("```bash\ncd firmadyne && python scripts/run.py\n```\n", "script.unverified"),
        # written from a collection's top
        ("Run `python skills/other/scripts/go.py` or `python scripts/go.py`.\n", "unverified*2"),
        # made by the body before it runs
        ("```bash\ncat > scripts/run.sh << 'EOF'\necho hi\nEOF\nbash scripts/run.sh\n```\n", None),
        (
            "Create `scripts/check.py` with the code above, then run `python scripts/check.py`.\n",
            None,
        ),
        # cut short: globs, templates, placeholders
        ("Every phase runs `scripts/*.py`.\n", None),
        ("Run `python scripts/gen_{name}.py`.\n", None),
        ("All scripts: `python scripts/script_name.py --help`.\n", None),
    ],
)
def test_uncertain_script_mentions_are_never_errors(body: str, expected: str | None) -> None:
    codes_found = {code for code, _ in _script_codes(body)}
    assert "script.missing" not in codes_found
    if expected is None:
        assert codes_found == set()
    elif expected == "unverified*2":
        assert [c for c, _ in _script_codes(body)] == ["script.unverified"] * 2
    else:
        assert codes_found == {expected}


@pytest.mark.parametrize(
    "body",
    [
        'Run `python scripts/generate_schematic.py "diagram" -o out.png`.\n',
        "```bash\npython scripts/generate_schematic.py -o out.png\n```\n",
        "- **scripts/audit.sh**: Dependency audit script\n",
        "Run `uv run {baseDir}/scripts/analyzer.py --warnings`.\n",
        "```bash\npython3 ${CLAUDE_SKILL_DIR}/scripts/analyzer.py\n```\n",
    ],
)
def test_a_missing_script_written_as_a_skill_file_is_an_error(body: str) -> None:
    assert [code for code, _ in _script_codes(body)] == ["script.missing"]


def test_unloadable_skill_is_one_invalid_finding(tmp_path: Path) -> None:
    make_skill(tmp_path, "broken-skill", raw="no frontmatter here\n")
    make_skill(tmp_path, "extracting-pdfs", GOOD)
    report = lint_dir(tmp_path)
    [finding] = report.findings
    assert (finding.code, finding.severity, finding.skill) == (
        "skill.invalid",
        "error",
        "broken-skill",
    )
    assert "skillshelf validate" in finding.hint
    assert report.failed()


# -- allowed-tools -------------------------------------------------------------------------


def tools_subject(allowed: tuple[str, ...] | None, body: str) -> LintSubject:
    return subject(allowed_tools=allowed, body=body)


SHELL_BODY = (
    "# Steps\n"
    "```bash\n"
    "# inspect first\n"
    "cd repo && git diff --cached \\\n"
    "  --stat\n"
    "git log --oneline | head -5\n"
    "npm install\n"
    "cat <<EOF > notes.txt\nrm -rf /\nEOF\n"
    "```\n"
    "Do not run `git push` yourself. Run `git push --dry-run` to check.\n"
)


def test_commands_outside_the_granted_bash_rules_are_reported() -> None:
    allowed = ("Bash(git diff:*)", "Bash(git log:*)", "Read")
    report = lint_subjects([tools_subject(allowed, SHELL_BODY)])
    found = [(f.code, f.line, f.message) for f in report.findings]
    assert [(c, line) for c, line, _ in found] == [
        ("tools.not_granted", 6),
        ("tools.not_granted", 7),
        ("tools.not_granted", 8),
        ("tools.not_granted", 12),
    ]
    messages = " ".join(m for _, _, m in found)
    for command in ("`head -5`", "`npm install`", "`cat", "`git push --dry-run`"):
        assert command in messages
    assert "rm -rf" not in messages  # a heredoc body is data, not a command
    assert "Bash(git diff:*)" in found[0][2]
    assert report.findings[1].hint.startswith("add Bash(npm:*)")


def test_bash_granted_whole_or_undeclared_tools_give_no_finding() -> None:
    assert codes(lint_subjects([tools_subject(("Bash", "Read"), SHELL_BODY)])) == []
    assert codes(lint_subjects([tools_subject(None, SHELL_BODY)])) == []


def test_declared_tools_without_bash_report_shell_fences() -> None:
    [finding] = lint_subjects([tools_subject(("Read",), "```sh\nmake test\n```\n")]).findings
    assert "does not grant Bash" in finding.message


def test_writing_files_needs_write_or_edit() -> None:
    body = "1. **Save** the summary to `out/report.md`.\n| `--out` | write the report to a file |\n"
    [finding] = lint_subjects([tools_subject(("Read",), body)]).findings
    assert "Write or Edit" in finding.message
    assert codes(lint_subjects([tools_subject(("Read", "Edit"), body)])) == []


def test_fetching_urls_needs_webfetch() -> None:
    body = "Fetch https://example.com/spec.json and compare.\n"
    [finding] = lint_subjects([tools_subject(("Read",), body)]).findings
    assert "WebFetch" in finding.message
    assert codes(lint_subjects([tools_subject(("Read", "WebFetch"), body)])) == []


def test_console_fences_count_only_prompted_lines() -> None:
    body = "```console\n$ git status\nOn branch main\nnothing to commit\n```\n"
    report = lint_subjects([tools_subject(("Bash(git status:*)",), body)])
    assert codes(report) == []


# -- selection -----------------------------------------------------------------------------


def test_select_and_ignore_take_codes_and_groups() -> None:
    bad = subject(name="helper", description="PDF stuff.")
    assert codes(lint_subjects([bad])) == [
        "description.no_trigger",
        "description.too_short",
        "name.abstract",
    ]
    assert codes(lint_subjects([bad], select=["name"])) == ["name.abstract"]
    assert codes(lint_subjects([bad], ignore=["description"])) == ["name.abstract"]
    narrowed = lint_subjects([bad], select=["description"], ignore=["description.too_short"])
    assert codes(narrowed) == ["description.no_trigger"]


def test_unknown_rule_is_a_usage_error_listing_the_rules() -> None:
    with pytest.raises(UsageError, match=r"Unknown lint rule 'link\.brokn'.*link\.broken"):
        rule_filter(["link.brokn"])


def test_every_rule_has_a_known_severity_and_a_dotted_code() -> None:
    assert all(r.severity in ("error", "warning", "info") and "." in r.code for r in RULES.values())


def test_named_skills_are_compared_with_the_whole_catalog(tmp_path: Path) -> None:
    make_skill(tmp_path, "pdf-tables", GOOD)
    make_skill(tmp_path, "pdf-extracting", TWIN)
    make_skill(tmp_path, "helper", OTHER)
    report = lint_dir(tmp_path, names=["pdf-tables"])
    assert [(f.skill, f.code, f.related) for f in report.findings] == [
        ("pdf-tables", "description.duplicate", ("pdf-extracting",))
    ]
    assert report.skills_checked == 1


def test_unknown_named_skill_raises(tmp_path: Path) -> None:
    make_skill(tmp_path, "pdf-tables", GOOD)
    with pytest.raises(SkillNotFoundError):
        lint_dir(tmp_path, names=["pdf-tabels"])


# -- the similarity joins find exactly what comparing every pair finds ------------------------


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.6, 0.8])
def test_description_join_equals_all_pairs(threshold: float) -> None:
    rng = random.Random(threshold)
    words = [f"word{i}" for i in range(40)]
    texts = [" ".join(rng.choices(words, k=rng.randint(3, 15))) for _ in range(300)]
    sets = [description_tokens(t) for t in texts]
    expected = {
        (i, j)
        for i, j in itertools.combinations(range(len(sets)), 2)
        if len(sets[i] & sets[j]) / len(sets[i] | sets[j]) >= threshold - 1e-9
    }
    pairs, exhausted = similar_descriptions(texts, threshold=threshold, budget=10**9)
    assert not exhausted
    assert {(p.first, p.second) for p in pairs} == expected


def _groups_of_all_pairs(names: list[str]) -> set[frozenset[int]]:
    parent = list(range(len(names)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    linked: set[int] = set()
    for i, j in itertools.combinations(range(len(names)), 2):
        if min(len(names[i]), len(names[j])) >= MIN_SIMILAR_NAME_LENGTH and one_edit_apart(
            names[i], names[j]
        ):
            linked.update((i, j))
            parent[root(i)] = root(j)
    groups: dict[int, set[int]] = {}
    for i in linked:
        groups.setdefault(root(i), set()).add(i)
    return {frozenset(g) for g in groups.values()}


@pytest.mark.parametrize("seed", [7, 8, 9])
def test_name_groups_equal_the_groups_of_every_pair_one_edit_apart(seed: int) -> None:
    rng = random.Random(seed)
    names = ["".join(rng.choices("ab-", k=rng.randint(3, 12))) for _ in range(500)]
    names += rng.sample(names, 20)  # repeated names: never linked to themselves
    expected = _groups_of_all_pairs(names)
    groups = similar_name_groups(names)
    assert expected and {frozenset(g) for g in groups} == expected
    assert groups == sorted(groups) and all(g == sorted(g) for g in groups)


@pytest.mark.parametrize(
    ("names", "groups"),
    [
        (["pdf-tool", "pdf-otol"], []),  # a swap of two letters is two edits
        (["csv-report", "csv-report"], []),  # the same name twice is no look-alike
        (["csv-report", "csv-reports", "csv-report"], [[0, 1, 2]]),
        (["abcde", "abcdef", "abcdefg"], [[0, 1, 2]]),  # a chain of insertions
        (["abcd", "abcde"], []),  # too short to compare
        (["gmail-automation", "slack-automation"], []),
    ],
)
def test_name_groups_link_only_single_edits(names: list[str], groups: list[list[int]]) -> None:
    assert similar_name_groups(names) == groups


def test_ten_thousand_numbered_names_are_one_group() -> None:
    names = [f"skill-{i:05d}" for i in range(10_000)]
    [group] = similar_name_groups(names)
    assert group == list(range(10_000))


@pytest.mark.parametrize(
    ("a", "b", "apart"),
    [
        ("csv-report", "csv-reports", True),
        ("pdf-tool", "pdf-tpol", True),
        ("pdf-tool", "pdf-tool", False),
        ("pdf-tool", "pdf-otol", False),
        ("abc", "abcde", False),
    ],
)
def test_one_edit_apart(a: str, b: str, apart: bool) -> None:
    assert one_edit_apart(a, b) is apart
    assert one_edit_apart(b, a) is apart


# -- near-duplicate groups are those of comparing each record with every earlier leader -------


def _leader_groups(texts: list[str], threshold: float) -> list[tuple[tuple[int, ...], float]]:
    """Leader clustering by brute force: each record against every leader before it."""
    sets = [description_tokens(t) for t in texts]
    floor = threshold - 1e-9
    groups: dict[int, list[tuple[int, float]]] = {}
    for i in sorted(range(len(sets)), key=lambda r: (len(sets[r]), r)):
        best, best_score = -1, 0.0
        for j in groups:
            if not sets[i] or len(sets[j]) < floor * len(sets[i]):
                continue
            common = len(sets[j] & sets[i])
            score = common / (len(sets[j]) + len(sets[i]) - common)
            if score >= floor and (score, -j) > (best_score, -best):
                best, best_score = j, score
        if best >= 0:
            groups[best].append((i, best_score))
        else:
            groups[i] = [(i, 1.0)]
    found = [
        (tuple(sorted(i for i, _ in g)), min(score for _, score in g))
        for g in groups.values()
        if len(g) > 1
    ]
    return sorted(found)


def _families(rng: random.Random, vocabulary: int, count: int) -> list[str]:
    """Short and long texts over a small vocabulary, with edited copies of some of them."""
    words = [f"word{i}" for i in range(vocabulary)]
    texts = [" ".join(rng.choices(words, k=rng.randint(0, 40))) for _ in range(count)]
    for _ in range(count // 3):
        copy = rng.choice(texts).split()
        for _ in range(rng.randint(0, 4)):
            if copy:
                copy[rng.randrange(len(copy))] = rng.choice(words)
        texts.append(" ".join(copy))
    return texts


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.6, 0.8, 1.0])
@pytest.mark.parametrize("vocabulary", [12, 60, 400])
def test_description_groups_equal_comparing_every_leader(threshold: float, vocabulary: int) -> None:
    texts = _families(random.Random(vocabulary * threshold), vocabulary, 300)
    clusters, exhausted = description_clusters(texts, threshold=threshold, budget=10**9)
    assert not exhausted
    assert [(c.members, c.score) for c in clusters] == _leader_groups(texts, threshold)


def test_a_small_vocabulary_catalog_is_grouped_within_the_default_budget() -> None:
    # 3,000 descriptions of ~28 content words from 234: every pair shares a few words, so a
    # filter needing 3 shared rare words leaves millions of candidates (the budget ran out).
    rng = random.Random(1)
    words = [f"word{i}" for i in range(234)]
    texts = [" ".join(rng.sample(words, 28)) for _ in range(3000)]
    texts.append(texts[5].replace(texts[5].split()[0], "word999"))
    clusters, exhausted = description_clusters(texts, threshold=0.6)
    assert not exhausted
    assert [c.members for c in clusters] == [(5, 3000)]

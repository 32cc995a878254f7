"""Questions about what a git history does not hold: CI outcomes, review discussions, download counts, the
issue tracker's state.  The right answer to them is "git does not record that", not a list of commits.

Why a check before every shape: these questions are full of words the shapes do read ("the CI jobs on the
most recent kernel sync", "open bugs", "PRs merged in August"), so without it they were answered with the
commits those words matched — confidently wrong.  Each kind is one rule on what is asked (an outcome, a
comment, a count of downloads, a tracker's state), not on a project's wording; what git does record stays
answerable: commits *about* CI ("which commit fixed the CI build?"), ``Reviewed-by`` / ``Acked-by`` trailers
("who acked X?").  The tracker and the reviews are answered from the store when a GitHub export put them
there (issue and PR nodes with their state); CI runs and downloads never are.
"""

from __future__ import annotations

import re

from .code_questions import CodeAnswer

__all__ = ["not_recorded"]

_CI = r"(?:ci|builds?|jobs?|pipelines?|workflows?|actions|test\s+(?:matrix|suite|runs?)|checks?|vmtest\w*)"
_OUTCOME = r"(?:pass(?:ed|es)?|fail(?:ed|s|ing|ures?)?|go(?:ne)?\s+green|green|red|succeed\w*|broke(?:n)?|flak\w*)"
_KINDS: list[tuple[str, re.Pattern, bool]] = [
    (
        "CI results (builds, jobs, test runs) are kept by the CI service, not in the repository's history",
        re.compile(
            rf"\b(?:did|does|do|were|was|has|have|is|are)\b[^?]*\b{_CI}\b[^?]*\b{_OUTCOME}\b"
            rf"|\bpass(?:ing)?\s+rate\b|\b{_CI}\s+(?:results?|status|runs?|history)\b"
            # what the CI used: "how many github actions minutes did the CI burn", "CI hours per month"
            rf"|\b(?:how\s+many|number\s+of)\s+(?:[\w-]+\s+){{0,3}}?(?:minutes|hours|credits|runner\s+hours)\b[^?]*"
            rf"\b(?:{_CI}|runners?)\b|\b{_CI}\s+(?:minutes|hours|credits|usage|costs?|bill\w*)\b",
            re.I,
        ),
        False,
    ),
    (
        "download, install, star, reaction and subscriber counts are kept by the package index, the forge, the "
        "mirrors or the list server, not in git",
        re.compile(
            r"\b(?:how\s+(?:many|often|popular)|number\s+of|count\s+of)\b[^?]*"
            r"\b(?:download\w*|installs?|installed|stars|stargazers|page\s*views|clones|subscrib\w*|followers|"
            r"watchers|reactions?|thumbs[- ]?ups?|upvotes?|likes|emojis?)\b(?![\w./-])"
            r"|\b(?:download|install)\s+(?:counts?|numbers?|stats|statistics)\b",
            re.I,
        ),
        False,
    ),
    (
        "review discussions (comments, change requests, mailing-list feedback) are not in git; it keeps only the "
        "trailers a commit carries (Reviewed-by, Acked-by, Tested-by)",
        re.compile(
            r"\breview\s+comments?\b|\breviewers?\b[^?]*\b(?:say|said|comment\w*|request\w*|think|thought|ask\w*)\b"
            r"|\brequested\s+changes\b|\b(?:mailing[- ]list|list)\s+(?:discussion|thread|replies)\b"
            # what people said on a list: "what did ppl say on the netdev mailing list when X was posted"
            r"|\b(?:say|said|says|think|thought|discuss\w*|comment\w*|react\w*|respond\w*|repl(?:y|ied|ies)|"
            r"object\w*|complain\w*|argu\w*|disagree\w*|push(?:ed)?\s+back|nak(?:ed)?|nack(?:ed)?)\b[^?]*"
            r"\b(?:on|in|to)\s+(?:the\s+)?(?:[\w-]+\s+)?mailing[- ]?lists?\b"
            r"|\b(?:on|in)\s+(?:the\s+)?(?:[\w-]+\s+)?mailing[- ]?lists?\b[^?]*\b(?:object\w*|complain\w*|argu\w*|"
            r"disagree\w*|push(?:ed)?\s+back|nak(?:ed)?|nack(?:ed)?|said|say|comment\w*)\b"
            r"|\bfeedback\s+(?:did|was|were|from|on|in|about|to)\b|\b(?:get|got|receive[sd]?|left|gave)\b[^?]*\bfeedback\b"
            # approvals in a forge's review UI, a patch tracker's review state
            r"|\bhow\s+many\s+(?:people\s+|reviewers\s+|maintainers\s+)?approv\w*"
            r"|\bapprov\w*\b[^?]*\b(?:review\s+ui|in\s+the\s+ui|on\s+github|on\s+gitlab|on\s+gerrit)\b"
            r"|\bpatchwork\b|\breview\s+(?:state|status)\b"
            # what was submitted and not taken: git holds only what was applied
            r"|\b(?:patch(?:es|sets?)?|prs?|pull\s+requests?|submissions?)\b[^?]*\b(?:were|was|got|been|are|is|get)\s+"
            r"(?:rejected|nack(?:ed)?|declined|turned\s+down|never\s+(?:merged|applied|accepted)|not\s+(?:merged|applied|accepted))\b",
            re.I,
        ),
        True,
    ),
    (
        "mailing-list traffic (posts, threads, replies) is kept by the list's archive, not in git; it holds only the "
        "patches that were applied",
        re.compile(
            r"\b(?:how\s+many|number\s+of|count\s+of)\s+(?:[\w-]+\s+){0,3}?(?:posts?|e-?mails?|messages|threads?|replies)\b"
            r"(?<!commit messages)[^?]*"
            r"\bmailing[- ]?lists?\b"
            r"|\bmailing[- ]?lists?\s+(?:traffic|activity|volume|posts|threads)\b"
            r"|\b(?:how\s+many|number\s+of|count\s+of)\s+(?:[\w-]+\s+){0,2}?(?:replies|responses)\b"
            r"|\b(?:posted|sent|mailed)\s+(?:\w+\s+){0,2}to\s+(?:the\s+)?(?:[\w-]+\s+)?mailing[- ]?lists?\b",
            re.I,
        ),
        False,
    ),
    (
        "how long reviews, merges or CI runs took is kept by the forge, the list or the CI service, not in git; it "
        "holds when each commit was written and committed",
        re.compile(
            r"\b(?:turnaround|time\s+to\s+(?:review|merge|land|apply|accept|approve)|review\s+(?:time|latency))\b"
            rf"|\b(?:average|mean|median|typical)\b[^?]*\b(?:review\w*|{_CI}|mailing[- ]?list|sat|waited|wait)\b"
            rf"|\bhow\s+(?:long|many\s+(?:hours|minutes|seconds|days))\b[^?]*\b{_CI}\b[^?]*\b(?:take|took|run|last)\b"
            # how long a PR or an issue stayed open: "how long was PR #2551 open before it got merged"
            r"|\bhow\s+(?:long|many\s+days)\b[^?]*\b(?:prs?|pull\s+requests?|merge\s+requests?|issues?|tickets?)\b"
            r"[^?]*\b(?:open|opened|pending|waiting|in\s+review|under\s+review|unmerged)\b"
            r"|\b(?:prs?|pull\s+requests?|merge\s+requests?)\b[^?]*\bhow\s+long\s+(?:was|were|did|had)\s+(?:it|they)\s+"
            r"(?:open|opened|pending|waiting|stay\w*|sit|sat|in\s+review)\b"
            r"|\bhow\s+long\s+did\s+(?:it|they|\w+)\s+take\s+(?:for\s+\S+\s+)?to\s+(?:get\s+)?(?:reviewed|review|merged|merge|"
            r"approved|approve|accepted|accept)\b",
            re.I,
        ),
        True,
    ),
    (
        "the issue tracker's state (open or closed issues, labels, bug reports) is not in git",
        re.compile(
            r"\b(?:open|closed|unresolved|unfixed)\s+(?:\w+\s+)?(?:issues?|bugs?|bug\s+reports?|tickets?|prs?|"
            r"pull\s+requests?|merge\s+requests?)\b(?!\s+#?\d)"  # "which commit closed issue #12": a commit
            r"|\b(?:waiting|pending|awaiting)\s+(?:for\s+)?(?:a\s+)?review\b"
            r"|\b(?:issues?|bugs?|bug\s+reports?|tickets?)\b[^?]*\b(?:currently|right\s+now|still)\s+open\b"
            r"|\b(?:issues?|bugs?|prs?)\s+label(?:l?ed|s)\b|\bbugzilla\b|\bissue\s+tracker\b"
            # the forge's labels on a PR or an issue: "what labels were put on PR #3505"
            r"|\blabels?\b[^?]*\b(?:on|of|for|to)\s+(?:the\s+)?(?:[\w-]+\s+){0,3}?(?:prs?|pull\s+requests?|issues?)\b"
            r"|\b(?:prs?|pull\s+requests?|issues?)\b[^?]*\b(?:labell?ed|tagged)\s+(?:as|with)\b",
            re.I,
        ),
        True,
    ),
    (
        "who uses the software, where and how much (users, companies, distributions, dependent projects) is not in "
        "git; it records who wrote and landed the changes",
        re.compile(
            r"\b(?:fraction|percentage|percent|share|proportion|majority)\s+of\s+(?:\w+\s+){0,2}?(?:users|people|"
            r"developers|companies|organi[sz]ations|projects|installations|deployments)\b"
            r"|\b(?:how\s+many|number\s+of|which|what|roughly)\s+(?:[\w-]+\s+){0,3}?(?:companies|organi[sz]ations|"
            r"enterprises|users|customers|distros|distributions|vendors|deployments|installations|projects)\s+(?:\w+\s+)?"
            r"(?:use|uses|using|used|run|runs|running|deploy\w*|depend\w*|rely|relies|ship\w*|adopt\w*|package\w*)\b"
            r"|\bin\s+production\b[^?]*\b(?:who|how\s+many|which|companies|users)\b"
            r"|\b(?:how\s+many|which|who)\b[^?]*\b(?:companies|users|people|distros)\b[^?]*\bin\s+production\b"
            r"|\bmarket\s+share\b|\b(?:user|install)\s+base\b",
            re.I,
        ),
        False,
    ),
    (
        "who employs the developers, their teams and managers are not in git; it records names and e-mail addresses",
        re.compile(
            r"\bwho\s+(?:is|was|are|were)\s+(?:their|his|her|the\s+[\w-]+)\s+(?:manager|boss)\b"
            r"|\b(?:teams?|org(?:anization)?s?|groups?)\b[^?]*\breport\s+to\b|\borg(?:anization(?:al)?)?\s*chart\b",
            re.I,
        ),
        False,
    ),
    (
        "security scores and advisories (CVSS ratings, severities) are kept by the advisory databases, not in git; a "
        "commit message may name a CVE, not its score",
        re.compile(r"\bcvss\b|\b(?:cve|severity|security)\s+(?:score|rating)s?\b", re.I),
        False,
    ),
    (
        "how long a build, an install or a test run takes on some machine is not in git; it records the changes, not "
        "how long their code takes to build or run",
        re.compile(
            r"\bhow\s+long\s+(?:does|do|did|would|will|should)\s+(?:it\s+take\s+(?:to\s+)?)?(?:a\s+|the\s+)?"
            r"(?:full\s+|clean\s+|fresh\s+)?(?:make|build|compile|compilation|install(?:ation)?|test\s+suite|tests?)\b"
            r"|\b(?:build|compile|compilation)\s+times?\b",
            re.I,
        ),
        False,
    ),
    (
        "votes and decisions taken outside the repository (meetings, polls, the list) are not in git; a commit may "
        "say what was decided, not how anyone voted",
        re.compile(
            r"\bvotes?\s+(?:count|tally|results?|split)\b|\bhow\s+many\s+(?:\w+\s+)?votes\b|\bwho\s+voted\b"
            r"|\b(?:ballot|poll)\s+results?\b",
            re.I,
        ),
        False,
    ),
]


def not_recorded(engine, question: str) -> CodeAnswer | None:
    """An answer that says what git does not record, when the question asks for that; else None.  A kind an
    export can hold (reviews, the tracker) is left to the other shapes when the store has a GitHub export."""
    for why, pattern, export_holds in _KINDS:
        if pattern.search(question) and not (export_holds and _has_export(engine)):
            text = f"Not recorded in git: {why}. Nothing in this store answers it."
            result = {"kind": "not_recorded", "shape": "not_recorded", "value": None, "why": why}
            return CodeAnswer("not_recorded", why, [], result, text, [])
    return None


def _has_export(engine, sample: int = 200) -> bool:
    """Whether a GitHub export (issues and PRs with their state) was ingested into this store: some issue or
    PR node that is not a git reader's placeholder (a sample of each kind is read, not the whole store)."""
    for prefix in ("issue:", "pr:"):
        for node_id, _ in engine.store.ids_with_prefix(prefix, sample):
            row = engine.store.get_node(node_id)
            if row is not None and not (row.metadata or {}).get("placeholder"):
                return True
    return False

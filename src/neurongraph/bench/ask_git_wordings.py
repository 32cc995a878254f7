"""The question shapes of ``ngr bench ask --repo``: each shape's wordings and the kind of answer it scores.

It exists so that the list of shapes, their order (the seeded draw walks ``SHAPES`` in order, so a shape
added at the end leaves the earlier shapes' questions as they were) and their scoring kind read in one place,
apart from the code that computes each gold (``bench/ask_git_questions.py``).
"""

from __future__ import annotations

__all__ = ["KIND", "SHAPES", "WORDINGS"]

WORDINGS: dict[str, list[str]] = {
    "author_of": ["Who authored commit {sha}?", "Who wrote commit {sha}?", "Which person is the author of {sha}?"],
    "last_changed_by": [
        "Who last changed {path}?",
        "Who made the most recent change to {path}?",
        "Who touched {path} last?",
    ],
    "file_in_year": [
        "Which commits touched {path} in {year}?",
        "What changed {path} during {year}?",
        "List the commits to {path} from {year}.",
    ],
    "count_dir": [
        "How many commits touched {dir}?",
        "How many commits changed files under {dir}?",
        "Count the commits that modified {dir}.",
    ],
    "count_dir_year": ["How many commits touched {dir} in {year}?", "In {year}, how many commits changed {dir}?"],
    "latest_n": ["What are the latest {n} commits?", "Show the {n} most recent commits.", "List the last {n} commits."],
    "latest_n_file": ["What are the last {n} commits to {path}?", "Show the {n} most recent changes to {path}."],
    "between_dates": [
        "Which commits were made between {a} and {b}?",
        "List the commits from {a} to {b}.",
        "What was committed between {a} and {b}?",
    ],
    "author_in_year": [
        "Which commits did {author} make in {year}?",
        "What did {author} commit in {year}?",
        "List the commits by {author} in {year}.",
    ],
    "count_year": ["How many commits were made in {year}?", "How many commits landed in {year}?"],
    "reverted_by": ["Which commit reverted {sha}?", "What reverted commit {sha}?", "Which commit reverts {sha}?"],
    "fixed_by": ["Which commit fixes {sha}?", "Which commits fixed commit {sha}?", "What fixed {sha}?"],
    "file_created": ["When was {path} created?", "Which commit added {path}?", "Which commit first added {path}?"],
    "file_renamed": ["Which commit renamed {path}?", "When was {path} renamed?", "In which commit was {path} moved?"],
    "pr_files": [
        "Which files did PR #{pr} change?",
        "What files were touched by pull request #{pr}?",
        "List the files of PR #{pr}.",
    ],
    "pr_commits": [
        "Which commits are in PR #{pr}?",
        "What commits did pull request #{pr} bring?",
        "List the commits of PR #{pr}.",
    ],
    "pr_of_commit": [
        "Which PR merged commit {sha}?",
        "Which pull request brought in {sha}?",
        "In which PR did commit {sha} land?",
    ],
    "prs_by_author": [
        "Which PRs did {author} merge?",
        "What pull requests by {author} were merged?",
        "List the PRs {author} landed.",
    ],
    # tags (after every other shape, so adding them left the other shapes' seeded questions as they were)
    "since_tag": ["Which commits were made since {tag}?", "What changed since {tag}?", "List the commits after {tag}."],
    "before_tag": ["Which commits came before {tag}?", "List the commits before {tag}."],
    "between_tags": [
        "What changed between {a} and {b}?",
        "Which commits were made between {a} and {b}?",
        "List the commits from {a} to {b}.",
    ],
    "in_tag": ["What changed in {tag}?", "Which commits are in release {tag}?", "List the commits of {tag}."],
    "first_tag": [
        "Which release first contained {sha}?",
        "What is the first tag that includes {sha}?",
        "Which version first shipped commit {sha}?",
    ],
    # people and several paths (after the tags, so the earlier shapes' seeded questions stay as they were)
    "authors_dir": ["How many people changed {dir}?", "How many authors touched {dir}?"],
    "both_files": ["Which commits touched both {a} and {b}?", "Which commits changed both {a} and {b}?"],
    "either_files": ["How many commits changed {a} or {b}?", "How many commits touched {a} or {b}?"],
    "file_deleted": ["When was {path} removed?", "Which commit deleted {path}?", "In which commit was {path} deleted?"],
    "who_created": ["Who created {path}?", "Who added {path}?"],
    "who_deleted": ["Who deleted {path}?", "Who removed {path}?"],
    "count_files": ["How many files are there?", "How many files does the history have?"],
    "files_by_author": ["How many files did {author} change?", "How many files has {author} touched?"],
    "latest_file": ["Which file changed most recently?", "What is the most recently changed file?"],
    "latest_n_files": ["What are the {n} most recently changed files?", "List the {n} most recently changed files."],
    "top_dir": ["Which directories change most often?", "Which directories have the most commits?"],
    "author_last": ["When did {author} last commit?", "When did {author} first commit?"],
    "file_exists": ["Is {path} still in the repository?", "Does {path} still exist?"],
    "files_deleted": ["Which files were deleted?", "Which files were removed?"],
    "files_added_year": ["Which files were added in {year}?", "Which files were created in {year}?"],
    "lines_added": ["How many lines were added to {path}?", "How many lines were removed from {path}?"],
    "count_merges": ["How many merge commits are there?"],
    "prs_dir": ["Which pull requests touched {dir}?", "Which PRs changed files under {dir}?"],
    # the tags themselves (a history without tags has 0 of them, and says so)
    "count_tags": ["How many tags are there?", "How many releases are there?"],
    "latest_tag": ["What is the latest release?", "Which is the newest tag?"],
    "since_latest_tag": ["What changed since the last release?", "Which commits were made since the latest tag?"],
    # the number of files added or removed (once answered with the number of files the commits touched)
    "count_files_added_year": ["How many files were added in {year}?", "How many new files were created in {year}?"],
    "count_files_deleted": ["How many files were deleted?", "How many files were removed?"],
    # the reverts as such (no commit named)
    "count_reverts": ["How many reverts are there?", "How many revert commits are there?"],
    "reverted": ["Which commits were reverted?", "Which changes have been reverted?"],
    "count_renamed": ["How many files were renamed?", "How many renames are there?"],
    "renamed_files": ["Which files were renamed?", "Which files have been renamed?"],
    # the length of a file, not the lines its commits changed; commits by the words of their subject
    "file_lines": ["How many lines does {path} have?", "How long is {path}?", "How many lines are in {path}?"],
    "count_mentions": ["How many commits mention {word}?", "How many commits mention {word} in their message?"],
    "mentions": ["Which commits mention {word}?", "List the commits that mention {word}."],
    "busiest_month": ["What was the most active month?", "Which months were the busiest?"],
    "newest_file": ["What is the newest file?", "Which file was created last?"],
    "count_fixes": ["How many bug fixes are there?", "How many commits fix bugs?"],
    "top_lines_author": ["Who wrote the most lines?", "Which author added the most lines?"],
    "count_about": ["How many commits are about {word}?", "How many commits are about the {word}?"],
}
SHAPES = list(WORDINGS)
KIND = {
    "author_of": "author",
    "last_changed_by": "author",
    "count_dir": "count",
    "count_dir_year": "count",
    "count_year": "count",
    "pr_files": "files",
    "prs_by_author": "prs",
    "first_tag": "tags",
    "authors_dir": "count",
    "either_files": "count",
    "who_created": "author",
    "who_deleted": "author",
    "count_files": "count",
    "files_by_author": "count",
    "latest_file": "files",
    "latest_n_files": "files",
    "top_dir": "dirs",
    "files_deleted": "files",
    "files_added_year": "files",
    "lines_added": "count",
    "count_merges": "count",
    "prs_dir": "prs",
    "count_tags": "count",
    "latest_tag": "tags",
    "count_files_added_year": "count",
    "count_files_deleted": "count",
    "count_reverts": "count",
    "count_renamed": "count",
    "renamed_files": "files",
    "file_lines": "count",
    "count_mentions": "count",
    "busiest_month": "dirs",  # the first of a ranking
    "newest_file": "files",
    "count_fixes": "count",
    "top_lines_author": "dirs",
    "count_about": "count",
}  # every other shape: a set of commits

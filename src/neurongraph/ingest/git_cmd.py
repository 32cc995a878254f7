"""Every ``git`` process the project starts, with the repository's own configuration disarmed.

Why: a repository is data someone else wrote, and its ``.git/config`` and ``.gitattributes`` can name
programs that git runs on its own while it only *reads* history (issue 40): a ``diff.<driver>.textconv``
(or ``diff.<driver>.command``, ``diff.external``) that ``.gitattributes`` selects runs for every diff of a
matching file, ``log.showSignature`` runs ``gpg.program``, ``core.fsmonitor`` runs a hook, a promisor remote
(a partial clone) fetches a missing object by running ``remote.<name>.uploadpack`` or ``core.sshCommand``
(git before 2.44 ignores ``GIT_NO_LAZY_FETCH``), a pager, ``core.alternateRefsCommand``, ``core.gitProxy``.
Other keys change what git prints, so that the parse would be wrong: colour codes (``color.diff=always``),
no ``a/`` ``b/`` prefixes (``diff.noprefix``), merged hunks (``diff.interHunkContext``), messages re-encoded
to UTF-16 (``i18n.logOutputEncoding``), no diff of a root commit (``log.showRoot=false``).

So every invocation is built here: ``git --no-pager -C REPO -c KEY=VALUE ... SUBCOMMAND [safety flags]``
(the ``-c`` overrides beat the repository's file), ``--no-textconv --no-ext-diff`` on the commands that
diff, ``--no-textconv`` on ``blame``, and an environment with no inherited ``GIT_*`` variable (``GIT_DIR``,
``GIT_CONFIG_PARAMETERS``, ``GIT_EXTERNAL_DIFF``, ``GIT_SSH_COMMAND`` ...), no system or global config,
no prompt, no lazy fetch, the C locale.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

__all__ = ["git_argv", "git_env", "trusted_dirs", "OVERRIDES", "BIG_FILE_THRESHOLD"]

# files larger than this are not diffed: git prints "Binary files ... differ" for them (their commit keeps
# them, with unknown line counts, named in metadata["too_large"]); a 50 MB text file cost 1 GB before
BIG_FILE_THRESHOLD = int(os.environ.get("NGR_GIT_BIG_FILE_BYTES", "") or 8 << 20)

_HARMLESS = "false"  # a program that does nothing, for keys whose value git would run

OVERRIDES: tuple[tuple[str, str], ...] = (
    # programs the repository's config could make a reading command run
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("core.sshCommand", _HARMLESS),
    ("core.gitProxy", "none"),
    ("core.alternateRefsCommand", _HARMLESS),
    ("core.askPass", _HARMLESS),
    ("diff.external", ""),
    ("log.showSignature", "false"),
    ("gpg.program", _HARMLESS),
    ("gpg.openpgp.program", _HARMLESS),
    ("gpg.x509.program", _HARMLESS),
    ("gpg.ssh.program", _HARMLESS),
    ("gpg.ssh.defaultKeyCommand", _HARMLESS),
    ("credential.helper", ""),
    ("diff.submodule", "short"),  # "log" would run git in a submodule's repository
    # no transport at all: a promisor remote's lazy fetch would run remote.<name>.uploadpack
    ("protocol.allow", "never"),
    *((f"protocol.{p}.allow", "never") for p in ("file", "git", "ssh", "http", "https", "ext", "fd")),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    # what git prints, as the parsers read it
    ("core.quotepath", "off"),
    ("color.ui", "never"),
    ("color.diff", "never"),
    ("diff.noprefix", "false"),
    ("diff.mnemonicPrefix", "false"),
    ("diff.srcPrefix", "a/"),
    ("diff.dstPrefix", "b/"),
    ("diff.relative", "false"),
    ("diff.interHunkContext", "0"),
    ("diff.suppressBlankEmpty", "false"),
    ("log.showRoot", "true"),
    ("log.mailmap", "false"),
    ("i18n.logOutputEncoding", "UTF-8"),
    ("blame.ignoreRevsFile", ""),
)

_DIFFING = {"log", "show", "diff", "diff-tree", "whatchanged"}  # accept --no-textconv --no-ext-diff


def git_argv(repo: str | os.PathLike | None, *args: str, big_files: bool = True) -> list[str]:
    """``git`` with the overrides, in ``repo`` (None: the current folder), running ``args``; the
    subcommand (``args[0]``) gets its safety flags right after its name.  ``big_files=False``: files over
    :data:`BIG_FILE_THRESHOLD` are not diffed (the ingest's reads; a benchmark's ground truth diffs them)."""
    argv = ["git", "--no-pager"]
    if repo is not None:
        argv += ["-C", str(Path(repo))]
    for k, v in OVERRIDES:
        argv += ["-c", f"{k}={v}"]
    for d in trusted_dirs():
        argv += ["-c", f"safe.directory={d}"]
    if not big_files:
        argv += ["-c", f"core.bigFileThreshold={BIG_FILE_THRESHOLD}"]
    if not args:
        return argv
    sub, rest = args[0], list(args[1:])
    if sub in _DIFFING:
        rest = ["--no-textconv", "--no-ext-diff", *rest]
    elif sub == "blame":
        rest = ["--no-textconv", *rest]
    return argv + [sub, *rest]


@functools.cache
def trusted_dirs() -> tuple[str, ...]:
    """The ``safe.directory`` entries of the user's own global and system config, read once per process.
    Why: :func:`git_env` reads neither file, and a user who trusted a repository owned by someone else (a CI
    checkout) would see git refuse it as "dubious ownership"; git takes the setting from ``-c`` (protected
    configuration), never from a repository's own config, so passing these on trusts nothing new."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({k: os.environ[k] for k in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM") if k in os.environ})
    scopes = ["--global"] + ([] if os.environ.get("GIT_CONFIG_NOSYSTEM") else ["--system"])
    out: list[str] = []
    for scope in scopes:
        try:
            res = subprocess.run(
                ["git", "config", scope, "--includes", "--get-all", "safe.directory"],
                capture_output=True,
                env=env,
                cwd=os.path.expanduser("~") if os.path.isdir(os.path.expanduser("~")) else "/",
            )
        except OSError:
            return ()
        out += [ln for ln in res.stdout.decode("utf-8", "replace").splitlines() if ln]
    return tuple(dict.fromkeys(out))


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process environment without any inherited ``GIT_*`` variable, with the reader's settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_NO_LAZY_FETCH="1",
        GIT_ATTR_NOSYSTEM="1",
        GIT_PAGER="cat",
        PAGER="cat",
        LC_ALL="C",
    )
    env.pop("SSH_ASKPASS", None)
    if extra:
        env.update(extra)
    return env

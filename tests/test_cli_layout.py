"""The CLI's layout rule: a command or command group lives in the module named after it (``ngr ingest`` in
cli/ingest_cmd.py, every ``ngr bench`` command in cli/bench_cmd.py), so a reader finds a command by its name.
The few commands that share a module with a sibling are listed here, with the reason."""

from __future__ import annotations

import click
import typer

from neurongraph.cli.main import app

SHARED = {
    "cypher": "ask_cmd",  # ngr cypher runs the same graph child as ngr ask
    "trace": "traces_cmd",  # one stored trace beside the list of them
    "bench ask": "ask_cmd",  # the ask benchmark beside ngr ask
}


def _commands(cmd, path: tuple[str, ...] = ()):
    if hasattr(cmd, "list_commands"):  # a group (typer may vendor its own click: no isinstance)
        ctx = click.Context(cmd)
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            assert sub is not None
            yield from _commands(sub, (*path, name))
    elif path:
        yield path, cmd


def test_every_command_lives_in_the_module_named_after_it_or_its_group():
    root = typer.main.get_command(app)
    seen = 0
    for path, cmd in _commands(root):
        assert cmd.callback is not None
        module = cmd.callback.__module__.rsplit(".", 1)[-1]
        want = SHARED.get(" ".join(path), path[0].replace("-", "_") + "_cmd")
        assert module == want, (" ".join(path), module)
        seen += 1
    assert seen >= 30

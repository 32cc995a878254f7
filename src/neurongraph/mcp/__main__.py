"""``python -m neurongraph.mcp --db PATH [--embedder hashing]``: the MCP server without the ``ngr`` entry point."""

from __future__ import annotations

import typer

from ..cli.mcp_cmd import mcp_command


def main() -> None:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command()(mcp_command)
    app(prog_name="python -m neurongraph.mcp")


if __name__ == "__main__":
    main()

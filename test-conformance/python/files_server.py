"""An MCP server written with the Python `mcp` SDK (2.3.x, from PyPI), over stdio: one tool,
`delete_files`, that asks the user to confirm before it deletes anything. Its SDK asks with an
`input_required` result on MCP 2026-07-28 and with an `elicitation/create` request on 2025-11-25.
Started by test-conformance/python-peer.test.ts through scripts/python-peer.sh's venv."""

from typing import Annotated

from pydantic import BaseModel

from mcp.server.mcpserver import Elicit, MCPServer, Resolve


class Confirm(BaseModel):
    ok: bool


def ask_confirm(folder: str) -> Elicit[Confirm]:
    return Elicit(f"Delete the 40 files in {folder}?", Confirm)


server = MCPServer("py-files")


@server.tool()
def delete_files(folder: str, confirm: Annotated[Confirm, Resolve(ask_confirm)]) -> str:
    """Deletes the files of a folder, once the user confirms."""
    return f"deleted 40 files in {folder}" if confirm.ok else f"kept the files in {folder}"


if __name__ == "__main__":
    server.run("stdio")

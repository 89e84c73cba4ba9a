"""An MCP server written with FastMCP (4.1, from PyPI) and its tasks extension (`fastmcp-tasks`,
SEP-2663 `io.modelcontextprotocol/tasks`, in-memory Docket backend), over stdio: `index_folder`
runs only as a task, tells its progress (the task's statusMessage), and asks the user half-way
whether to go on — as FastMCP tasks ask: the tool returns an InputRequiredResult, the task waits
`input_required` for `tasks/update`, and the tool runs again with the answers. Started by
test-conformance/python-peer.test.ts through scripts/python-peer.sh's venv."""

import asyncio
from datetime import timedelta

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

server = FastMCP("py-indexer")
server.add_extension(TasksExtension(url="memory://"))


@server.tool(task=TaskConfig(mode="required", poll_interval=timedelta(milliseconds=100)))
async def index_folder(folder: str, ctx: Context) -> str:
    """Indexes a folder in two halves, asking after the first whether to go on."""
    answers = ctx.input_responses
    if answers is None:
        await ctx.report_progress(1, 2, f"indexed half of {folder}")
        await asyncio.sleep(0.4)
        ask = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(
                message=f"Index the rest of {folder}?",
                requested_schema={"type": "object", "properties": {"go_on": {"type": "boolean"}}},
            )
        )
        return mcp_types.InputRequiredResult(input_requests={"go_on": ask})
    answer = answers["go_on"]
    if getattr(answer, "action", None) != "accept":
        return f"stopped half-way through {folder}"
    await ctx.report_progress(2, 2, f"indexed all of {folder}")
    await asyncio.sleep(0.4)
    return f"indexed 12 files in {folder}"


if __name__ == "__main__":
    server.run("stdio", show_banner=False)

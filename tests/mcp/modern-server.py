"""An MCP server on the official Python SDK (`mcp`, pinned in
tests/mcp/requirements.txt and installed by scripts/test-deps), which speaks
the 2026-07-28 revision (`server/discover`, questions as `input_required`
results) and the earlier ones, over stdio. Tools: `echo` answers with its text and the revision of the request;
`paint` asks which colour (a form question with one required text field)
and answers with what it was told.
"""

from typing import Annotated

from pydantic import BaseModel, Field

from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)


class Colour(BaseModel):
    colour: str = Field(description="The colour to paint with")


def ask_colour() -> Elicit[Colour]:
    return Elicit("Which colour should the wall be?", Colour)


def build() -> MCPServer:
    server = MCPServer("modern")

    @server.tool()
    def echo(text: str, ctx: Context) -> str:
        """Answers with the text and the revision of the request."""
        return f"echo: {text} (revision {ctx.protocol_version})"

    @server.tool()
    def paint(answer: Annotated[ElicitationResult[Colour], Resolve(ask_colour)], ctx: Context) -> str:
        """Asks which colour, then paints."""
        if isinstance(answer, AcceptedElicitation):
            return f"painted {answer.data.colour} (revision {ctx.protocol_version})"
        return f"not painted: {answer.action} (revision {ctx.protocol_version})"

    return server


def main() -> None:
    build().run()


if __name__ == "__main__":
    main()

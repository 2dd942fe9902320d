"""An MCP server over streamable HTTP that is its own OAuth authorization
server, on the official Python SDK's auth helpers (`mcp.server.auth`; pinned
in tests/mcp/requirements.txt): metadata discovery (RFC 9728 and RFC 8414),
dynamic client registration, the authorization endpoint with PKCE, the token
endpoint (authorization code and refresh token) and revocation. It listens
on 127.0.0.1 at a port of its own choosing and prints `port N` on stdout.

The authorization endpoint approves at once (no login page): whoever fetches
the authorization URL plays the browser and is redirected to the client's
redirect URI with a code. Each access token it issues is accepted for
$OAUTH_TOKEN_USES requests (default 1000), then rejected as expired, so a
client must refresh. What it did is appended to $OAUTH_LOG (one line each:
`registered`, `authorized`, `token code`, `token refresh`, `revoked`,
`call echo`), never a token.
"""

import os
import secrets
import socket
import time

import uvicorn
from pydantic import AnyHttpUrl

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

USES = int(os.environ.get("OAUTH_TOKEN_USES", "1000"))


def log(line: str) -> None:
    path = os.environ.get("OAUTH_LOG")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


class Provider:
    """Everything in memory, approved at once."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.access: dict[str, AccessToken] = {}
        self.uses: dict[str, int] = {}

    async def get_client(self, client_id: str):
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info
        log("registered")

    async def authorize(self, client, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        log("authorized")
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code: str):
        return self.codes.get(authorization_code)

    def issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access = "at-" + secrets.token_urlsafe(24)
        refresh = "rt-" + secrets.token_urlsafe(24)
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=int(time.time()) + 3600, resource=resource
        )
        self.uses[access] = 0
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=3600,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )

    async def exchange_authorization_code(self, client, authorization_code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        log("token code")
        return self.issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client, refresh_token: str):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token: RefreshToken, scopes: list[str]) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        log("token refresh")
        return self.issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str):
        found = self.access.get(token)
        if found is None:
            return None
        self.uses[token] += 1
        if self.uses[token] > USES:
            return None
        return found

    async def revoke_token(self, token) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)
        log("revoked")


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    server = MCPServer(
        "oauth",
        auth_server_provider=Provider(),
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(base),
            resource_server_url=AnyHttpUrl(f"{base}/mcp"),
            client_registration_options=ClientRegistrationOptions(enabled=True),
            revocation_options=RevocationOptions(enabled=True),
            validate_token_resource=False,
        ),
    )

    @server.tool()
    def echo(text: str) -> str:
        """Answers with the text."""
        log("call echo")
        return f"echo: {text}"

    app = server.streamable_http_app()
    print(f"port {port}", flush=True)
    config = uvicorn.Config(app, log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()

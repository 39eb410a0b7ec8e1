"""A spectator's WebSocket (``/ws/watch/ID``, issue 32): the front door of a table's socket
(`sockets.TableSocket.handshake`), an anonymous slot, the table's states redacted
(`spectators.redact`), and no intents: every message but ``ping`` and ``state`` is refused
(403 ``spectator``)."""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
from starlette.concurrency import run_in_threadpool
from starlette.websockets import WebSocket

from yahtzee_env.web.door.hub import CLOSE_FULL, CLOSE_UNKNOWN, Client
from yahtzee_env.web.door.sockets import TableSocket
from yahtzee_env.web.door.spectators import Spectators, clean_watch_id, redact
from yahtzee_env.web.errors import WebError


async def watch_socket(ws: WebSocket) -> None:
    """The route of ``/ws/watch/ID``."""
    return await SpectatorSocket(ws.app.state.service, ws).run()


class SpectatorSocket(TableSocket):
    """A spectator's WebSocket: the front door of a table's socket (`TableSocket.handshake`),
    an anonymous slot, the redacted states, and no intents; the table socket's loop
    (`TableSocket.serve`) with its own answers."""

    async def run(self) -> None:
        await self.ws.accept()
        if not await self.handshake():
            return
        service = self.service
        spectators: Spectators = service.spectators
        try:
            service.check_lookups(self.ws)
            watch_id = clean_watch_id(self.ws.path_params["wid"])
            code = await run_in_threadpool(spectators.code_of, watch_id)
            full = service.slots.refuse_anonymous(self.address, code)
            if full is not None:
                raise WebError(full, 429)
            state = await service.table_state(code)
        except WebError as err:
            if err.code == "unknown_watch":
                err.code = "unknown_table"  # spends the address's lookup budget
            service.refused(self.ws, "WS /ws/watch/", err)
            reply = {"type": "error", "error": str(err), "code": err.code, "status": err.status}
            await self.ws.send_json(reply)
            await self.ws.close(CLOSE_FULL if err.status == 429 else CLOSE_UNKNOWN, str(err)[:120])
            return
        service.slots.take_anonymous(self.address, code)
        self.client = Client(self.ws, code, self.address, service.limits.send_queue)
        spectators.add(self.client, watch_id)
        try:
            await self.serve(redact(service.fanout.present(state), watch_id))
        finally:
            spectators.remove(self.client)
            self.client.end()
            service.slots.release_anonymous(self.address, code)
        closing = self.client.closing
        if closing is not None and closing[0] != 1006:
            with anyio.move_on_after(1), contextlib.suppress(Exception):
                await self.ws.close(*closing)

    async def answer(self, msg: dict[str, Any], msg_id: int | str | None) -> None:
        kind = msg.get("type")
        if kind == "ping":
            self.client.push({"type": "pong", "id": msg_id})
        elif kind == "state":
            service = self.service
            state = service.fanout.present(await service.table_state(self.client.code))
            watch_id = service.spectators.ids.get(self.client.code, "")
            self.client.push({"type": "state", "state": redact(state, watch_id)})
        else:
            raise WebError("spectators can neither act nor chat", 403, "spectator")


__all__ = ["SpectatorSocket", "watch_socket"]

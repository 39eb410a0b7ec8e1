"""The WebSocket of a table (``/ws/CODE``): the handshake, the seat's ``hello``, and the
receive loop.

The handshake is refused (closed with a code and reason, `hub`) for another site or host,
an address over its rate, an unknown table or one whose lookup budget is spent. The socket
then takes a slot (`limits.SocketSlots`): an anonymous one (a watcher), or, when those are
full, a seated one if its first message, a ``hello`` with the seat's token (or the session's
cookie), proves a seat. The server pushes ``{"type": "state"}`` after every change at the
table and ``{"type": "presence"}`` when who is connected changes; the sender is the
socket's own task (`hub.Client.send_queued`, while messages wait; the answer to the socket's
own message, its receive loop: `hub.Client.reply`), so a slow reader only hurts itself.

Messages (JSON text, each with an optional ``id`` echoed in its reply): ``hello`` (-> hello),
``state`` (-> state), ``ping`` (-> pong), and the intents, each answered by the same handler
as its HTTP route (`service.Service`): ``act``, ``start``, ``leave``, ``back``, ``hand``,
``remove`` and ``client_seed`` (-> ack, with the new state; the other sockets get it as a
state), ``hint`` (-> hint). A refused message gets ``{"type": "error", "error", "code", "status"}``.
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
from starlette.websockets import WebSocket, WebSocketDisconnect

from yahtzee_env.web.door.asks import parse_json
from yahtzee_env.web.door.guard import client_address, cross_site, host_refused
from yahtzee_env.web.door.hub import CLOSE_BINARY, CLOSE_FULL, CLOSE_ORIGIN, CLOSE_UNKNOWN, Client
from yahtzee_env.web.door.service import Service
from yahtzee_env.web.errors import WebError, clean_code
from yahtzee_env.web.tables.secrecy import viewer_state


def message_id(value: Any) -> int | str | None:
    """A WebSocket message's ``id`` as echoed back: a small int or a short string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and abs(value) < 2**53:
        return value
    if isinstance(value, str) and len(value) <= 64:
        return value
    return None


def hello(seats: list[int]) -> dict[str, Any]:
    reply: dict[str, Any] = {"type": "hello", "seat": seats[0]}
    if len(seats) > 1:
        reply["seats"] = seats
    return reply


async def table_socket(ws: WebSocket) -> None:
    """The route of ``/ws/CODE``."""
    return await TableSocket(ws.app.state.service, ws).run()


class TableSocket:
    """One table's WebSocket, from its handshake to its close."""

    # the intents that change the table (`Service`'s handlers of the same names), answered
    # with an ack and the new state; one set for every socket, not a dict of bound methods each
    CHANGES = frozenset(
        ("act", "start", "leave", "back", "hand", "remove", "rename", "client_seed")
    )

    def __init__(self, service: Service, ws: WebSocket) -> None:
        self.service, self.ws = service, ws
        self.address = client_address(ws.scope)
        self.client: Client | None = None
        self.slot = "anonymous"  # or "seated": which slot the socket holds
        self.session = None
        self.who: str | None = None  # the key of the anonymous slot (None: the address)

    async def run(self) -> None:
        await self.ws.accept()
        if not await self.handshake():
            return
        state = await self.open()
        if state is None:
            return
        try:
            await self.serve(self.service.fanout.present(state))
        finally:
            self.service.hub.remove(self.client)
            self.client.end()
            if self.slot == "anonymous":
                self.service.slots.release_anonymous(self.address, self.client.code, self.who)
            else:
                self.service.slots.release_seated()
        closing = self.client.closing
        self.client = None  # nothing of the socket is kept past its close
        if closing is not None and closing[0] != 1006:  # 1006: the peer left
            with anyio.move_on_after(1), contextlib.suppress(Exception):
                await self.ws.close(*closing)
        await self.service.socket_closed()

    async def handshake(self) -> bool:
        """Refuse another site, another host or an address over its rate (closed here)."""
        service, ws = self.service, self.ws
        why = cross_site(ws.scope, service.origins)
        bad_host = host_refused(ws.scope, service.hosts)
        refusal = None
        if bad_host is not None:
            refusal = CLOSE_ORIGIN, f"socket refused: {bad_host}"
        elif why is not None:
            refusal = CLOSE_ORIGIN, f"cross-site socket refused: {why}"
        elif not service.per_address.allow(("addr", self.address)):
            refusal = CLOSE_FULL, "too many requests from your address: slow down"
        if refusal is None:
            return True
        service.refusals.refused(refusal[0], "WS /ws/", self.address, refusal[1])
        await ws.close(*refusal)
        return False

    async def open(self) -> dict[str, Any] | None:
        """Read the table's state and join the hub: the state, or None if the socket was
        refused (an error sent and the socket closed here)."""
        service = self.service
        try:
            service.check_lookups(self.ws)
            code = clean_code(self.ws.path_params["code"])
            with service.fanout.joining(code):
                state = await service.table_state(code)
                self.client = Client(self.ws, code, self.address, service.limits.send_queue)
                state = await self.join_hub(state)
        except WebError as err:
            service.refused(self.ws, "WS /ws/", err)
            reply = {"type": "error", "error": str(err), "code": err.code, "status": err.status}
            await self.ws.send_json(reply)
            await self.ws.close(CLOSE_FULL if err.status == 429 else CLOSE_UNKNOWN, str(err)[:120])
            return None
        return state

    async def join_hub(self, state: dict[str, Any]) -> dict[str, Any] | None:
        """Take the socket's slot and add it to the hub: the state to send first, or None
        when it was refused (closed here). A seated player's first message proves the seat
        when the anonymous slots are full."""
        service, ws, client = self.service, self.ws, self.client
        code, address = client.code, self.address
        self.session = await service.session_of(ws)
        if self.session is not None:  # a person, wherever they are: counted as one
            self.who = f"session:{self.session['id']}"
            client.viewer = frozenset(service.mine(code, self.session))
        full = service.slots.refuse_anonymous(address, code, self.who)
        if full is None:
            service.slots.take_anonymous(address, code, self.who)
            service.hub.add(client)
            try:
                if service.fanout.opened(code, state["rev"]):  # a change here while it opened
                    state = await service.table_state(code)
            except BaseException:  # the caller answers the error: give back what was taken
                service.hub.remove(client)
                service.slots.release_anonymous(address, code, self.who)
                raise
            return state
        seat = None
        with anyio.move_on_after(service.limits.hello_timeout):
            with contextlib.suppress(WebError, WebSocketDisconnect, KeyError):
                msg = parse_json((await ws.receive())["text"])
                if msg.get("type") == "hello":
                    seat = await service.hello(code, msg, self.session)
        if seat is None:
            service.refusals.refused(CLOSE_FULL, f"WS /ws/{code}", address, full)
            with contextlib.suppress(Exception):
                await ws.close(CLOSE_FULL, full)
            return None
        service.slots.take_seated()
        self.slot = "seated"
        client.push(hello(seat))
        service.hub.add(client)
        service.hub.seat(client, seat, service.limits.sockets_per_seat, quiet=True)
        try:
            state = await service.table_state(code)
            if service.fanout.opened(code, state["rev"]):
                state = await service.table_state(code)
        except BaseException:  # the caller answers the error: give back what was taken
            service.hub.remove(client)
            service.slots.release_seated()
            self.slot = None
            raise
        return state

    async def serve(self, state: dict[str, Any]) -> None:
        """Send the first state, then answer the socket's messages until it closes (the
        sender runs beside it, and either's end ends both); a spectator's socket too."""
        client = self.client
        with contextlib.suppress(WebSocketDisconnect), anyio.CancelScope() as scope:
            client.scope = scope
            if client.closing is not None:
                scope.cancel()
            client.push({"type": "state", "state": self.view(state)})
            await self.receive_loop()

    def view(self, state: dict[str, Any]) -> dict[str, Any]:
        """``state`` as this socket's seats see it (a duplicate game's: `secrecy`)."""
        client = self.client
        return viewer_state(state, client.seats or client.viewer)

    async def receive_loop(self) -> None:
        client, code, address = self.client, self.client.code, self.address
        while True:
            message = await self.ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                self.service.refusals.refused(
                    CLOSE_BINARY, f"WS /ws/{code}", address, "a binary frame"
                )
                client.close(CLOSE_BINARY, "binary frames are not accepted: send JSON text")
                return
            msg_id = None
            try:
                if not self.service.per_address.allow(("addr", address)):
                    raise WebError("too many messages from your address: slow down", 429)
                msg = parse_json(text)
                msg_id = message_id(msg.get("id"))
                await self.answer(msg, msg_id)
            except WebError as err:
                self.service.refused(self.ws, f"WS /ws/{code}", err)
                reply = {"error": str(err), "code": err.code, "status": err.status}
                await client.reply({"type": "error", "id": msg_id, **reply})

    async def answer(self, msg: dict[str, Any], msg_id: int | str | None) -> None:
        """One message: its intent's handler, and the reply."""
        service, client, code, session = self.service, self.client, self.client.code, self.session
        kind = msg.get("type")
        if isinstance(kind, str) and kind in self.CHANGES:
            state = await getattr(service, kind)(code, msg, session, skip=client)
            await client.reply(service.fanout.envelope("ack", state, msg_id))
        elif kind == "hint":
            reply = await service.hint(code, msg, session)
            await client.reply({"type": "hint", "id": msg_id, **reply})
        elif kind == "hello":
            seats = await service.hello(code, msg, session)
            if self.slot == "anonymous":
                service.slots.release_anonymous(self.address, code, self.who)
                service.slots.take_seated()
                self.slot = "seated"
            service.hub.seat(client, seats, service.limits.sockets_per_seat, quiet=True)
            await client.reply({**hello(seats), "id": msg_id})
        elif kind == "state":
            state = service.fanout.present(await service.table_state(code))
            await client.reply({"type": "state", "state": self.view(state)})
        elif kind == "ping":
            await client.reply({"type": "pong", "id": msg_id})
        else:
            raise WebError(f"unknown message type {str(kind)[:20]!r}")


__all__ = ["TableSocket", "message_id", "table_socket"]

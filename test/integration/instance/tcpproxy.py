#!/usr/bin/env python3
"""A TCP relay LISTEN_PORT -> HOST:PORT for test/integration/instance.sh: killing it cuts a
manager off the API server (new connections refused, open ones reset) without touching the
shared control plane."""
import asyncio
import sys


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def handle(cr, cw, host, port):
    try:
        ur, uw = await asyncio.open_connection(host, port)
    except OSError:
        cw.close()
        return
    await asyncio.gather(pipe(cr, uw), pipe(ur, cw))


async def main():
    listen, host, port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    srv = await asyncio.start_server(lambda r, w: handle(r, w, host, port), "127.0.0.1", listen)
    async with srv:
        await srv.serve_forever()


asyncio.run(main())

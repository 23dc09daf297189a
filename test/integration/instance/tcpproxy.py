#!/usr/bin/env python3
"""A TCP relay LISTEN_PORT -> HOST:PORT [DELAY_FILE] for test/integration/instance.sh:
killing it cuts a manager off the API server (new connections refused, open ones reset)
without touching the shared control plane. With DELAY_FILE, every chunk sent towards
HOST:PORT first waits the seconds that file holds (read per chunk; absent or empty: no
delay), so a test can make the API server slow from one moment on."""
import asyncio
import sys


def delay_of(path):
    try:
        with open(path) as f:
            return float(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0.0


async def pipe(reader, writer, delay_file=None):
    try:
        while data := await reader.read(65536):
            if delay_file:
                await asyncio.sleep(delay_of(delay_file))
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def handle(cr, cw, host, port, delay_file):
    try:
        ur, uw = await asyncio.open_connection(host, port)
    except OSError:
        cw.close()
        return
    await asyncio.gather(pipe(cr, uw, delay_file), pipe(ur, cw))


async def main():
    listen, host, port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    delay_file = sys.argv[4] if len(sys.argv) > 4 else None
    srv = await asyncio.start_server(lambda r, w: handle(r, w, host, port, delay_file),
                                     "127.0.0.1", listen)
    async with srv:
        await srv.serve_forever()


asyncio.run(main())

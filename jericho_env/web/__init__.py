"""A web page to play, watch and replay any game: ``python -m jericho_env.web`` (extra ``web``).

The server (Starlette + uvicorn) keeps every game in a ``Session``; the page (one static HTML/JS
file, no build step) draws the SVG the server sends and posts moves by number. What the page
receives for a human seat is built from that seat's view only (``jericho_env.web.sessions``).
"""

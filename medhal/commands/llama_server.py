"""`python -m medhal.commands.llama_server`: the embedded model's server process
(`medhal.serving.llama_server.TokenCap` around llama-cpp-python's app), started by
`medhal.serving.local_model`. Its flags are those of `python -m llama_cpp.server`."""

from __future__ import annotations

import argparse
from typing import cast

from medhal.serving.llama_server import TokenCap


def main(argv: list[str] | None = None) -> None:
    """`python -m llama_cpp.server` (its command-line flags, no config file) behind `TokenCap`."""
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    from llama_cpp.server.settings import ModelSettings, ServerSettings, Settings

    parser = argparse.ArgumentParser(description="llama-cpp-python's server with both token caps honoured")
    add_args_from_model(parser, Settings)
    args = parser.parse_args(argv)
    # parse_model_from_args returns an instance of the class it is given (annotated as the class).
    server = cast(ServerSettings, parse_model_from_args(ServerSettings, args))
    model = cast(ModelSettings, parse_model_from_args(ModelSettings, args))
    app = create_app(server_settings=server, model_settings=[model])
    uvicorn.run(
        TokenCap(app),
        host=server.host,
        port=server.port,
        ssl_keyfile=server.ssl_keyfile,
        ssl_certfile=server.ssl_certfile,
    )


if __name__ == "__main__":
    main()

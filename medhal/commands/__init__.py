"""Commands, the `medhal` command: the only place for argparse, printing and exit codes; imports any layer.

`cli` parses the command line; each other module is one command (`report`, `score`, `serve`,
`reproduce`, `demo`, `repair`) and registers its own subcommand.
"""

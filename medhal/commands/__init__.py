"""Commands: the `medhal` command, the only place for argparse, printing and exit codes. May import
every other layer; no layer imports it."""

"""Reports: saved traces in, figures and files out. Pure (no argparse, no printing, no exit codes) and
light (no verifiers, no environment's taskset); imports only `medhal.kit`."""

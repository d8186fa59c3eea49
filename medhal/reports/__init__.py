"""Reports, traces in and figures and files out: imports only the kit; no argparse, printing or exit codes.

Light too: nothing here imports verifiers or an environment's taskset. The trace reader
(`traces`), the spec, sums and figures of a report (`report`, `metrics`), its files (`markdown`,
`html`, `plots`, `report_files`), comparisons (`compare`), published figures, the registry of
installed environments, and the repair of a killed run's trace file.
"""

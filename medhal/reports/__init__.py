"""Reports, traces in and figures and files out: imports only the kit; no argparse, printing or exit codes.

Light too: nothing here imports verifiers or an environment's taskset. The engine that reads an
environment's `ReportSpec` (declared with the kit's `report_spec`): the trace reader (`traces`),
the sums and figures of a report (`report`, `metrics`), its files (`markdown`, `html`, `plots`,
`report_files`), comparisons (`compare`), published figures beside a run's (`published`), what
a report's provenance says (`provenance`), the registry of installed environments, and the
repair of a killed run's trace file.
"""

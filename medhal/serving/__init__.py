"""Serving: model servers run as child processes (the embedded CPU model, vLLM): started, waited for,
stopped; failures are one-line exceptions and nothing is printed. Imports no other layer of medhal."""

"""Serving, model servers as child processes: imports no other layer of medhal; prints nothing.

The embedded CPU model (`local_model`) and vLLM (`vllm_server`) share one lifecycle
(`server_process`): start, wait until ready, stop the whole process group. A failed start is
one exception with a one-line message.
"""

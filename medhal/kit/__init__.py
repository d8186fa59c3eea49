"""The kit, what environments import: imports no other layer of medhal.

Task data and the options every environment shares (`task`, `options`), reading replies
(`replies`; what a reply commits to, `commitment`; words in every language, `vocabulary`),
the names a task records and a report reads (`outcomes`), rows and pinned assets
(`datasets`, `assets`, `files`), shards, the in-process harness, provenance, lazy exports, the
v0 face (`v0`) and scoring replies made elsewhere (`predictions`).
"""

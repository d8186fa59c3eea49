"""The Card-Check prompt: our system prompt, and the card and statement as the user turn."""

from __future__ import annotations


def user_prompt(row: dict) -> str:
    return f"Card:\n{row['card']}\n\nStatement: {row['statement']}"

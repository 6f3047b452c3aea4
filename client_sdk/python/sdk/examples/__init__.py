"""Example bots: copy one, change it, play it (docs/bot-authors.md, docs/envs.md)."""

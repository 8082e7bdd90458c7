"""The model layer (DESIGN.md §7, issue 26): a chat model behind one small interface (`Model`), an
OpenAI-compatible endpoint or the calling client's MCP sampling behind it, and JSON answers checked
against a JSON Schema. Below the tools layer: scrape format=json and agent runs use it."""

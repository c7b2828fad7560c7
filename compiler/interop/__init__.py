"""Translations of data only: tool exports for model APIs, and imports of other agents' permission settings."""

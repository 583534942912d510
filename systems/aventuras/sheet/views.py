"""The Hora de Aventuras sheet pages (served at the shared sheet addresses)."""

PAGES: dict = {}

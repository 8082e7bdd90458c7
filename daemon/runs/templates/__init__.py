"""Task templates: the interface (base.py), the registry, and one module per template."""

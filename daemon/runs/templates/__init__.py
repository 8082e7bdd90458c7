"""Task templates: the interface (template_interface.py), the registry, and one module per template."""

"""Widgets as pages draw them: checkboxes, selects, fields, sliders and pickers, drags, overlays, shadow roots."""

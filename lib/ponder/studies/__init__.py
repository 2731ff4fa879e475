"""The papers' studies, a folder each: its run specs and sizes, its analysis, figures and widgets."""

"""Response semantics above the loop (000, 002, 003): prompt sections, scoped tools, payloads,
markers, suggested values and actions, tool history, diagnostics, language guard."""

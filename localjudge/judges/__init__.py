"""Judge models: the registry (models.yaml), loading by name, path or hub id, and the `Judge` itself."""

"""Code shared by the API, the worker and the CLI: settings, models, events, errors."""

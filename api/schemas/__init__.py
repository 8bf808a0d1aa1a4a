"""Request and response shapes, one module per resource: they validate requests AND
generate /openapi.json, so a resource's shape is written once."""

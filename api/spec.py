"""The API's one OpenAPI registry, filled by the route modules' decorators."""
from api.openapi import ApiSpec

spec = ApiSpec("Sunrise", "1.0.0")

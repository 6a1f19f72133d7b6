"""The REST API for bots and game servers (``/api/v1/``): thin views over the services."""

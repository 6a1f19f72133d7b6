"""What the site tells its operators: health and readiness probes, Prometheus metrics, the
workers' heartbeats (docs/operations.md, "Health and readiness" and "Metrics")."""

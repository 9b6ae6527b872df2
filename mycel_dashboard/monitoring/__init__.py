"""What operators' monitoring reads: /metrics (Prometheus), /healthz and /readyz (docs/monitoring.md)."""

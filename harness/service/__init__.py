"""The service layer: the tuned levels served over HTTP and stdio."""

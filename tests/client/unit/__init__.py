"""voicestack-client without Home Assistant: queue, backoff, coalescing, close, CLI."""

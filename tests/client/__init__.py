"""Tests of voicestack-client (client/).

HA-free unit tests are in unit/ (they also run on the satellite's Python 3.11);
the end-to-end tests against a real Home Assistant are
tests/integration/test_client.py.
"""

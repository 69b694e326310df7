"""What can go wrong talking to Home Assistant, as exceptions a caller can tell apart.

Three kinds need different handling: a refused token never gets better by
retrying (``AuthenticationError``), a message Home Assistant refuses never gets
better by resending (``ServiceValidationError``), and a lost or refused
connection does (``ConnectionLostError``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class VoiceStackClientError(Exception):
    """Base class of every error this package raises."""


class AuthenticationError(VoiceStackClientError):
    """Home Assistant refused the access token (``auth_invalid``).

    The client stops instead of retrying: a wrong or revoked token stays wrong,
    and Home Assistant may ban an address that keeps failing to log in.
    """


class ConnectionLostError(VoiceStackClientError):
    """Home Assistant could not be reached, or the connection dropped."""


class ClientClosedError(VoiceStackClientError):
    """``announce`` after ``close``: the client takes no new messages."""


class ServiceCallError(VoiceStackClientError):
    """Home Assistant answered a service call with an error.

    ``code`` is the websocket API's error code (``home_assistant_error``,
    ``not_found``, ...); ``message`` is Home Assistant's own text, already
    translated; the ``translation_*`` fields say which translation it was.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        translation_domain: str | None = None,
        translation_key: str | None = None,
        translation_placeholders: Mapping[str, Any] | None = None,
    ) -> None:
        """Keep Home Assistant's error fields as they came."""
        super().__init__(message)
        self.code = code
        self.message = message
        self.translation_domain = translation_domain
        self.translation_key = translation_key
        self.translation_placeholders = dict(translation_placeholders or {})

    @classmethod
    def from_result(cls, error: Mapping[str, Any]) -> ServiceCallError:
        """The matching subclass for a websocket ``result``'s ``error`` object."""
        code = str(error.get("code", "unknown_error"))
        kind = {
            "service_validation_error": ServiceValidationError,
            "invalid_format": ServiceValidationError,
            "not_found": ServiceNotFoundError,
        }.get(code, ServiceCallError)
        return kind(
            code,
            str(error.get("message", "")),
            translation_domain=error.get("translation_domain"),
            translation_key=error.get("translation_key"),
            translation_placeholders=error.get("translation_placeholders"),
        )


class ServiceValidationError(ServiceCallError):
    """Home Assistant refused the message itself (bad priority, empty message...).

    Sending it again gives the same answer, so the client drops it.
    """


class ServiceNotFoundError(ServiceCallError):
    """``voicestack.announce`` does not exist (yet): VoiceStack is not loaded.

    While Home Assistant starts, its websocket API answers before integrations
    are loaded, so the client treats this like a lost connection and retries.
    """

"""``python -m voicestack_client "message"`` (see ``cli``)."""

from .cli import main

raise SystemExit(main())

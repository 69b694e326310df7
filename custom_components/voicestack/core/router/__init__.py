"""The frame-stack command router (Home Assistant-free).

What every utterance means is decided by a stack of frames (modes), not a flat
if-chain. Modules:

- ``normalize``: matching keys (case, punctuation, number words) and the real-words
  check; content stays verbatim.
- ``rules``: exact set, phrase (prefix/suffix/anywhere), regex, catch-all,
  ``CHECK_PARENT`` and the async LLM ``ClassifierRule``; what an action gets
  (``Hit``) and may do to the stack (``StackControl``).
- ``frames``: ``Frame`` (ordered rules compiled into a shared ``Plan``, own state,
  one timer).
- ``route``: ``Utterance`` in, ``Route`` out (what the voice loop acts on).
- ``stack``: ``FrameStack`` (dispatch, ``Decision`` with its explanation, timers,
  requests).
- ``gather``, ``picker``, ``confirm``, ``builtin``: the built-in frames (base,
  query, dictation, inventory, voice picker, confirm), ``FrameKit`` and
  ``VoiceRouter``, the per-satellite router the glue installs.
- ``targets``, ``hooks``: what the Home Assistant glue provides (agent, to-do list,
  notes file, bus event, deferred queue; shortcuts, voices, listen mode).
- ``vocabulary``, ``replies``, ``sensitive``: user-editable words with validation,
  spoken replies, the confirmation policy.

Wiring, per satellite (the glue)::

    router = VoiceRouter(
        Settings(vocabulary=Vocabulary(options_phrases, options_shortcuts)),
        Hooks(
            agent=AgentTarget(resolve=recognize_entities, policy=ConfirmPolicy()),
            targets={"dictation": NotesFileTarget(notes_path, within=config_dir),
                     "inventory": TodoTarget(add_todo_item)},
            run_shortcut=run_script, list_voices=tts_voices, set_voice=use_voice,
            set_listen_mode=tell_satellite,
        ),
        clock=LoopClock(),
        emit=speak_and_converse,      # timer decisions (silence submits a query)
        name=entry.title,
    )
    route = await router(utterance)   # the voice loop, for every transcript
    entry.async_on_unload(router.close)
"""

from __future__ import annotations

from .builtin import MODES, FrameKit, RouterState, Settings, VoiceRouter
from .frames import Frame, Plan
from .hooks import Hooks, ListenMode, Voice
from .normalize import FILLER, Heard, clean, has_real_words, hear, normalize
from .replies import Replies
from .route import Route, Utterance
from .rules import (
    CHECK_PARENT,
    CatchAllRule,
    ClassifierRule,
    ExactRule,
    Hit,
    Outcome,
    PhraseRule,
    RegexRule,
    Rule,
    StackControl,
)
from .sensitive import ConfirmPolicy, Touched, sensitive_entities
from .stack import Decision, FrameStack, Step
from .targets import (
    AgentTarget,
    Delivery,
    EventTarget,
    NotesFileTarget,
    QueueTarget,
    Submission,
    Target,
    TodoTarget,
)
from .vocabulary import Problem, Vocabulary, VocabularyError

__all__ = [
    "CHECK_PARENT",
    "FILLER",
    "MODES",
    "AgentTarget",
    "CatchAllRule",
    "ClassifierRule",
    "ConfirmPolicy",
    "Decision",
    "Delivery",
    "EventTarget",
    "ExactRule",
    "Frame",
    "FrameKit",
    "FrameStack",
    "Heard",
    "Hit",
    "Hooks",
    "ListenMode",
    "NotesFileTarget",
    "Outcome",
    "PhraseRule",
    "Plan",
    "Problem",
    "QueueTarget",
    "RegexRule",
    "Replies",
    "Route",
    "RouterState",
    "Rule",
    "Settings",
    "StackControl",
    "Step",
    "Submission",
    "Target",
    "TodoTarget",
    "Touched",
    "Utterance",
    "Vocabulary",
    "VocabularyError",
    "Voice",
    "VoiceRouter",
    "clean",
    "has_real_words",
    "hear",
    "normalize",
    "sensitive_entities",
]
